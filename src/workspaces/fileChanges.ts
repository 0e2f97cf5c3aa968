import { type CheckpointFile, FileChangeKind } from "../contracts/entities/checkpoints.js";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";
import { git, splitNul } from "./git.js";

/**
 * Per-file change lists between two trees, in the contract's CheckpointFile
 * shape: one `git diff-tree -r -M --raw --numstat -z` call, whose output is
 * every raw record (status letter, paths) followed by every numstat record
 * (line counts, `-` for binary) in the same order.
 */

/** The diff options every tree comparison here shares, so stats and patches list files in the same order. */
export const TREE_DIFF_OPTIONS = ["-r", "-M", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none"] as const;

export async function changedFiles(cwd: string, fromTree: string, toTree: string): Promise<CheckpointFile[]> {
  if (fromTree === toTree) return [];
  const result = await git(["diff-tree", ...TREE_DIFF_OPTIONS, "--raw", "--numstat", "-z", fromTree, toTree], { cwd });
  return parseRawNumstat(splitNul(result.stdout));
}

interface RawRecord {
  readonly kind: FileChangeKind;
  readonly path: string;
  readonly previousPath: string | null;
}

/** Parse the NUL-split fields of `--raw --numstat -z` output. */
export function parseRawNumstat(fields: readonly string[]): CheckpointFile[] {
  const raws: RawRecord[] = [];
  let i = 0;
  while (i < fields.length && fields[i]!.startsWith(":")) {
    const status = fields[i]!.split(" ").at(-1) ?? "";
    const letter = status.charAt(0);
    if (letter === "R" || letter === "C") {
      const previousPath = field(fields, i + 1);
      const path = field(fields, i + 2);
      raws.push(letter === "R" ? { kind: FileChangeKind.renamed, path, previousPath } : { kind: FileChangeKind.added, path, previousPath: null });
      i += 3;
    } else {
      raws.push({ kind: kindOfLetter(letter), path: field(fields, i + 1), previousPath: null });
      i += 2;
    }
  }
  const files: CheckpointFile[] = [];
  for (const raw of raws) {
    const counts = field(fields, i);
    const [added, deleted] = counts.split("\t");
    // A rename's numstat record has an empty path field followed by the two paths.
    i += raw.kind === FileChangeKind.renamed || counts.endsWith("\t") ? 3 : 1;
    const binary = added === "-" && deleted === "-";
    files.push({
      path: raw.path,
      previousPath: raw.previousPath,
      kind: raw.kind,
      additions: binary ? 0 : Number(added),
      deletions: binary ? 0 : Number(deleted),
      binary,
    });
  }
  return files;
}

function kindOfLetter(letter: string): FileChangeKind {
  switch (letter) {
    case "A":
      return FileChangeKind.added;
    case "D":
      return FileChangeKind.deleted;
    case "M":
    case "T":
      return FileChangeKind.modified;
    default:
      throw new WorkspaceError(WorkspaceErrorCode.gitFailed, `unexpected diff status ${JSON.stringify(letter)} in git diff-tree output`);
  }
}

function field(fields: readonly string[], index: number): string {
  const value = fields[index];
  if (value === undefined) throw new WorkspaceError(WorkspaceErrorCode.gitFailed, "truncated git diff-tree output");
  return value;
}
