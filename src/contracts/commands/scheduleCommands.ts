import { z } from "zod";
import { IdSchema, commandSchema as command } from "./commandSchema.js";
import { CeilingSchema, InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { FireCauseSchema, OverlapPolicySchema, TriggerSchema } from "../entities/scheduledTasks.js";
import { CreatedBySchema } from "../thread.js";

/**
 * Scheduled tasks (docs/schedules.md). Like the recorded waits these are
 * Loom's own and engine-only: the app layer sends them after it resolved
 * projects, providers, modes and due times (decide has no clock of its own
 * but ctx.now, and no time zone); they are not in the spec's command sets
 * and the HTTP API refuses their names.
 */

/** Create (`mode: "create"`) or replace the settings of (`"update"`) a task; its fire history is kept. */
export const ScheduledTaskSaveCommandSchema = command(
  "scheduled-task.save",
  z
    .object({
      scheduledTaskId: IdSchema,
      mode: z.enum(["create", "update"]),
      projectId: z.string().min(1),
      title: z.string(),
      prompt: z.string(),
      trigger: TriggerSchema,
      boundThreadId: IdSchema.nullable(),
      enabled: z.boolean(),
      overlap: OverlapPolicySchema,
      providerInstanceId: IdSchema,
      model: z.string().min(1).nullable(),
      runtimeMode: RuntimeModeSchema,
      interactionMode: InteractionModeSchema,
      createdBy: CreatedBySchema,
      createdByThreadId: IdSchema.nullable(),
      /** The first due instant after now (null for webhooks and paused tasks). */
      nextFireAt: z.string().nullable(),
      /** The caller whose modes the task's work may not exceed (src/core/policy/ceiling.ts); absent: none. */
      ceiling: CeilingSchema.optional(),
    })
    .strict(),
);
export type ScheduledTaskSaveCommand = z.infer<typeof ScheduledTaskSaveCommandSchema>;

export const ScheduledTaskDeleteCommandSchema = command("scheduled-task.delete", z.object({ scheduledTaskId: IdSchema }).strict());
export type ScheduledTaskDeleteCommand = z.infer<typeof ScheduledTaskDeleteCommandSchema>;

/**
 * One fire. Its commandId is derived from (task, due instant) for timed
 * fires and from the delivery's dedupe value for webhooks, so a restart, a
 * retry or a second node firing the same instant is answered with the first
 * fire's receipt and writes nothing.
 */
export const ScheduledTaskFireCommandSchema = command(
  "scheduled-task.fire",
  z
    .object({
      scheduledTaskId: IdSchema,
      /** The due instant (timer, catch_up) or the request time (manual, webhook). */
      dueAt: z.string().min(1),
      cause: FireCauseSchema,
      /** Due instants this fire stands for: more than one after downtime. */
      instants: z.number().int().positive(),
      /** Timed fires: the first due instant after this fire. */
      nextFireAt: z.string().nullable(),
      /** Ids of the work an accepted fire creates: the fresh thread (unbound tasks), run and message. */
      threadId: IdSchema,
      runId: IdSchema,
      messageId: IdSchema,
      /** Untrusted context (a webhook body), already bounded; null for none. */
      context: z.string().nullable(),
      /** run now by a caller: whose modes the work it starts may not exceed; absent (timed fires, webhooks): none. */
      ceiling: CeilingSchema.optional(),
    })
    .strict(),
);
export type ScheduledTaskFireCommand = z.infer<typeof ScheduledTaskFireCommandSchema>;
