import type { Checkpoint, CheckpointScope } from "../../contracts/entities/checkpoints.js";
import type { AppThread } from "../../contracts/thread.js";
import type { FullThreadDiffInput, ThreadCheckpointsOutput, ThreadDiffOutput, TurnDiffInput } from "../../contracts/workspaceQueries.js";
import type { OrchestrationState } from "../../core/state.js";
import { type WorkspaceDiff, diffCheckpoints, diffWorkspaceSince } from "../../workspaces/diffs.js";
import { probeWorkingTree } from "../../workspaces/repository.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { asAppFailure } from "./failures.js";
import { privateIndexDir } from "./paths.js";

/**
 * Diffs of a thread's work (spec 004 getTurnDiff / getFullThreadDiff): one
 * turn, from the checkpoint taken before it to the one taken after it (or to
 * the working tree now while the turn runs), and the whole thread, from its
 * scope's first checkpoint to the working tree now. Unified diff text plus
 * per-file stats, bounded by `maxBytes` with a truncation marker.
 */

export async function getTurnDiff(ctx: AppContext, _caller: Caller, input: TurnDiffInput): Promise<ThreadDiffOutput> {
  const state = ctx.orchestrator.state;
  const thread = liveThread(state, input.threadId);
  const checkpoints = threadCheckpoints(state, thread.id);
  const runId = input.runId ?? [...checkpoints].reverse().find((checkpoint) => checkpoint.trigger === "turn_start")?.runId ?? null;
  if (runId === null) fail("workspace_unavailable", `thread ${thread.id} has no turn with a checkpoint (checkpoints are taken when a turn starts)`);
  const run = state.runs.get(runId);
  if (run === undefined || run.threadId !== thread.id) fail("run_not_found", `run ${runId} does not exist in thread ${thread.id}`);
  const before = checkpoints.find((checkpoint) => checkpoint.runId === runId && checkpoint.trigger === "turn_start");
  if (before === undefined) fail("workspace_unavailable", `run ${runId} has no checkpoint from before its turn (its turn never started, or checkpoints were off)`);
  const from = snapshotOf(before);
  const scope = scopeOf(state, before);
  const after = checkpoints.find((checkpoint) => checkpoint.runId === runId && checkpoint.trigger === "turn_end");
  const limits = input.maxBytes === undefined ? {} : { maxBytes: input.maxBytes };
  if (after !== undefined) {
    const to = snapshotOf(after);
    const diff = await asAppFailure(() => diffCheckpoints({ workspacePath: scope.workspacePath, from, to, ...limits }));
    return view(thread.id, runId, before, after, diff);
  }
  // The turn is running, or it ended and its checkpoint is still being captured: diff to the working tree now.
  const diff = await diffToNow(scope, from, limits);
  return view(thread.id, runId, before, null, diff);
}

export async function getFullThreadDiff(ctx: AppContext, _caller: Caller, input: FullThreadDiffInput): Promise<ThreadDiffOutput> {
  const state = ctx.orchestrator.state;
  const thread = liveThread(state, input.threadId);
  const checkpoints = threadCheckpoints(state, thread.id);
  const latest = checkpoints.at(-1);
  if (latest === undefined) fail("workspace_unavailable", `thread ${thread.id} has no checkpoint yet`);
  const scope = scopeOf(state, latest);
  const first = checkpoints.find((checkpoint) => checkpoint.scopeId === scope.id && checkpoint.commit !== null && checkpoint.commit !== undefined);
  if (first === undefined) fail("workspace_unavailable", `thread ${thread.id} has no snapshot to diff from: ${latest.reason ?? `its checkpoints are ${latest.status}`}`);
  const diff = await diffToNow(scope, snapshotOf(first), input.maxBytes === undefined ? {} : { maxBytes: input.maxBytes });
  return { ...view(thread.id, null, first, null, diff), childWork: childWork(state, thread) };
}

/** The thread's delegated children working in worktrees of their own: their changes are on their branches, not in this diff. */
function childWork(state: OrchestrationState, thread: AppThread): NonNullable<ThreadDiffOutput["childWork"]> {
  const found: NonNullable<ThreadDiffOutput["childWork"]> = [];
  for (const task of state.tasks.values()) {
    if (task.parentThreadId !== thread.id) continue;
    const child = state.threads.get(task.childThreadId);
    if (child === undefined || child.deletedAt !== null || child.worktreePath === null || child.worktreePath === thread.worktreePath) continue;
    const paths = new Set(threadCheckpoints(state, child.id).flatMap((checkpoint) => checkpoint.files.map((file) => file.path)));
    found.push({ threadId: child.id, title: child.title, branch: child.branch, files: paths.size });
  }
  return found;
}

/** A thread's checkpoints, oldest first (the ones of deleted threads included for history). */
export function listThreadCheckpoints(ctx: AppContext, _caller: Caller, threadId: string): ThreadCheckpointsOutput {
  const state = ctx.orchestrator.state;
  if (!state.threads.has(threadId)) fail("thread_not_found", `thread ${threadId} does not exist`);
  return { threadId, checkpoints: threadCheckpoints(state, threadId) };
}

async function diffToNow(scope: CheckpointScope, from: string, limits: { maxBytes?: number }): Promise<WorkspaceDiff> {
  const probe = await probeWorkingTree(scope.workspacePath);
  if (probe.tree === null) fail("workspace_unavailable", `the workspace ${scope.workspacePath} cannot be read: ${probe.reason}`);
  const indexDir = privateIndexDir(probe.tree.commonDir);
  return asAppFailure(() => diffWorkspaceSince({ workspacePath: scope.workspacePath, scopeId: scope.id, indexDir, from, ...limits }));
}

function threadCheckpoints(state: OrchestrationState, threadId: string): Checkpoint[] {
  const found: Checkpoint[] = [];
  for (const scope of state.checkpointScopes.values()) {
    if (scope.threadId !== threadId) continue;
    for (const id of state.scopeCheckpoints.get(scope.id) ?? []) found.push(state.checkpoints.get(id)!);
  }
  return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.ordinalWithinScope - b.ordinalWithinScope);
}

/** The commit a checkpoint names; one that never held a snapshot (missing, error) cannot be diffed. */
function snapshotOf(checkpoint: Checkpoint): string {
  const commit = checkpoint.commit ?? null;
  if (commit === null) fail("workspace_unavailable", `checkpoint #${checkpoint.ordinalWithinScope} is ${checkpoint.status}: ${checkpoint.reason ?? "it holds no snapshot"}`);
  return commit;
}

function scopeOf(state: OrchestrationState, checkpoint: Checkpoint): CheckpointScope {
  return state.checkpointScopes.get(checkpoint.scopeId) ?? fail("orchestration_error", `checkpoint scope ${checkpoint.scopeId} is not recorded`);
}

function liveThread(state: OrchestrationState, threadId: string): AppThread {
  const thread = state.threads.get(threadId);
  if (thread === undefined || thread.deletedAt !== null) fail("thread_not_found", `thread ${threadId} does not exist`);
  return thread;
}

function view(threadId: string, runId: string | null, from: Checkpoint, to: Checkpoint | null, diff: WorkspaceDiff): ThreadDiffOutput {
  return {
    threadId,
    runId,
    fromCheckpointId: from.id,
    toCheckpointId: to?.id ?? null,
    fromCommit: diff.fromCommit,
    toCommit: diff.toCommit,
    files: diff.files,
    patch: diff.patch,
    truncated: diff.truncated,
    omittedFiles: diff.omittedFiles,
  };
}
