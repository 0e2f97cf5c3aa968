import type { ToolTaskCancelCommand, ToolTaskCreateCommand } from "../../contracts/commands/toolTaskCommands.js";
import type { ToolTask, ToolTaskWork } from "../../contracts/entities/toolTasks.js";
import { toolTaskEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, accept, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";

/**
 * Tool calls served as MCP tasks (docs/mcp.md, "Tasks"): the durable handle
 * of a task-augmented call. Its work must exist and belong to its owner (a
 * delegated task or workflow of the same id, a live thread and its run), so
 * a handle never names what its owner could not have asked for. Creating a
 * handle that exists for the same owner and tool is a retried call: nothing
 * is written, and the first call's ttl and poll interval stand.
 */
export function decideToolTaskCreate(state: OrchestrationState, command: ToolTaskCreateCommand, ctx: DecideContext): Decision {
  const { taskId, ownerThreadId, work } = command.data;
  const known = state.toolTasks.get(taskId);
  if (known !== undefined) {
    if (known.ownerThreadId === ownerThreadId && known.work.tool === work.tool) return accept([]);
    return reject(RejectionCode.taskAlreadyExists, `task ${taskId} already exists`);
  }
  const refused = workRefusal(state, ownerThreadId, taskId, work);
  if (refused !== null) return refused;
  return accept([toolTaskEvent(newToolTask(command.data, ctx.now))]);
}

/** A handle created now, expiring ttlMs later; also delegated_task.request's own, for delegate_task served as a task (one commit). */
export function newToolTask(fields: Pick<ToolTask, "taskId" | "ownerThreadId" | "work" | "ttlMs" | "pollIntervalMs">, now: string): ToolTask {
  const { taskId, ownerThreadId, work, ttlMs, pollIntervalMs } = fields;
  return { taskId, ownerThreadId, work, ttlMs, pollIntervalMs, createdAt: now, expiresAt: new Date(Date.parse(now) + ttlMs).toISOString(), updatedAt: now, cancelledAt: null };
}

function workRefusal(state: OrchestrationState, ownerThreadId: string | null, taskId: string, work: ToolTaskWork): Decision | null {
  const owns = (parentThreadId: string) => ownerThreadId === null || ownerThreadId === parentThreadId;
  switch (work.tool) {
    case "delegate_task": {
      const task = state.tasks.get(taskId);
      return task !== undefined && owns(task.parentThreadId) ? null : reject(RejectionCode.taskNotFound, `no delegated task ${taskId} of this caller`);
    }
    case "t3_workflow_start": {
      const workflow = state.workflows.get(taskId);
      return workflow !== undefined && owns(workflow.parentThreadId) ? null : reject(RejectionCode.workflowNotFound, `no workflow ${taskId} of this caller`);
    }
    case "t3_thread_wait":
    case "t3_thread_send": {
      const thread = state.threads.get(work.threadId);
      if (thread === undefined || thread.deletedAt !== null) return reject(RejectionCode.threadNotFound, `thread ${work.threadId} does not exist`);
      const run = work.runId === null ? null : state.runs.get(work.runId);
      if (run === undefined || (run !== null && run.threadId !== thread.id)) return reject(RejectionCode.runNotFound, `run ${String(work.runId)} does not exist in thread ${thread.id}`);
      return null;
    }
    case "t3_background_wait": {
      const thread = state.threads.get(work.threadId);
      if (thread === undefined || thread.deletedAt !== null) return reject(RejectionCode.threadNotFound, `thread ${work.threadId} does not exist`);
      const stranger = work.taskIds.find((id) => state.tasks.get(id)?.parentThreadId !== thread.id);
      return stranger === undefined ? null : reject(RejectionCode.taskNotFound, `task ${stranger} is not a task of thread ${thread.id}`);
    }
  }
}

/**
 * tasks/cancel of a wait: the handle is cancelled, so the wait is over;
 * nothing it waited on is touched (a wait cancels nothing, as its timeout
 * does not). Delegated tasks and workflows are cancelled by their own
 * commands (subagent.stop, workflow.stop), not here.
 */
export function decideToolTaskCancel(state: OrchestrationState, command: ToolTaskCancelCommand, ctx: DecideContext): Decision {
  const task = state.toolTasks.get(command.data.taskId);
  if (task === undefined) return reject(RejectionCode.taskNotFound, `no task ${command.data.taskId}`);
  if (task.work.tool === "delegate_task" || task.work.tool === "t3_workflow_start") {
    return reject(RejectionCode.taskNotCancellable, `task ${task.taskId} is a ${task.work.tool} task: cancel its work instead`);
  }
  if (task.cancelledAt !== null) return reject(RejectionCode.taskNotCancellable, `task ${task.taskId} was cancelled already`);
  return accept([toolTaskEvent({ ...task, cancelledAt: ctx.now, updatedAt: ctx.now })]);
}
