import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { TaskCancelInput, TaskStatusInput } from "../../contracts/tools/delegationTools.js";
import { type Caller, resolveCaller } from "../caller.js";
import { type AppContext, execute, freshUuid } from "../context.js";
import { fail } from "../errors.js";
import { touched } from "../touched.js";
import { delegateTaskResult } from "./taskView.js";

/** A task as its parent sees it; another parent's task id is rejected as unknown. */
function ownTask(ctx: AppContext, caller: Caller, taskId: string, operation: "task_status" | "task_cancel"): DelegatedTask {
  const state = ctx.orchestrator.state;
  const acting = resolveCaller(state, caller, operation);
  const task = state.tasks.get(taskId);
  if (task === undefined || (acting.thread !== null && task.parentThreadId !== acting.thread.id)) {
    fail("task_not_found", `no task ${taskId} belongs to this thread`);
  }
  return task;
}

/**
 * task_status: the task from the parent's durable projection. Reading an
 * available result acknowledges it, so the parent is not also woken for it.
 */
export async function taskStatus(ctx: AppContext, caller: Caller, input: TaskStatusInput) {
  const task = ownTask(ctx, caller, input.taskId, "task_status");
  if (task.resultContextTransferId !== null && task.completionDelivery === "pending" && caller.kind === "agent") {
    await ctx.orchestrator.dispatch({ type: "delegated_task.completion-delivery.acknowledge", commandId: `cmd:ack:${task.taskId}`, data: { taskId: task.taskId } });
  }
  return delegateTaskResult(ctx.orchestrator, ctx.orchestrator.state.tasks.get(task.taskId)!, false);
}

/**
 * task_cancel (spec 000): stop the child's own tasks, then the child thread;
 * cancel the task's queued turn; dispose automatic delivery. A terminal task
 * returns its status and its child thread still stops.
 */
export async function taskCancel(ctx: AppContext, caller: Caller, input: TaskCancelInput) {
  const task = ownTask(ctx, caller, input.taskId, "task_cancel");
  const executed = await execute(ctx, {
    type: "subagent.stop",
    commandId: `cmd:task_cancel:${freshUuid(ctx)}`,
    data: { taskId: task.taskId, ...(input.reason === undefined ? {} : { reason: input.reason }) },
  });
  const after = touched(executed.events).tasks.get(task.taskId) ?? ctx.orchestrator.state.tasks.get(task.taskId)!;
  const runningBefore = new Set((task.followUps ?? []).filter((followUp) => followUp.status === "running").map((followUp) => followUp.runId));
  const cancelledFollowUps = (after.followUps ?? []).filter((followUp) => followUp.status === "cancelled" && runningBefore.has(followUp.runId)).map((followUp) => followUp.runId);
  return { ...delegateTaskResult(ctx.orchestrator, after, false), cancelReason: input.reason ?? null, cancelledFollowUps };
}
