import type { ThreadLimitRecovery } from "../../contracts/thread.js";
import { changed } from "../thread/guards.js";
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
