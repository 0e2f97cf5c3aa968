import { z } from "zod";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { CreatedBySchema, IsoTimeSchema } from "../thread.js";
import { CountSchema, EntityIdSchema, NullableEntityIdSchema } from "./fields.js";

/** What makes a scheduled task fire (spec 000, Scheduled tasks). */
export const TriggerType = {
  interval: "interval",
  daily: "daily",
  webhook: "webhook",
} as const;
export type TriggerType = (typeof TriggerType)[keyof typeof TriggerType];

/** Fires every `everyMs` milliseconds: each due instant is the previous one plus `everyMs`. */
export const IntervalTriggerSchema = z.object({
  type: z.literal(TriggerType.interval),
  everyMs: z.number().int().positive(),
});

/** "HH:MM", 24-hour. */
export const CLOCK_TIME_PATTERN = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * Fires at `at` in the server's local time zone, on the listed weekdays
 * (0 = Sunday) or every day when `weekdays` is null.
 */
export const DailyTriggerSchema = z.object({
  type: z.literal(TriggerType.daily),
  at: z.string().regex(CLOCK_TIME_PATTERN),
  weekdays: z.array(z.number().int().min(0).max(6)).min(1).max(7).nullable(),
});

/** A webhook body must carry `equals` at `path` (dot-separated keys into the JSON body). */
export const WebhookFilterSchema = z.object({
  path: z.string().min(1),
  equals: z.union([z.string(), z.number(), z.boolean(), z.null()]),
});
export type WebhookFilter = z.infer<typeof WebhookFilterSchema>;

/**
 * Fires on each qualifying POST to the task's webhook URL. The log keeps only
 * whether a signature is required and the SHA-256 of the URL's token: the
 * token and the signing secret stay in the state dir's webhook key file
 * (docs/schedules.md). `dedupeKey` is a header name ("header:X-GitHub-Delivery")
 * or a JSON path into the body ("body:pull_request.id").
 */
export const WebhookTriggerSchema = z.object({
  type: z.literal(TriggerType.webhook),
  signed: z.boolean(),
  filters: z.array(WebhookFilterSchema),
  dedupeKey: z.string().min(1).nullable(),
  tokenHash: z.string().regex(/^[0-9a-f]{64}$/),
});

export const TriggerSchema = z.discriminatedUnion("type", [IntervalTriggerSchema, DailyTriggerSchema, WebhookTriggerSchema]);
export type Trigger = z.infer<typeof TriggerSchema>;

/** What a fire does when the previous fire's run is still active. */
export const OverlapPolicy = { skip: "skip", queue: "queue" } as const;
export type OverlapPolicy = (typeof OverlapPolicy)[keyof typeof OverlapPolicy];
export const OverlapPolicySchema = z.enum([OverlapPolicy.skip, OverlapPolicy.queue]);

/** Why a fire happened: its due time passed (`timer`), several passed while the server was down (`catch_up`), run now, or a webhook. */
export const FireCause = { timer: "timer", catchUp: "catch_up", manual: "manual", webhook: "webhook" } as const;
export type FireCause = (typeof FireCause)[keyof typeof FireCause];
export const FireCauseSchema = z.enum([FireCause.timer, FireCause.catchUp, FireCause.manual, FireCause.webhook]);

/** started: its run started at once; queued: it waits behind the thread's active work; skipped: no run. */
export const FireOutcome = { started: "started", queued: "queued", skipped: "skipped" } as const;
export type FireOutcome = (typeof FireOutcome)[keyof typeof FireOutcome];
export const FireOutcomeSchema = z.enum([FireOutcome.started, FireOutcome.queued, FireOutcome.skipped]);

/** One fire of a task, as its fire command decided it. */
export const ScheduledFireSchema = z.object({
  /** The due instant (or the request time of a manual or webhook fire). */
  dueAt: IsoTimeSchema,
  firedAt: IsoTimeSchema,
  cause: FireCauseSchema,
  /** Due instants this one fire stands for (catch_up: more than one). */
  instants: CountSchema,
  outcome: FireOutcomeSchema,
  /** Why it was skipped (null otherwise). */
  reason: z.string().nullable(),
  runId: NullableEntityIdSchema,
  threadId: NullableEntityIdSchema,
});
export type ScheduledFire = z.infer<typeof ScheduledFireSchema>;

/**
 * Recurring work the scheduler runs even when no turn is active (spec 000,
 * Scheduled tasks). A bound task posts each fire into `boundThreadId`; an
 * unbound one launches a fresh thread in the project each time, on
 * `providerInstanceId`/`model` with the task's modes (never broader than the
 * scheduler's when it was saved). `enabled: false` pauses it; deletion
 * removes it. `nextFireAt` is null for webhook and paused tasks.
 */
export const ScheduledTaskSchema = z.object({
  id: EntityIdSchema,
  projectId: EntityIdSchema,
  title: z.string().min(1),
  prompt: z.string().min(1),
  trigger: TriggerSchema,
  boundThreadId: NullableEntityIdSchema,
  enabled: z.boolean(),
  overlap: OverlapPolicySchema,
  providerInstanceId: EntityIdSchema,
  model: z.string().nullable(),
  runtimeMode: RuntimeModeSchema,
  interactionMode: InteractionModeSchema,
  createdBy: CreatedBySchema,
  /** The thread whose agent scheduled it, or null for the owner. */
  createdByThreadId: NullableEntityIdSchema,
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  nextFireAt: IsoTimeSchema.nullable(),
  lastFire: ScheduledFireSchema.nullable(),
  fireCount: CountSchema,
});
export type ScheduledTask = z.infer<typeof ScheduledTaskSchema>;
