import type { DelegatedTask, TaskHold } from "../../contracts/entities/delegatedTasks.js";
import { type Run, RunStatus } from "../../contracts/entities/runs.js";
import type { Changes } from "../run/changes.js";
import type { OrchestrationState } from "../state.js";

/** Task holds as the rest of core reads them (the commands are decided in waitHolds.ts). */

/** Whether some wait holds the task. */
export function isHeld(task: DelegatedTask): boolean {
  return (task.heldBy?.length ?? 0) > 0;
}

/** The statuses of a run whose turn is still going: its agent's host may still be reading an MCP task it started. */
const TURN_GOING: ReadonlySet<string> = new Set([RunStatus.starting, RunStatus.running, RunStatus.waitingOnApproval, RunStatus.waitingOnUserInput, RunStatus.waitingOnSubagent]);

/**
 * Whether a delegation made as an MCP task hands its result over through
 * `tasks/result` instead of a completion notice (docs/mcp.md, "Tasks"): it
 * has a handle that was not cancelled, and the run that made the call is
 * still in its turn, so the host polling the task is there to read it. Once
 * that run ends or settles its background work, the notice goes out as for
 * any async delegation. Questions and approvals are noticed regardless: the
 * agent answers them with t3_pending_request_respond.
 */
export function completionGoesThroughTask(state: Pick<OrchestrationState, "toolTasks" | "runs">, task: DelegatedTask): boolean {
  const handle = state.toolTasks.get(task.taskId);
  if (handle === undefined || handle.cancelledAt !== null) return false;
  const run = state.runs.get(task.parentRunId);
  return run !== undefined && TURN_GOING.has(run.status);
}

export function withoutHolds(changes: Changes, task: DelegatedTask, drop: (hold: TaskHold) => boolean): DelegatedTask {
  const holds = task.heldBy ?? [];
  const kept = holds.filter((hold) => !drop(hold));
  return kept.length === holds.length ? task : changes.updateTask(task, { heldBy: kept });
}

/** A run's end releases the holds of its waits (the agent's call was cut off with the turn). */
export function releaseRunHolds(changes: Changes, run: Run): void {
  for (const taskId of changes.state.tasks.keys()) {
    const task = changes.task(taskId)!;
    if (task.heldBy?.some((hold) => hold.runId === run.id)) withoutHolds(changes, task, (hold) => hold.runId === run.id);
  }
}
