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
