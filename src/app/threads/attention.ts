import type { AppThread } from "../../contracts/thread.js";
import type { OrchestrationState } from "../../core/state.js";
import { runsOf } from "../../engine/queries.js";

/**
 * What a thread's shell says about attention (spec 000, t3_thread_read): the
 * effective snooze and what the thread still waits on (whether its agent is
 * blocked on other work is isBlockedOnThreadWait in src/engine/queries.ts,
 * which the shell shows too). All derived from durable state, so every reader
 * (and every server of a shared log) agrees.
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
  // The run a usage limit stopped snoozed the thread itself: its failure does not wake it (docs/limits.md).
  const limited = thread.limitRecovery?.runId;
  return !runsOf(state, thread.id).some((run) => run.status === "failed" && run.id !== limited && run.endedAt !== null && Date.parse(run.endedAt) >= since);
}

/** The background work that holds a thread: its unfinished delegated tasks, and pending background tasks that hold it. */
export function pendingBackgroundTaskCount(state: OrchestrationState, thread: AppThread): number {
  const taskIds = new Set<string>();
  for (const task of state.tasks.values()) if (task.parentThreadId === thread.id && task.resultContextTransferId === null) taskIds.add(task.taskId);
  // A subagent or background_task holds the thread; a command or monitor only when awaited (agents often leave a dev server running).
  const held = thread.pendingBackgroundTasks.filter((t) => !taskIds.has(t.id) && (t.kind === "subagent" || t.kind === "background_task" || t.awaited === true));
  return taskIds.size + held.length;
}

