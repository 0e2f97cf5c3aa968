import type { Run } from "../contracts/entities/runs.js";
import { isTerminalRunStatus } from "../contracts/entities/runs.js";
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
