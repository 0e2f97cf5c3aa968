import type { ThreadDiffOutput, WorktreeListOutput, WorktreePruneOutput } from "../contracts/workspaceQueries.js";

/** How `loom threads diff` and `loom worktrees` show results to a person. Pure: each returns text ending in a newline. */

const KIND_LETTER = { added: "A", modified: "M", deleted: "D", renamed: "R" } as const;

/** A per-file stat summary, then the unified diff (which ends with the truncation marker when it was cut). */
export function formatDiff(diff: ThreadDiffOutput): string {
  if (diff.files.length === 0) return "no changes\n";
  const names = diff.files.map((file) => (file.previousPath === null ? file.path : `${file.previousPath} → ${file.path}`));
  const width = Math.max(...names.map((name) => name.length));
  const lines = diff.files.map((file, i) => `${KIND_LETTER[file.kind]} ${names[i]!.padEnd(width)}  ${file.binary ? "binary" : `+${file.additions} -${file.deletions}`}`);
  const added = diff.files.reduce((sum, file) => sum + file.additions, 0);
  const deleted = diff.files.reduce((sum, file) => sum + file.deletions, 0);
  const summary = `${diff.files.length} file${diff.files.length === 1 ? "" : "s"} changed, ${added} insertion${added === 1 ? "" : "s"}(+), ${deleted} deletion${deleted === 1 ? "" : "s"}(-)`;
  const omitted = diff.truncated ? `\n(${diff.omittedFiles.length} file${diff.omittedFiles.length === 1 ? "" : "s"} left out of the patch: ${diff.omittedFiles.join(", ")})` : "";
  return `${lines.join("\n")}\n${summary}${omitted}\n\n${diff.patch}${diff.patch.endsWith("\n") || diff.patch === "" ? "" : "\n"}`;
}

export function formatWorktreeList(result: WorktreeListOutput): string {
  if (result.worktrees.length === 0) return "no Loom-managed worktrees\n";
  const rows = [["STATE", "PROJECT", "BRANCH", "THREAD", "PATH"], ...result.worktrees.map((w) => [w.state, w.projectId, w.branch ?? "-", w.threadId ?? "-", w.path])];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  return `${rows.map((row) => row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]!))).join("  ")).join("\n")}\n`;
}

export function formatPrune(result: WorktreePruneOutput): string {
  const lines = [
    ...result.removed.map((r) => `removed ${r.path} (thread ${r.threadId}${r.checkpointId === null ? "" : `, last state kept as checkpoint ${r.checkpointId}`})`),
    ...result.forgotten.map((f) => `forgot ${f.path} (its folder was gone)`),
    ...result.kept.map((k) => `kept ${k.path} (thread ${k.threadId}): ${k.reason}`),
  ];
  return lines.length === 0 ? "nothing to prune\n" : `${lines.join("\n")}\n`;
}
