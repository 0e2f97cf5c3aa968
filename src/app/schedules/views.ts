import type { ScheduledTask } from "../../contracts/entities/scheduledTasks.js";
import type { ScheduledTaskOutput } from "../../contracts/tools/scheduleTools.js";
import type { AppContext } from "../context.js";

/** The webhook URL of a task, from the key file (null when it is not a webhook or its keys are gone). */
export function webhookUrl(ctx: AppContext, task: ScheduledTask): string | null {
  if (task.trigger.type !== "webhook") return null;
  const keys = ctx.schedules.keys.get(task.id);
  return keys === null ? null : `${ctx.schedules.baseUrl()}/hooks/${encodeURIComponent(task.id)}/${keys.token}`;
}

/** A task as the tools show it: the trigger without secrets, the last fire with its run's current status. */
export function scheduledTaskView(ctx: AppContext, task: ScheduledTask): ScheduledTaskOutput {
  const trigger =
    task.trigger.type === "webhook"
      ? { type: "webhook" as const, signed: task.trigger.signed, filters: task.trigger.filters, dedupeKey: task.trigger.dedupeKey }
      : task.trigger;
  const fire = task.lastFire;
  const run = fire?.runId == null ? undefined : ctx.orchestrator.state.runs.get(fire.runId);
  return {
    scheduledTaskId: task.id,
    projectId: task.projectId,
    title: task.title,
    prompt: task.prompt,
    enabled: task.enabled,
    trigger,
    overlap: task.overlap,
    nextFireAt: task.nextFireAt,
    webhookUrl: webhookUrl(ctx, task),
    boundThreadId: task.boundThreadId,
    providerInstanceId: task.providerInstanceId,
    model: task.model,
    runtimeMode: task.runtimeMode,
    interactionMode: task.interactionMode,
    fireCount: task.fireCount,
    lastFire:
      fire === null
        ? null
        : {
            at: fire.firedAt,
            dueAt: fire.dueAt,
            cause: fire.cause,
            outcome: fire.outcome,
            reason: fire.reason,
            runId: fire.runId,
            threadId: fire.threadId,
            status: run?.status ?? "skipped",
          },
  };
}
