import type { ScheduledTaskDeleteCommand, ScheduledTaskSaveCommand } from "../../contracts/commands/scheduleCommands.js";
import type { ScheduledTask } from "../../contracts/entities/scheduledTasks.js";
import { scheduledTaskEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, accept, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";

/**
 * scheduled-task.save: create a task, or replace an existing task's settings
 * (its fire history, creator and creation time stay). A bound task's thread
 * must be live and in the task's project. The app resolved everything else
 * (project, provider, modes under the privilege ceiling, the next due time).
 */
export function decideScheduledTaskSave(state: OrchestrationState, command: ScheduledTaskSaveCommand, ctx: DecideContext): Decision {
  const data = command.data;
  const existing = state.scheduledTasks.get(data.scheduledTaskId);
  if (data.mode === "create" && existing !== undefined) {
    return reject(RejectionCode.scheduledTaskAlreadyExists, `scheduled task ${data.scheduledTaskId} already exists`);
  }
  if (data.mode === "update" && existing === undefined) {
    return reject(RejectionCode.scheduledTaskNotFound, `no scheduled task ${data.scheduledTaskId}`);
  }
  if (data.boundThreadId !== null) {
    const found = liveThread(state, data.boundThreadId);
    if (found.kind === "rejected") return found;
    if (found.thread.projectId !== data.projectId) {
      return reject(RejectionCode.scheduledTaskInvalid, `thread ${data.boundThreadId} is in project ${found.thread.projectId}, not in the task's project ${data.projectId}`);
    }
  }
  if (data.trigger.type === "webhook" && data.nextFireAt !== null) {
    return reject(RejectionCode.scheduledTaskInvalid, "a webhook task has no due time");
  }
  const task: ScheduledTask = {
    id: data.scheduledTaskId,
    projectId: data.projectId,
    title: data.title,
    prompt: data.prompt,
    trigger: data.trigger,
    boundThreadId: data.boundThreadId,
    enabled: data.enabled,
    overlap: data.overlap,
    providerInstanceId: data.providerInstanceId,
    model: data.model,
    runtimeMode: data.runtimeMode,
    interactionMode: data.interactionMode,
    createdBy: existing?.createdBy ?? data.createdBy,
    createdByThreadId: existing === undefined ? data.createdByThreadId : existing.createdByThreadId,
    createdAt: existing?.createdAt ?? ctx.now,
    updatedAt: ctx.now,
    nextFireAt: data.enabled ? data.nextFireAt : null,
    lastFire: existing?.lastFire ?? null,
    fireCount: existing?.fireCount ?? 0,
  };
  return accept([scheduledTaskEvent("scheduled-task.updated", task)]);
}

/** scheduled-task.delete: permanent. Runs its fires started are left alone. */
export function decideScheduledTaskDelete(state: OrchestrationState, command: ScheduledTaskDeleteCommand, ctx: DecideContext): Decision {
  const existing = state.scheduledTasks.get(command.data.scheduledTaskId);
  if (existing === undefined) return reject(RejectionCode.scheduledTaskNotFound, `no scheduled task ${command.data.scheduledTaskId}`);
  return accept([scheduledTaskEvent("scheduled-task.deleted", { ...existing, enabled: false, nextFireAt: null, updatedAt: ctx.now })]);
}
