import { parseArgs } from "node:util";
import type { MergeQueueEntryView, MergeQueueOutput } from "../contracts/tools/mergeQueueTools.js";
import { UsageError } from "./errors.js";
import { formatJson } from "./output.js";
import { OwnerApi } from "./ownerApi.js";

export const MERGES_USAGE = `  loom merges [PARENT] [--open] [--json]
  loom merges PARENT --cancel ENTRY [--json]`;

export const MERGES_HELP = `Usage:
${MERGES_USAGE}

The merge queues of the running server (docs/workspaces.md, "The merge
queue"): worktree children's branches merged into their parent one at a time.
PARENT lists that parent thread's queue; without it, every parent's open
entries and the latest ended ones. Each entry: its id, child thread, status
(queued, merging, merged, returned_to_child, conflict, check_failed, failed,
cancelled) and its log.

  --open          only entries queued or merging
  --cancel ENTRY  take a queued entry out of PARENT's queue
  --json          the answer as JSON
  --state-dir DIR default $LOOM_STATE_DIR, else ~/.loom
`;

type Output = (text: string) => void;

/** `loom merges [PARENT]`; resolves with the exit code. */
export async function runMerges(argv: readonly string[], out: Output = (t) => process.stdout.write(t)): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: { "state-dir": { type: "string" }, json: { type: "boolean" }, open: { type: "boolean" }, cancel: { type: "string" }, help: { type: "boolean", short: "h" } },
    allowPositionals: true,
  });
  if (values.help === true || positionals[0] === "help") {
    out(MERGES_HELP);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`loom merges takes at most one parent thread, got ${positionals.map((p) => JSON.stringify(p)).join(" ")}`);
  const parent = positionals[0];
  if (values.cancel !== undefined && parent === undefined) throw new UsageError("loom merges --cancel needs the PARENT thread whose queue holds the entry");
  const api = OwnerApi.connect(values["state-dir"]);
  const query = values.open === true ? "?includeEnded=false" : "";
  const answer =
    parent === undefined
      ? await api.get<MergeQueueOutput>(`/api/workspaces/merge-queue${query}`)
      : values.cancel === undefined
        ? await api.get<MergeQueueOutput>(`/api/orchestration/threads/${encodeURIComponent(parent)}/merge-queue${query}`)
        : await api.post<MergeQueueOutput>(`/api/orchestration/threads/${encodeURIComponent(parent)}/merge-queue`, { action: "cancel", entryId: values.cancel });
  out(values.json === true ? formatJson(answer) : formatMergeQueue(answer));
  return 0;
}

export function formatMergeQueue(answer: MergeQueueOutput): string {
  if (answer.entries.length === 0) return answer.threadId === null ? "No merges queued.\n" : `No merges queued into ${answer.threadId}.\n`;
  const lines: string[] = [];
  for (const entry of answer.entries) {
    lines.push(`${entry.entryId}  ${entry.status}  ${entry.childThreadId} -> ${entry.parentThreadId}${detailOf(entry)}`);
    for (const line of entry.log) lines.push(`    ${line}`);
  }
  lines.push(`${answer.open} open`);
  return `${lines.join("\n")}\n`;
}

function detailOf(entry: MergeQueueEntryView): string {
  const resolver = entry.resolverThreadId === null ? "" : `  resolver ${entry.resolverThreadId} ${entry.resolverStatus ?? "?"}`;
  if (entry.status === "merged") return `  ${entry.outcome ?? "?"} ${entry.commit?.slice(0, 12) ?? ""}${resolver}`;
  if (entry.workspaceCode !== null) return `  ${entry.workspaceCode}${entry.files.length > 0 ? `: ${entry.files.join(", ")}` : ""}${resolver}`;
  return resolver;
}
