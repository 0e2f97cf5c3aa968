import { joinId } from "../../core/ids.js";
import type { AppContext } from "../context.js";
import { instantsThrough, nextDueAfter } from "./dueTimes.js";
import { fireScheduledTask } from "./fire.js";

/** An enabled scheduled task with a due time: what the scheduler's timer is armed for. */
export interface DueScheduledTask {
  readonly scheduledTaskId: string;
  /** ISO-8601. */
  readonly nextFireAt: string;
}

/** Every enabled task with a due time (timed triggers; a webhook task has none). */
export function dueScheduledTasks(ctx: AppContext): DueScheduledTask[] {
  const due: DueScheduledTask[] = [];
  for (const task of ctx.orchestrator.state.scheduledTasks.values()) {
    if (task.enabled && task.nextFireAt !== null) due.push({ scheduledTaskId: task.id, nextFireAt: task.nextFireAt });
  }
  return due;
}

/**
 * Fire a timed task for the due time the scheduler saw. The fire's command
 * id is derived from (task, due instant), and the decider refuses a due time
 * that is no longer the task's (scheduled_fire_stale), so a retry or a second
 * node firing the same instant make one fire. A due time that passed before
 * `startedAtMs` (the scheduler's start), or several at once, fire once as a
 * catch-up that says how many instants it stands for. A task that is gone or
 * not timed fires nothing.
 */
export async function fireDueScheduledTask(ctx: AppContext, due: DueScheduledTask, startedAtMs: number): Promise<void> {
  const task = ctx.orchestrator.state.scheduledTasks.get(due.scheduledTaskId);
  if (task === undefined || task.trigger.type === "webhook") return;
  const trigger = task.trigger;
  const nowMs = ctx.clock();
  const dueMs = Date.parse(due.nextFireAt);
  const zone = ctx.schedules.timeZone;
  const instants = instantsThrough(trigger, dueMs, nowMs, zone);
  await fireScheduledTask(ctx, {
    scheduledTaskId: task.id,
    cause: dueMs < startedAtMs || instants > 1 ? "catch_up" : "timer",
    dueAt: due.nextFireAt,
    instants,
    nextFireAt: new Date(nextDueAfter(trigger, nowMs, dueMs, zone)).toISOString(),
    fireKey: joinId("due", due.nextFireAt),
    context: null,
  });
}
