import { parseArgs } from "node:util";
import type { WorktreeListOutput, WorktreePruneOutput } from "../contracts/workspaceQueries.js";
import { UsageError } from "./errors.js";
import { formatJson } from "./output.js";
import { OwnerApi } from "./ownerApi.js";
import { formatPrune, formatWorktreeList } from "./workspaceOutput.js";

export const WORKTREES_USAGE = `  loom worktrees list [--json]
  loom worktrees prune [--json]`;

export const WORKTREES_HELP = `Usage:
${WORKTREES_USAGE}

The Loom-managed git worktrees of the running server's projects (threads
launched with workspaceStrategy worktree, delegate_task isolation worktree).
Both take --state-dir DIR (default $LOOM_STATE_DIR, else ~/.loom).

  list     every managed worktree: its project, branch, thread and state
           (live, deleted: its thread was deleted, unknown: no thread of this
           state dir made it, missing: its folder is gone).
  prune    remove the worktrees of deleted threads (each keeps its last state
           as a checkpoint ref first) and forget those whose folder is gone.
           Worktrees of live and unknown threads are left alone.
`;

type Output = (text: string) => void;

/** `loom worktrees <list|prune>`; resolves with the exit code. */
export async function runWorktrees(argv: readonly string[], out: Output = (t) => process.stdout.write(t)): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError("loom worktrees needs a command: list or prune (see loom worktrees --help)");
  if (sub === "--help" || sub === "-h" || sub === "help") {
    out(WORKTREES_HELP);
    return 0;
  }
  if (sub !== "list" && sub !== "prune") throw new UsageError(`unknown worktrees command "${sub}" (see loom worktrees --help)`);
  const { values, positionals } = parseArgs({
    args: [...rest],
    options: { "state-dir": { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    allowPositionals: true,
  });
  if (values.help === true) {
    out(WORKTREES_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`loom worktrees ${sub} takes no arguments, got ${positionals.map((p) => JSON.stringify(p)).join(" ")}`);
  const api = OwnerApi.connect(values["state-dir"]);
  if (sub === "list") {
    const listed = await api.get<WorktreeListOutput>("/api/workspaces/worktrees");
    out(values.json === true ? formatJson(listed) : formatWorktreeList(listed));
  } else {
    const pruned = await api.post<WorktreePruneOutput>("/api/workspaces/worktrees/prune");
    out(values.json === true ? formatJson(pruned) : formatPrune(pruned));
  }
  return 0;
}
