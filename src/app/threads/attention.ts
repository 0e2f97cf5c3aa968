import type { AppThread } from "../../contracts/thread.js";
import type { OrchestrationState } from "../../core/state.js";
import { activeRunOf, runsOf } from "../../engine/queries.js";

/**
 * What a thread's shell says about attention (spec 000, t3_thread_read): the
 * effective snooze and what the thread still waits on. All derived from
 * durable state, so every reader (and every server of a shared log) agrees.
 */

/** The thread's runtime requests still waiting for an answer. */
export function pendingRequestCount(state: OrchestrationState, threadId: string): number {
  let count = 0;
  for (const request of state.runtimeRequests.values()) if (request.threadId === threadId && request.status === "pending") count += 1;
  return count;
}

/**
 * Whether a snooze is in force at `now`: set, not yet past, and not woken
 * early. A snoozed thread wakes early only when it has a pending request or a
 * run of it failed after it was snoozed; completed runs, background wakes and
 * delegated completions keep it snoozed (spec 000, effectiveSnoozed).
 */
export function isEffectivelySnoozed(state: OrchestrationState, thread: AppThread, now: string, pendingRequests = pendingRequestCount(state, thread.id)): boolean {
  if (thread.snoozedUntil === null || Date.parse(thread.snoozedUntil) <= Date.parse(now)) return false;
  if (pendingRequests > 0) return false;
  const since = thread.snoozedAt === null ? Number.NEGATIVE_INFINITY : Date.parse(thread.snoozedAt);
  return !runsOf(state, thread.id).some((run) => run.status === "failed" && run.endedAt !== null && Date.parse(run.endedAt) >= since);
}

/** The background work that holds a thread: its unfinished delegated tasks, and pending background tasks that hold it. */
export function pendingBackgroundTaskCount(state: OrchestrationState, thread: AppThread): number {
  const taskIds = new Set<string>();
  for (const task of state.tasks.values()) if (task.parentThreadId === thread.id && task.resultContextTransferId === null) taskIds.add(task.taskId);
  // A subagent or background_task holds the thread; a command or monitor only when awaited (agents often leave a dev server running).
  const held = thread.pendingBackgroundTasks.filter((t) => !taskIds.has(t.id) && (t.kind === "subagent" || t.kind === "background_task" || t.awaited === true));
  return taskIds.size + held.length;
}

/** Background work whose end wakes the thread: unfinished tasks that will deliver to it, and awaited pending background tasks. */
function awaitedBackgroundWork(state: OrchestrationState, thread: AppThread): boolean {
  for (const task of state.tasks.values()) {
    if (task.parentThreadId === thread.id && task.resultContextTransferId === null && task.wakePolicy !== "never" && task.completionDelivery !== "disposed") return true;
  }
  return thread.pendingBackgroundTasks.some((t) => t.awaited === true);
}

/**
 * blockedOnThreadWait: the thread's agent is blocked on other work. True
 * while its active run is inside a recorded wait (a t3_thread_wait or a
 * delegate_task wait: an open `tool_call` node on that run, see
 * src/core/run/waits.ts), or, once its turn is over and nothing is queued to
 * run, while it awaits background work that will wake it (an unfinished
 * delegated task that reports back to it, or a pending background task marked
 * awaited). A turn that is working on its own is not blocked.
 */
export function isBlockedOnThreadWait(state: OrchestrationState, thread: AppThread): boolean {
  const active = activeRunOf(state, thread.id);
  if (active !== null) {
    for (const nodeId of state.openWaits.get(thread.id) ?? []) if (state.nodes.get(nodeId)?.runId === active.id) return true;
    return false;
  }
  if (thread.queuedRuns.some((queued) => !queued.held)) return false;
  return awaitedBackgroundWork(state, thread);
}
