import { type MergeQueueEntry, MergeQueueStatus, isOpenMergeStatus } from "../../contracts/entities/mergeQueue.js";
import type { MergeQueueEntryView, MergeQueueInput, MergeQueueOutput } from "../../contracts/tools/mergeQueueTools.js";
import type { AppThread } from "../../contracts/thread.js";
import type { MergeIntoParentInput } from "../../contracts/workspaceQueries.js";
import { joinId } from "../../core/ids.js";
import { mergeQueueOf } from "../../core/workspace/mergeQueue.js";
import { type Caller, resolveCaller } from "../caller.js";
import { type AppContext, execute, freshUuid } from "../context.js";
import { AppError, fail } from "../errors.js";
import { childAndParent, requireIdle } from "./mergeChild.js";
import { handedToResolver, resolverOf } from "./resolver.js";
import { requireOwner } from "./worktrees.js";

/**
 * The merge queue's app functions (docs/workspaces.md, "The merge queue"):
 * queue a worktree child's branch (the owner), list a parent's queue, cancel
 * a queued entry (the owner), and wait for an entry to end.
 */

/** Queue a worktree child's branch for a merge into its parent (the owner; neither thread may have a run going). */
export async function enqueueMerge(ctx: AppContext, caller: Caller, input: MergeIntoParentInput): Promise<MergeQueueEntry> {
  requireOwner(caller, "merging a worktree");
  const { child, parent } = childAndParent(ctx, input.threadId);
  requireIdle(ctx, [child, parent]);
  const resolver = await resolverOf(ctx, caller, parent, input);
  const entryId = joinId("merge", parent.id, child.id, freshUuid(ctx));
  await execute(ctx, {
    type: "merge-queue.enqueue",
    commandId: joinId("cmd", entryId),
    data: {
      parentThreadId: parent.id,
      entryId,
      childThreadId: child.id,
      onRefused: input.onRefused ?? "report",
      ...(resolver === null ? {} : { resolver }),
      commitChild: input.commitChild ?? true,
      message: input.message ?? null,
    },
  });
  return ctx.orchestrator.state.mergeQueueEntries.get(entryId) ?? fail("orchestration_error", `merge queue entry ${entryId} was not recorded`);
}

/**
 * t3_thread_merge_back of a worktree child: its branch is queued in its
 * parent's merge queue (the caller was allowed to change the parent). Called
 * from a run still going, the entry waits until neither thread has a run,
 * then merges as any other (a refusal is recorded on the entry). A branch
 * already open in the queue is answered with its entry. Null for a thread
 * without a worktree of its own.
 */
export async function enqueueWhenIdle(ctx: AppContext, child: AppThread): Promise<{ entryId: string; status: MergeQueueEntry["status"] } | null> {
  const parentId = child.lineage.parentThreadId;
  if (child.workspace?.strategy !== "worktree" || child.worktreePath === null || parentId === null) return null;
  const open = mergeQueueOf(ctx.orchestrator.state, parentId).find((entry) => entry.childThreadId === child.id && isOpenMergeStatus(entry.status));
  if (open !== undefined) return { entryId: open.entryId, status: open.status };
  const entryId = joinId("merge", parentId, child.id, freshUuid(ctx));
  await execute(ctx, {
    type: "merge-queue.enqueue",
    commandId: joinId("cmd", entryId),
    data: { parentThreadId: parentId, entryId, childThreadId: child.id, onRefused: "report", commitChild: true, message: null, waitForIdle: true },
  });
  const entry = ctx.orchestrator.state.mergeQueueEntries.get(entryId) ?? fail("orchestration_error", `merge queue entry ${entryId} was not recorded`);
  return { entryId, status: entry.status };
}

/** Ended entries listed without a parent: the newest. */
export const LISTED_ENDED_ENTRIES = 50;

/** t3_merge_queue, GET and POST .../merge-queue, `loom merges`: list a parent's queue (or every parent's), or cancel a queued entry. */
export async function mergeQueue(ctx: AppContext, caller: Caller, input: MergeQueueInput): Promise<MergeQueueOutput> {
  const state = ctx.orchestrator.state;
  resolveCaller(state, caller, "t3_merge_queue");
  if (input.threadId === undefined) {
    if (input.action === "cancel" || input.entryId !== undefined) fail("invalid_request", "threadId is required to cancel an entry");
    const all = [...state.mergeQueueEntries.values()];
    const open = all.filter((entry) => isOpenMergeStatus(entry.status));
    const ended = input.includeEnded === false ? [] : all.filter((entry) => !isOpenMergeStatus(entry.status)).slice(-LISTED_ENDED_ENTRIES);
    const listed = new Set([...open, ...ended]);
    return { threadId: null, entries: all.filter((entry) => listed.has(entry)).map(entryView), open: open.length };
  }
  const parent = state.threads.get(input.threadId);
  if (parent === undefined) fail("thread_not_found", `thread ${input.threadId} does not exist`);
  if ((input.action ?? "list") === "cancel") {
    requireOwner(caller, "cancelling a merge");
    const entryId = input.entryId ?? fail("invalid_request", "entryId is required to cancel an entry");
    await execute(ctx, { type: "merge-queue.cancel", commandId: joinId("cmd", "merge-queue-cancel", entryId), data: { parentThreadId: parent.id, entryId } });
  } else if (input.entryId !== undefined) {
    fail("invalid_request", "entryId is only for action cancel");
  }
  const entries = mergeQueueOf(ctx.orchestrator.state, parent.id);
  const open = entries.filter((entry) => isOpenMergeStatus(entry.status)).length;
  return { threadId: parent.id, entries: (input.includeEnded === false ? entries.filter((entry) => isOpenMergeStatus(entry.status)) : entries).map(entryView), open };
}

/** Resolves with the entry once it has ended (merged, refused, cancelled) or waits on its resolver, read from the log as it commits. */
export function mergeEnded(ctx: Pick<AppContext, "orchestrator">, entryId: string): Promise<MergeQueueEntry> {
  const ended = (): MergeQueueEntry | null => {
    const entry = ctx.orchestrator.state.mergeQueueEntries.get(entryId);
    return entry !== undefined && (!isOpenMergeStatus(entry.status) || entry.status === MergeQueueStatus.resolving) ? entry : null;
  };
  const now = ended();
  if (now !== null) return Promise.resolve(now);
  return new Promise((resolve) => {
    const subscription = ctx.orchestrator.follow(ctx.orchestrator.state.lastSequence, (event) => {
      if (event.type !== "merge-queue.entry-updated") return;
      const entry = ended();
      if (entry === null) return;
      subscription.close();
      resolve(entry);
    });
  });
}

/** An ended entry as merge-into-parent answers it: its result, or its refusal as the AppError the merge threw. */
export function answerOf(entry: MergeQueueEntry): NonNullable<MergeQueueEntry["result"]> {
  if (entry.status === MergeQueueStatus.resolving && entry.resolution != null) return handedToResolver(entry, entry.resolution);
  if (entry.result !== null && (entry.status === MergeQueueStatus.merged || entry.status === MergeQueueStatus.returnedToChild)) return entry.result;
  if (entry.status === MergeQueueStatus.cancelled) fail("invalid_request", `merge queue entry ${entry.entryId} was cancelled`);
  const failure = entry.failure ?? { code: "orchestration_error", message: `merge queue entry ${entry.entryId} ended ${entry.status} without a reason`, workspaceCode: null, files: [], check: null };
  const details = {
    entryId: entry.entryId,
    ...(failure.workspaceCode === null ? {} : { workspaceCode: failure.workspaceCode }),
    ...(failure.files.length > 0 ? { files: failure.files } : {}),
    ...(failure.check === null ? {} : { check: failure.check }),
  };
  throw new AppError(failure.code, failure.message, { details });
}

/** An entry as the queue is listed (t3_merge_queue, HTTP, CLI). */
export function entryView(entry: MergeQueueEntry): MergeQueueEntryView {
  const { result, failure } = entry;
  return {
    entryId: entry.entryId,
    parentThreadId: entry.parentThreadId,
    childThreadId: entry.childThreadId,
    status: entry.status,
    onRefused: entry.onRefused,
    enqueuedAt: entry.enqueuedAt,
    startedAt: entry.startedAt,
    endedAt: entry.endedAt,
    attempts: entry.attempts,
    outcome: result?.outcome ?? null,
    commit: result?.commit ?? null,
    files: failure !== null ? failure.files : (result?.files.map((file) => file.path) ?? []),
    workspaceCode: failure?.workspaceCode ?? null,
    reason: failure?.message ?? null,
    check: failure?.check ?? result?.check ?? null,
    childRunId: result?.returnedToChild?.runId ?? null,
    resolverThreadId: entry.resolution?.threadId ?? null,
    resolverStatus: entry.resolution?.status ?? null,
    log: entry.log,
  };
}
