import type { Run } from "../contracts/entities/runs.js";
import { isTerminalRunStatus } from "../contracts/entities/runs.js";
import type { AppThread } from "../contracts/thread.js";
import type { OrchestrationState } from "../core/state.js";

/** Read helpers over the state, shared by the API and the MCP tools. */
export function runsOf(state: OrchestrationState, threadId: string): Run[] {
  return (state.threadRuns.get(threadId) ?? []).map((id) => state.runs.get(id)!);
}

export function latestRunOf(state: OrchestrationState, threadId: string): Run | null {
  const ids = state.threadRuns.get(threadId);
  const last = ids?.[ids.length - 1];
  return last === undefined ? null : (state.runs.get(last) ?? null);
}

/**
 * The run a thread's status shows: its latest run, unless that one has not
 * started (queued behind a turn, or cancelled before it began) while an
 * earlier turn is in flight; then that turn. So a thread working through its
 * queue reads as running, not queued.
 */
export function currentRunOf(state: OrchestrationState, threadId: string): Run | null {
  const latest = latestRunOf(state, threadId);
  if (latest === null || latest.startedAt !== null) return latest;
  return activeRunOf(state, threadId) ?? latest;
}

export function activeRunOf(state: OrchestrationState, threadId: string): Run | null {
  const runs = runsOf(state, threadId);
  for (let i = runs.length - 1; i >= 0; i--) {
    const run = runs[i]!;
    if (run.status !== "queued" && !isTerminalRunStatus(run.status)) return run;
  }
  return null;
}

/**
 * The output schema the thread's next turn must answer with, while its
 * structured result is still open: the schema of its delegated task (not yet
 * published) or of the thread itself (pending or repairing). Null otherwise.
 * A driver that can constrain a turn's output natively is given it.
 */
export function openOutputSchema(state: OrchestrationState, threadId: string): Readonly<Record<string, unknown>> | null {
  const taskId = state.taskByChildThread.get(threadId);
  const task = taskId === undefined ? undefined : state.tasks.get(taskId);
  if (task !== undefined) return task.outputSchema != null && task.resultContextTransferId === null ? task.outputSchema : null;
  const output = state.threads.get(threadId)?.structuredOutput;
  return output != null && (output.status === "pending" || output.status === "repairing") ? output.schema : null;
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
  if (activeRunOf(state, thread.id) !== null) return isInRecordedWait(state, thread.id);
  if (thread.queuedRuns.some((queued) => !queued.held)) return false;
  return awaitedBackgroundWork(state, thread);
}

/**
 * Whether the thread's active run is inside a recorded wait: its agent is
 * blocked in a wait for another thread or a delegated task. The part of
 * isBlockedOnThreadWait that reads only the thread's own open waits, cheap
 * enough for every shell row.
 */
export function isInRecordedWait(state: OrchestrationState, threadId: string): boolean {
  const open = state.openWaits.get(threadId);
  if (open === undefined || open.size === 0) return false;
  const active = activeRunOf(state, threadId);
  if (active === null) return false;
  for (const nodeId of open) if (state.nodes.get(nodeId)?.runId === active.id) return true;
  return false;
}
