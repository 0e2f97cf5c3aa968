import type { AppThread, ThreadLimitRecovery } from "../../contracts/thread.js";
import { type Rejected, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { changed, liveThread } from "../thread/guards.js";
import type { Changes } from "./changes.js";

/**
 * What a limit recovery still holds (docs/limits.md): apart from its
 * decisions (limitRecovery.ts), so the task settlement can ask it.
 */

/** Whether a run came after the recovery's run: the thread's work went on without the resume. */
export function movedOn(changes: Changes, recovery: ThreadLimitRecovery, threadId: string): boolean {
  const stopped = changes.run(recovery.runId);
  return changes.threadRuns(threadId).some((run) => run.id !== recovery.runId && (stopped === undefined || run.ordinal > stopped.ordinal));
}

/**
 * The thread's limit recovery whose resume is still to come: autoResume on
 * and no later run. Such a thread's work is not over (settleTask waits).
 */
export function pendingLimitResume(changes: Changes, threadId: string): ThreadLimitRecovery | null {
  const recovery = changes.thread(threadId)?.limitRecovery ?? null;
  if (recovery === null || !recovery.autoResume || movedOn(changes, recovery, threadId)) return null;
  return recovery;
}

/** Stop (thread.stop, task_cancel) ends a wait for a limit's reset: the recovery is cleared and nothing resumes. Returns whether one was pending. */
export function cancelLimitResume(changes: Changes, threadId: string): boolean {
  const recovery = pendingLimitResume(changes, threadId);
  if (recovery === null) return false;
  const thread = changes.thread(threadId)!;
  changes.putThread("thread.limit-recovery-updated", changed(thread, changes.ctx, { limitRecovery: null }));
  return true;
}

/**
 * The live thread and its recovery when the recovery is the one a command
 * names (the run it stopped and its reset), else the refusal: a recovery
 * resumed, moved or cleared since is stale (limit_recovery_stale), so a
 * retry or a second node acts on it once.
 */
export function namedRecovery(
  state: OrchestrationState,
  named: { readonly threadId: string; readonly runId: string; readonly resetAt: string },
): { readonly kind: "found"; readonly thread: AppThread; readonly recovery: ThreadLimitRecovery } | Rejected {
  const found = liveThread(state, named.threadId);
  if (found.kind === "rejected") return found;
  const recovery = found.thread.limitRecovery ?? null;
  if (recovery === null || recovery.runId !== named.runId || Date.parse(recovery.resetAt) !== Date.parse(named.resetAt)) {
    return reject(RejectionCode.limitRecoveryStale, `thread ${found.thread.id} does not wait on the limit that stopped run ${named.runId} (reset ${named.resetAt})`);
  }
  return { kind: "found", thread: found.thread, recovery };
}

/** End the thread's recovery: cleared, and the snooze it put on the thread woken. Returns the thread as left. */
export function endRecovery(changes: Changes, thread: AppThread, recovery: ThreadLimitRecovery): AppThread {
  const wake = recovery.snooze !== undefined && thread.snoozedUntil === recovery.snooze.until ? { snoozedUntil: null, snoozedAt: null } : {};
  return changes.putThread("thread.limit-recovery-updated", changed(thread, changes.ctx, { limitRecovery: null, ...wake }));
}
