import { randomUUID } from "node:crypto";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { McpInvocationScope } from "../credentialRegistry.js";
import { OrchestratorMcpError } from "../failures.js";
import type { TaskCancelInput, TaskStatusInput } from "../toolkits/delegation/schemas.js";
import { fail } from "../threads/context.js";
import { callerOf } from "../threads/policy.js";
import type { DelegationToolsContext } from "./delegate.js";
import { delegateTaskResult } from "./taskView.js";

/** A task as its parent sees it; another parent's task id is rejected as unknown. */
function ownTask(ctx: DelegationToolsContext, scope: McpInvocationScope, taskId: string): DelegatedTask {
  const state = ctx.orchestrator.state;
  const caller = callerOf(state, scope);
  const task = state.tasks.get(taskId);
  if (task === undefined || (caller.thread !== null && task.parentThreadId !== caller.thread.id)) {
    fail("task_not_found", `no task ${taskId} belongs to this thread`);
  }
  return task;
}

/**
 * task_status: the task from the parent's durable projection. Reading an
 * available result acknowledges it, so the parent is not also woken for it.
 */
export async function taskStatus(ctx: DelegationToolsContext, scope: McpInvocationScope, input: TaskStatusInput) {
  const task = ownTask(ctx, scope, input.taskId);
  if (task.resultContextTransferId !== null && task.completionDelivery === "pending" && scope.kind === "thread") {
    await ctx.orchestrator.dispatch({ type: "delegated_task.completion-delivery.acknowledge", commandId: `cmd:ack:${task.taskId}`, data: { taskId: task.taskId } });
  }
  return delegateTaskResult(ctx.orchestrator.state, ctx.orchestrator.state.tasks.get(task.taskId)!, false);
}

/**
 * task_cancel (spec 000): stop the child's own tasks, then the child thread;
 * cancel the task's queued turn; dispose automatic delivery. A terminal task
 * returns its status and its child thread still stops.
 */
export async function taskCancel(ctx: DelegationToolsContext, scope: McpInvocationScope, input: TaskCancelInput) {
  const task = ownTask(ctx, scope, input.taskId);
  const receipt = await ctx.orchestrator.dispatch({
    type: "subagent.stop",
    commandId: `cmd:task_cancel:${randomUUID()}`,
    data: { taskId: task.taskId, ...(input.reason === undefined ? {} : { reason: input.reason }) },
  });
  if (receipt.status === "rejected") {
    const code = receipt.rejection.code === "task_not_cancellable" ? "task_not_cancellable" : receipt.rejection.code === "task_not_found" ? "task_not_found" : "orchestration_error";
    throw new OrchestratorMcpError(code, receipt.rejection.message);
  }
  return { ...delegateTaskResult(ctx.orchestrator.state, ctx.orchestrator.state.tasks.get(task.taskId)!, false), cancelReason: input.reason ?? null };
}
