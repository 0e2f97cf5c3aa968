import { type TaskFollowUp, type TaskFollowUpStatus } from "../../contracts/entities/delegatedTasks.js";
import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type { Changes } from "../run/changes.js";

/**
 * Follow-ups on a delegated task (spec 000, task_cancel): a message sent to
 * the child after the task was final runs as a fresh turn in the child and
 * shows as running on the parent until that turn ends. It never changes the
 * task's published result.
 */

/** Record a follow-up run on the task whose (final) child thread it runs in. */
export function recordFollowUp(changes: Changes, childThreadId: string, runId: string): void {
  const taskId = changes.state.taskByChildThread.get(childThreadId);
  const task = taskId === undefined ? undefined : changes.task(taskId);
  if (task === undefined || task.resultContextTransferId === null) return;
  const followUps = task.followUps ?? [];
  if (followUps.some((followUp) => followUp.runId === runId)) return;
  changes.updateTask(task, { followUps: [...followUps, { runId, status: "running", createdAt: changes.ctx.now, endedAt: null }] });
}

function endedStatus(status: string): TaskFollowUpStatus {
  return status === "completed" || status === "failed" || status === "cancelled" ? status : "interrupted";
}

/** Give every running follow-up whose child run has ended that run's status. */
export function settleFollowUps(changes: Changes, childThreadId: string): void {
  const taskId = changes.state.taskByChildThread.get(childThreadId);
  const task = taskId === undefined ? undefined : changes.task(taskId);
  if (task === undefined || task.followUps === undefined) return;
  let touched = false;
  const followUps = task.followUps.map((followUp): TaskFollowUp => {
    const run = followUp.status === "running" ? changes.run(followUp.runId) : undefined;
    if (run === undefined || !isTerminalRunStatus(run.status)) return followUp;
    touched = true;
    return { ...followUp, status: endedStatus(run.status), endedAt: run.endedAt ?? changes.ctx.now };
  });
  if (touched) changes.updateTask(task, { followUps });
}

/**
 * A follow-up still running on the parent whose child run is gone or already
 * ended lost its run: cancel it there. Returns the run ids it cancelled.
 */
export function cancelLostFollowUps(changes: Changes, taskId: string): string[] {
  const task = changes.task(taskId);
  if (task === undefined || task.followUps === undefined) return [];
  const cancelled: string[] = [];
  const followUps = task.followUps.map((followUp): TaskFollowUp => {
    if (followUp.status !== "running") return followUp;
    const run = changes.run(followUp.runId);
    if (run !== undefined && run.threadId === task.childThreadId && !isTerminalRunStatus(run.status)) return followUp;
    cancelled.push(followUp.runId);
    return { ...followUp, status: "cancelled", endedAt: changes.ctx.now };
  });
  if (cancelled.length > 0) changes.updateTask(task, { followUps });
  return cancelled;
}

/** Follow-ups the parent still shows as running. */
export function runningFollowUps(followUps: readonly TaskFollowUp[] | undefined): TaskFollowUp[] {
  return (followUps ?? []).filter((followUp) => followUp.status === "running");
}
