import type { Ceiling, InteractionMode, RuntimeMode } from "../modes.js";
import type { FireCause, OverlapPolicy, Trigger } from "../entities/scheduledTasks.js";
import type { CreatedBy } from "../thread.js";

/**
 * Scheduled tasks (docs/schedules.md). Like the recorded waits these are
 * Loom's own and engine-only: the app layer sends them after it resolved
 * projects, providers, modes and due times (decide has no clock of its own
 * but ctx.now, and no time zone); they are not in the spec's command sets
 * and the HTTP API refuses their names.
 */
export const ScheduleCommandType = {
  save: "scheduled-task.save",
  delete: "scheduled-task.delete",
  fire: "scheduled-task.fire",
} as const;
export type ScheduleCommandType = (typeof ScheduleCommandType)[keyof typeof ScheduleCommandType];

/** Create (`mode: "create"`) or replace the settings of (`"update"`) a task; its fire history is kept. */
export interface ScheduledTaskSaveCommand {
  readonly type: "scheduled-task.save";
  readonly commandId: string;
  readonly data: {
    readonly scheduledTaskId: string;
    readonly mode: "create" | "update";
    readonly projectId: string;
    readonly title: string;
    readonly prompt: string;
    readonly trigger: Trigger;
    readonly boundThreadId: string | null;
    readonly enabled: boolean;
    readonly overlap: OverlapPolicy;
    readonly providerInstanceId: string;
    readonly model: string | null;
    readonly runtimeMode: RuntimeMode;
    readonly interactionMode: InteractionMode;
    readonly createdBy: CreatedBy;
    readonly createdByThreadId: string | null;
    /** The first due instant after now (null for webhooks and paused tasks). */
    readonly nextFireAt: string | null;
    /** The caller whose modes the task's work may not exceed (src/core/policy/ceiling.ts); absent: none. */
    readonly ceiling?: Ceiling;
  };
}

export interface ScheduledTaskDeleteCommand {
  readonly type: "scheduled-task.delete";
  readonly commandId: string;
  readonly data: { readonly scheduledTaskId: string };
}

/**
 * One fire. Its commandId is derived from (task, due instant) for timed
 * fires and from the delivery's dedupe value for webhooks, so a restart, a
 * retry or a second node firing the same instant is answered with the first
 * fire's receipt and writes nothing.
 */
export interface ScheduledTaskFireCommand {
  readonly type: "scheduled-task.fire";
  readonly commandId: string;
  readonly data: {
    readonly scheduledTaskId: string;
    /** The due instant (timer, catch_up) or the request time (manual, webhook). */
    readonly dueAt: string;
    readonly cause: FireCause;
    /** Due instants this fire stands for: more than one after downtime. */
    readonly instants: number;
    /** Timed fires: the first due instant after this fire. */
    readonly nextFireAt: string | null;
    /** Ids of the work an accepted fire creates: the fresh thread (unbound tasks), run and message. */
    readonly threadId: string;
    readonly runId: string;
    readonly messageId: string;
    /** Untrusted context (a webhook body), already bounded; null for none. */
    readonly context: string | null;
    /** run now by a caller: whose modes the work it starts may not exceed; absent (timed fires, webhooks): none. */
    readonly ceiling?: Ceiling;
  };
}

export type ScheduleCommand = ScheduledTaskSaveCommand | ScheduledTaskDeleteCommand | ScheduledTaskFireCommand;
