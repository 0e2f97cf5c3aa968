import { z } from "zod";
import { RunStatusSchema } from "../entities/runs.js";
import { CLOCK_TIME_PATTERN, FireCauseSchema, FireOutcomeSchema, OverlapPolicySchema, WebhookFilterSchema } from "../entities/scheduledTasks.js";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { INPUT_LIMITS, TargetInput } from "./threadTools.js";

/**
 * Inputs and outputs of the scheduled-task tools (spec 000, Scheduled tasks;
 * docs/schedules.md). Descriptions are what the model reads in tools/list.
 */
export const SCHEDULE_LIMITS = {
  /** The longest interval: a year. */
  maxIntervalMs: 366 * 24 * 60 * 60_000,
  secretChars: 512,
  minSecretChars: 16,
  filters: 20,
  filterPathChars: 512,
  filterValueChars: 2_000,
  dedupeKeyChars: 512,
} as const;

const ScheduledTaskIdInput = z.string().min(1).max(INPUT_LIMITS.idChars).describe("Scheduled task id, from schedule_task or list_scheduled_tasks");

export const IntervalTriggerInput = z
  .object({
    type: z.literal("interval"),
    everyMs: z.number().int().positive().max(SCHEDULE_LIMITS.maxIntervalMs).describe("Milliseconds between fires; at least the server's scheduler.minIntervalMs"),
  })
  .strict();

export const DailyTriggerInput = z
  .object({
    type: z.literal("daily"),
    at: z.string().max(5).regex(CLOCK_TIME_PATTERN, { error: 'must be "HH:MM" (24-hour)' }).describe('"HH:MM", 24-hour, in the server\'s local time zone'),
    weekdays: z.array(z.number().int().min(0).max(6)).min(1).max(7).optional().describe("Days to fire on, 0 = Sunday; default every day"),
  })
  .strict();

export const WebhookTriggerInput = z
  .object({
    type: z.literal("webhook"),
    signature: z
      .object({ secret: z.string().min(SCHEDULE_LIMITS.minSecretChars).max(SCHEDULE_LIMITS.secretChars).describe("Shared HMAC secret; never stored in the event log") })
      .strict()
      .optional()
      .describe(
        "Require signed deliveries, each taken once: X-Loom-Timestamp (unix seconds, within the server's tolerance, 5 minutes by default) with X-Loom-Signature: sha256=<hex HMAC-SHA256 of \"<timestamp>.<raw body>\">, or GitHub's X-Hub-Signature-256 (of the raw body) with X-GitHub-Delivery. A replayed delivery is refused. Without it anyone with the URL can trigger a run",
      ),
    filters: z
      .array(
        z
          .object({
            path: z.string().min(1).max(SCHEDULE_LIMITS.filterPathChars).describe("Dot-separated path into the JSON body, e.g. action or pull_request.base.ref"),
            equals: z.union([z.string().max(SCHEDULE_LIMITS.filterValueChars), z.number().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER), z.boolean(), z.null()]),
          })
          .strict(),
      )
      .max(SCHEDULE_LIMITS.filters)
      .optional()
      .describe("Every filter must match, else the request is skipped"),
    dedupeKey: z
      .string()
      .min(1)
      .max(SCHEDULE_LIMITS.dedupeKeyChars)
      .regex(/^(header:[A-Za-z0-9-]+|body:.+)$/, { error: 'must be "header:<Header-Name>" or "body:<json.path>"' })
      .optional()
      .describe('Where a delivery\'s unique id is: "header:X-GitHub-Delivery" or "body:<json.path>"; a repeated value is skipped'),
  })
  .strict();

export const TriggerInput = z.discriminatedUnion("type", [IntervalTriggerInput, DailyTriggerInput, WebhookTriggerInput]);
export type TriggerInput = z.infer<typeof TriggerInput>;

const ModeFields = {
  runtimeMode: RuntimeModeSchema.optional().describe("Runtime mode of each fire's run; default and ceiling: yours"),
  interactionMode: InteractionModeSchema.optional().describe("Interaction mode of each fire's run; default and ceiling: yours"),
};

const SettingFields = {
  projectId: z.string().min(1).max(INPUT_LIMITS.idChars).optional().describe("Project the work runs in; default: your thread's, else the first configured"),
  title: z.string().min(1).max(INPUT_LIMITS.titleChars).optional(),
  prompt: z.string().min(1).max(INPUT_LIMITS.textChars).optional().describe("What each fire asks the agent to do (required when creating)"),
  trigger: TriggerInput.optional().describe("interval, daily (server local time) or webhook (required when creating)"),
  target: TargetInput.optional().describe("Provider and model of unbound fires; default: yours"),
  ...ModeFields,
  bindToCurrentThread: z
    .boolean()
    .optional()
    .describe("Post each fire into your thread (queued behind active work) instead of a fresh thread; default true when you have a thread in the task's project"),
  enabled: z.boolean().optional().describe("false pauses the task; true resumes it"),
  overlap: OverlapPolicySchema.optional().describe("When the previous fire's run is still active: skip (default) records a skipped fire, queue runs after it"),
};

export const ScheduleTaskInput = z
  .object({
    scheduledTaskId: ScheduledTaskIdInput.optional().describe("Update this task instead of creating one"),
    ...SettingFields,
    clientRequestId: z.string().min(1).max(200).optional().describe("Idempotency key: a retry returns the same task"),
  })
  .strict();
export type ScheduleTaskInput = z.infer<typeof ScheduleTaskInput>;

export const UpdateScheduledTaskInput = z
  .object({ scheduledTaskId: ScheduledTaskIdInput, ...SettingFields })
  .strict();
export type UpdateScheduledTaskInput = z.infer<typeof UpdateScheduledTaskInput>;

export const ListScheduledTasksInput = z
  .object({ projectId: z.string().min(1).max(INPUT_LIMITS.idChars).optional().describe("Only this project's tasks") })
  .strict();
export type ListScheduledTasksInput = z.infer<typeof ListScheduledTasksInput>;

export const ScheduledTaskIdOnlyInput = z.object({ scheduledTaskId: ScheduledTaskIdInput }).strict();
export type ScheduledTaskIdOnlyInput = z.infer<typeof ScheduledTaskIdOnlyInput>;

/** The trigger as a task shows it: never the secret, only whether one is required. */
export const TriggerView = z.discriminatedUnion("type", [
  z.object({ type: z.literal("interval"), everyMs: z.number() }),
  z.object({ type: z.literal("daily"), at: z.string(), weekdays: z.array(z.number()).nullable() }),
  z.object({ type: z.literal("webhook"), signed: z.boolean(), filters: z.array(WebhookFilterSchema), dedupeKey: z.string().nullable() }),
]);

export const LastFireView = z.object({
  at: z.string().describe("When it fired"),
  dueAt: z.string(),
  cause: FireCauseSchema,
  outcome: FireOutcomeSchema,
  reason: z.string().nullable(),
  runId: z.string().nullable(),
  threadId: z.string().nullable(),
  status: z.union([RunStatusSchema, z.literal("skipped")]).describe("The run's current status, or skipped"),
});

export const ScheduledTaskOutput = z.object({
  scheduledTaskId: z.string(),
  projectId: z.string(),
  title: z.string(),
  prompt: z.string(),
  enabled: z.boolean(),
  trigger: TriggerView,
  overlap: OverlapPolicySchema,
  nextFireAt: z.string().nullable().describe("null for webhooks and paused tasks"),
  webhookUrl: z.string().nullable().describe("POST here to fire (webhooks only); treat it as a secret"),
  boundThreadId: z.string().nullable(),
  providerInstanceId: z.string(),
  model: z.string().nullable(),
  runtimeMode: RuntimeModeSchema,
  interactionMode: InteractionModeSchema,
  fireCount: z.number(),
  lastFire: LastFireView.nullable(),
});
export type ScheduledTaskOutput = z.infer<typeof ScheduledTaskOutput>;

export const ListScheduledTasksOutput = z.object({ tasks: z.array(ScheduledTaskOutput) });
export type ListScheduledTasksOutput = z.infer<typeof ListScheduledTasksOutput>;

export const DeleteScheduledTaskOutput = z.object({ scheduledTaskId: z.string(), deleted: z.literal(true) });
export type DeleteScheduledTaskOutput = z.infer<typeof DeleteScheduledTaskOutput>;

export const RunScheduledTaskNowOutput = z.object({
  scheduledTaskId: z.string(),
  outcome: FireOutcomeSchema,
  reason: z.string().nullable(),
  runId: z.string().nullable(),
  threadId: z.string().nullable(),
  task: ScheduledTaskOutput,
});
export type RunScheduledTaskNowOutput = z.infer<typeof RunScheduledTaskNowOutput>;
