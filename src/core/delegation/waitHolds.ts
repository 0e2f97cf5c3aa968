import type { TaskWaitHoldCommand, TaskWaitReleaseCommand, TaskWaitsLostCommand } from "../../contracts/commands/waitCommands.js";
import type { DelegatedTask, TaskHold } from "../../contracts/entities/delegatedTasks.js";
import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { Changes } from "../run/changes.js";
import type { OrchestrationState } from "../state.js";
import { acknowledgeResult } from "./controls.js";
import { withoutHolds } from "./holds.js";

/**
 * Task holds (src/contracts/commands/waitCommands.ts): which waits will hand
 * their caller a task's result or blocking question. A notice for either is
 * refused while one holds (notices.ts), and a wait's end acknowledges what it
 * took in the same decision, so a result reaches the parent exactly once.
 */

/** delegated-task.wait-hold: the wait holds its tasks before it looks at them. */
export function decideWaitHold(state: OrchestrationState, command: TaskWaitHoldCommand, ctx: DecideContext): Decision {
  const { waitId, taskIds, runId, holder } = command.data;
  const changes = new Changes(state, ctx);
  if (runId !== null) {
    const run = state.runs.get(runId);
    if (run === undefined) return reject("run_not_found", `run ${runId} does not exist`);
    if (run.status === "queued" || isTerminalRunStatus(run.status)) return reject("run_not_active", `run ${run.id} is ${run.status}`);
  }
  const tasks: DelegatedTask[] = [];
  for (const taskId of new Set(taskIds)) {
    const task = changes.task(taskId);
    if (task === undefined) return reject("task_not_found", `task ${taskId} does not exist`);
    if (task.heldBy?.some((hold) => hold.waitId === waitId)) return reject("wait_already_recorded", `wait ${waitId} already holds task ${taskId}`);
    tasks.push(task);
  }
  for (const task of tasks) changes.updateTask(task, { heldBy: [...(task.heldBy ?? []), { waitId, runId, holder }] });
  return changes.done();
}

/**
 * delegated-task.wait-release: the wait ended. Its holds go (a run's end may
 * have taken them already); a result it took is acknowledged if it was still
 * pending (a notice that went out before the wait began stays the delivery);
 * a question it could not hand over is owed to the run that waited.
 */
export function decideWaitRelease(state: OrchestrationState, command: TaskWaitReleaseCommand, ctx: DecideContext): Decision {
  const { waitId, taskIds, took, owed } = command.data;
  const changes = new Changes(state, ctx);
  for (const taskId of new Set(taskIds)) {
    const found = changes.task(taskId);
    if (found === undefined) return reject("task_not_found", `task ${taskId} does not exist`);
    const runId = found.heldBy?.find((hold) => hold.waitId === waitId)?.runId ?? null;
    let task = withoutHolds(changes, found, (hold) => hold.waitId === waitId);
    if (took.includes(taskId) && task.completionDelivery === "pending" && task.resultContextTransferId !== null) task = acknowledgeResult(changes, task);
    if (owed.includes(taskId) && runId !== null && task.questionsOwedTo !== runId) changes.updateTask(task, { questionsOwedTo: runId });
  }
  return changes.events.length === 0 ? reject("wait_not_found", `wait ${waitId} holds none of its tasks and took nothing`) : changes.done();
}

/** delegated-task.waits-lost: the holds a gone node served end (all of them after a single node's restart). */
export function decideWaitsLost(state: OrchestrationState, command: TaskWaitsLostCommand, ctx: DecideContext): Decision {
  const lost = (hold: TaskHold) => command.data.holder === null || hold.holder === command.data.holder;
  const changes = new Changes(state, ctx);
  for (const task of state.tasks.values()) if (task.heldBy?.some(lost)) withoutHolds(changes, changes.task(task.taskId)!, lost);
  return changes.events.length === 0 ? reject("wait_not_found", `no wait of ${command.data.holder ?? "any node"} holds a task`) : changes.done();
}
