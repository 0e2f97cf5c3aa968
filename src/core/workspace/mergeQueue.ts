import type {
  MergeQueueCancelCommand,
  MergeQueueEnqueueCommand,
  MergeQueueFinishCommand,
  MergeQueueReadyCommand,
  MergeQueueStartCommand,
} from "../../contracts/commands/mergeQueueCommands.js";
import { EFFECTS, EffectKind } from "../../contracts/effects.js";
import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type { NewOutboxEffect } from "../../contracts/envelopes.js";
import { type MergeQueueEntry, MergeQueueStatus, isOpenMergeStatus, isPendingMergeStatus } from "../../contracts/entities/mergeQueue.js";
import { mergeQueueEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, type Rejected, accept, reject } from "../decision.js";
import { joinId } from "../ids.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";

/**
 * The merge queue of a parent workspace (docs/workspaces.md, "The merge
 * queue"): worktree children's branches merged into their parent one at a
 * time, in the order they were queued. The queue's head has exactly one
 * `merge-queue.merge` effect, on the parent's queue stream: enqueueing into
 * an idle queue emits it, and ending or cancelling the head emits the next
 * one's. An entry begun and cut short (a restart) stays `merging`; its
 * effect is replayed and `merge-queue.start` begins it again.
 */

/** The outbox stream the parent's queue effects run on, one at a time and apart from the parent thread's own effects. */
export function mergeQueueStream(parentThreadId: string): string {
  return joinId("merge-queue", parentThreadId);
}

/** The parent's entries in the order they were queued. */
export function mergeQueueOf(state: OrchestrationState, parentThreadId: string): MergeQueueEntry[] {
  return [...state.mergeQueueEntries.values()].filter((entry) => entry.parentThreadId === parentThreadId);
}

export function decideMergeQueueEnqueue(state: OrchestrationState, command: MergeQueueEnqueueCommand, ctx: DecideContext): Decision {
  const { parentThreadId, entryId, childThreadId } = command.data;
  const existing = state.mergeQueueEntries.get(entryId);
  if (existing !== undefined) {
    if (existing.parentThreadId === parentThreadId && existing.childThreadId === childThreadId) return accept([]);
    return reject(RejectionCode.mergeAlreadyQueued, `merge queue entry ${entryId} already exists for another child`);
  }
  const parent = liveThread(state, parentThreadId);
  if (parent.kind === "rejected") return parent;
  const child = liveThread(state, childThreadId);
  if (child.kind === "rejected") return child;
  if (child.thread.lineage.parentThreadId !== parentThreadId) return reject(RejectionCode.mergeNotQueueable, `thread ${childThreadId} is not a child of thread ${parentThreadId}`);
  if (child.thread.workspace?.strategy !== "worktree" || child.thread.worktreePath === null) {
    return reject(RejectionCode.mergeNotQueueable, `thread ${childThreadId} has no worktree of its own to merge`);
  }
  const queue = mergeQueueOf(state, parentThreadId);
  const open = queue.find((entry) => entry.childThreadId === childThreadId && isOpenMergeStatus(entry.status));
  if (open !== undefined) return reject(RejectionCode.mergeAlreadyQueued, `thread ${childThreadId} is already ${open.status} in its parent's merge queue (entry ${open.entryId})`);
  const resolver = command.data.resolver ?? null;
  if ((command.data.onRefused === "resolver") !== (resolver !== null)) return reject(RejectionCode.mergeNotQueueable, "a resolver is given with onRefused resolver, and only then");
  const entry: MergeQueueEntry = {
    entryId,
    parentThreadId,
    childThreadId,
    status: MergeQueueStatus.queued,
    onRefused: command.data.onRefused,
    resolver,
    resolution: null,
    ...(command.data.waitForIdle === true ? { waitForIdle: true } : {}),
    commitChild: command.data.commitChild,
    message: command.data.message,
    enqueuedAt: ctx.now,
    startedAt: null,
    endedAt: null,
    attempts: 0,
    result: null,
    failure: null,
    log: [`${ctx.now} queued`],
  };
  if (command.data.waitForIdle === true && (busy(state, parentThreadId) || busy(state, childThreadId))) {
    return accept([mergeQueueEvent({ ...entry, status: MergeQueueStatus.waitingForIdle, log: [`${ctx.now} waiting for both threads to be idle`] })]);
  }
  const idle = !queue.some((other) => isPendingMergeStatus(other.status));
  return accept([mergeQueueEvent(entry)], idle ? [mergeEffect(entry)] : []);
}

/** An entry waiting for idle threads joins the queue once neither thread has a run going or queued. */
export function decideMergeQueueReady(state: OrchestrationState, command: MergeQueueReadyCommand, ctx: DecideContext): Decision {
  const found = entryOf(state, command.data.parentThreadId, command.data.entryId);
  if (found.kind === "rejected") return found;
  const { entry } = found;
  if (entry.status !== MergeQueueStatus.waitingForIdle) return reject(RejectionCode.mergeEntryNotOpen, `merge queue entry ${entry.entryId} is ${entry.status}: it does not wait for idle threads`);
  const working = [entry.parentThreadId, entry.childThreadId].find((threadId) => busy(state, threadId));
  if (working !== undefined) return reject(RejectionCode.mergeEntryNotOpen, `thread ${working} still has a run going or queued`);
  const queued: MergeQueueEntry = { ...entry, status: MergeQueueStatus.queued, log: [...entry.log, `${ctx.now} queued: both threads are idle`] };
  const idle = !mergeQueueOf(state, entry.parentThreadId).some((other) => isPendingMergeStatus(other.status));
  return accept([mergeQueueEvent(queued)], idle ? [mergeEffect(queued)] : []);
}

/**
 * A run of the thread is going or waiting to start (a merge would take its
 * branch, or move its files, under it), or the thread is a delegated child
 * whose result has yet to reach its parent (the parent's run for it is still to come).
 */
export function busy(state: OrchestrationState, threadId: string): boolean {
  const running = (state.threadRuns.get(threadId) ?? []).some((runId) => {
    const status = state.runs.get(runId)?.status;
    return status !== undefined && !isTerminalRunStatus(status);
  });
  if (running) return true;
  const taskId = state.taskByChildThread.get(threadId);
  const task = taskId === undefined ? undefined : state.tasks.get(taskId);
  return task?.wakePolicy === "on_completion" && (task.completionDelivery === "not_ready" || task.completionDelivery === "pending");
}

/** Only a queued entry is cancelled; the next one's merge begins when it was the head. */
export function decideMergeQueueCancel(state: OrchestrationState, command: MergeQueueCancelCommand, ctx: DecideContext): Decision {
  const found = entryOf(state, command.data.parentThreadId, command.data.entryId);
  if (found.kind === "rejected") return found;
  const { entry } = found;
  if (entry.status !== MergeQueueStatus.queued && entry.status !== MergeQueueStatus.waitingForIdle) {
    return reject(RejectionCode.mergeEntryNotOpen, `merge queue entry ${entry.entryId} is ${entry.status}: only a queued (or waiting) entry can be cancelled`);
  }
  const cancelled: MergeQueueEntry = { ...entry, status: MergeQueueStatus.cancelled, endedAt: ctx.now, log: [...entry.log, `${ctx.now} cancelled`] };
  const wasHead = headOf(state, entry.parentThreadId)?.entryId === entry.entryId;
  const next = wasHead ? nextQueued(state, entry.parentThreadId, entry.entryId) : undefined;
  return accept([mergeQueueEvent(cancelled)], next === undefined ? [] : [mergeEffect(next)]);
}

/** The head begins merging: once, or again after an attempt cut short. */
export function decideMergeQueueStart(state: OrchestrationState, command: MergeQueueStartCommand, ctx: DecideContext): Decision {
  const found = entryOf(state, command.data.parentThreadId, command.data.entryId);
  if (found.kind === "rejected") return found;
  const { entry } = found;
  if (entry.status !== MergeQueueStatus.queued && entry.status !== MergeQueueStatus.merging) {
    return reject(RejectionCode.mergeEntryNotOpen, `merge queue entry ${entry.entryId} is ${entry.status}: it is not waiting to be merged`);
  }
  const head = headOf(state, entry.parentThreadId);
  if (head?.entryId !== entry.entryId) return reject(RejectionCode.mergeEntryNotOpen, `merge queue entry ${entry.entryId} is not at the head of its queue (${head?.entryId ?? "none"} is)`);
  const working = entry.waitForIdle === true && entry.status === MergeQueueStatus.queued ? [entry.parentThreadId, entry.childThreadId].find((threadId) => busy(state, threadId)) : undefined;
  if (working !== undefined) {
    // A run began since the entry joined the queue: it waits again, and the queue moves on.
    const waiting: MergeQueueEntry = { ...entry, status: MergeQueueStatus.waitingForIdle, log: [...entry.log, `${ctx.now} thread ${working} has a run again: waiting for both threads to be idle`] };
    const next = nextQueued(state, entry.parentThreadId, entry.entryId);
    return accept([mergeQueueEvent(waiting)], next === undefined ? [] : [mergeEffect(next)]);
  }
  const again = entry.status === MergeQueueStatus.merging;
  const line = again ? `${ctx.now} merging again (attempt ${entry.attempts + 1}): the previous attempt did not end` : `${ctx.now} merging`;
  const started: MergeQueueEntry = { ...entry, status: MergeQueueStatus.merging, startedAt: entry.startedAt ?? ctx.now, attempts: entry.attempts + 1, log: [...entry.log, line] };
  return accept([mergeQueueEvent(started)]);
}

/** How the merge ended; the next queued entry's merge begins. */
export function decideMergeQueueFinish(state: OrchestrationState, command: MergeQueueFinishCommand, ctx: DecideContext): Decision {
  const found = entryOf(state, command.data.parentThreadId, command.data.entryId);
  if (found.kind === "rejected") return found;
  const { entry } = found;
  if (entry.status !== MergeQueueStatus.merging) return reject(RejectionCode.mergeEntryNotOpen, `merge queue entry ${entry.entryId} is ${entry.status}: only a merging entry ends`);
  const { status, result, failure } = command.data;
  const ended: MergeQueueEntry = { ...entry, status, result, failure, endedAt: ctx.now, log: [...entry.log, `${ctx.now} ${outcomeLine(command.data)}`] };
  const next = nextQueued(state, entry.parentThreadId, entry.entryId);
  return accept([mergeQueueEvent(ended)], next === undefined ? [] : [mergeEffect(next)]);
}

function outcomeLine({ status, result, failure }: MergeQueueFinishCommand["data"]): string {
  switch (status) {
    case MergeQueueStatus.merged:
      return `merged (${result?.outcome ?? "?"}${result === null ? "" : `, parent at ${result.commit}`})`;
    case MergeQueueStatus.returnedToChild:
      return `returned to the child (${failure?.workspaceCode ?? "refused"}${result?.returnedToChild?.runId == null ? "" : `, run ${result.returnedToChild.runId}`})`;
    case MergeQueueStatus.conflict:
      return `conflict in ${failure?.files.join(", ") ?? "?"}`;
    case MergeQueueStatus.checkFailed:
      return `check failed: \`${failure?.check?.command ?? "?"}\` ${failure?.check?.outcome === "timed_out" ? "timed out" : `exited with ${failure?.check?.exitCode ?? "a signal"}`}`;
    case MergeQueueStatus.failed:
      return `refused: ${failure?.code ?? "?"}: ${failure?.message ?? ""}`;
    default: {
      const exhaustive: never = status;
      return exhaustive;
    }
  }
}

export function entryOf(state: OrchestrationState, parentThreadId: string, entryId: string): { kind: "found"; entry: MergeQueueEntry } | Rejected {
  const entry = state.mergeQueueEntries.get(entryId);
  if (entry === undefined || entry.parentThreadId !== parentThreadId) return reject(RejectionCode.mergeEntryNotFound, `thread ${parentThreadId} has no merge queue entry ${entryId}`);
  return { kind: "found", entry };
}

/** The entry the queue works on: the one merging or waiting on its resolver, else the oldest queued. */
export function headOf(state: OrchestrationState, parentThreadId: string): MergeQueueEntry | undefined {
  const pending = mergeQueueOf(state, parentThreadId).filter((entry) => isPendingMergeStatus(entry.status));
  return pending.find((entry) => entry.status !== MergeQueueStatus.queued) ?? pending[0];
}

export function nextQueued(state: OrchestrationState, parentThreadId: string, after: string): MergeQueueEntry | undefined {
  return mergeQueueOf(state, parentThreadId).find((entry) => entry.entryId !== after && entry.status === MergeQueueStatus.queued);
}

export function mergeEffect(entry: MergeQueueEntry): NewOutboxEffect {
  const kind = EffectKind.mergeQueueEntry;
  return { kind, streamId: mergeQueueStream(entry.parentThreadId), payload: { parentThreadId: entry.parentThreadId, entryId: entry.entryId }, replaySafe: EFFECTS[kind].replaySafe };
}
