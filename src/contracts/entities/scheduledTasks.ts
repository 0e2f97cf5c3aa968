import { z } from "zod";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { IsoTimeSchema } from "../thread.js";
import { EntityIdSchema, NullableEntityIdSchema, ProviderTargetSchema } from "./fields.js";

export const ScheduleKind = {
  interval: "interval",
  fixedTime: "fixed-time",
  webhook: "webhook",
} as const;
export type ScheduleKind = (typeof ScheduleKind)[keyof typeof ScheduleKind];

/** Runs every `everyMs` milliseconds, measured from the previous run. */
export const IntervalScheduleSchema = z.object({
  kind: z.literal(ScheduleKind.interval),
  everyMs: z.number().int().positive(),
});

/**
 * Runs at `time` (24-hour "HH:MM") in the server's local time zone, on the
 * listed weekdays (0 = Sunday) or every day when `weekdays` is null.
 */
export const FixedTimeScheduleSchema = z.object({
  kind: z.literal(ScheduleKind.fixedTime),
  time: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/),
  weekdays: z.array(z.number().int().min(0).max(6)).min(1).nullable(),
});

/** A filter a webhook body must pass: the value at `path` (dot-separated) equals `equals`. */
export const WebhookFilterSchema = z.object({
  path: z.string().min(1),
  equals: z.union([z.string(), z.number(), z.boolean(), z.null()]),
});

/**
 * Runs on each qualifying request to the webhook URL naming `hookId`.
 * Without a signature, anyone with the URL can trigger a run. A request is
 * skipped when its signature fails, a filter does not match, or its
 * `dedupeHeader` value was seen before. The signing secret is kept outside
 * the event log.
 */
export const WebhookScheduleSchema = z.object({
  kind: z.literal(ScheduleKind.webhook),
  hookId: z.string().min(1),
  signature: z.object({ header: z.string().min(1), algorithm: z.literal("hmac-sha256") }).nullable(),
  filters: z.array(WebhookFilterSchema),
  dedupeHeader: z.string().min(1).nullable(),
});

export const ScheduleSchema = z.discriminatedUnion("kind", [
  IntervalScheduleSchema,
  FixedTimeScheduleSchema,
  WebhookScheduleSchema,
]);
export type Schedule = z.infer<typeof ScheduleSchema>;

/**
 * Recurring work run by the app scheduler even when no turn is active
 * (spec 000, Scheduled tasks). A bound task posts each run into
 * `bindToThreadId`; an unbound one launches a fresh thread in the project
 * each time. `enabled: false` pauses it; deletion is permanent and removes
 * the record. `nextRunAt` is null for webhook and paused tasks.
 */
export const ScheduledTaskSchema = z.object({
  id: EntityIdSchema,
  projectId: EntityIdSchema,
  prompt: z.string().min(1),
  schedule: ScheduleSchema,
  bindToThreadId: NullableEntityIdSchema,
  enabled: z.boolean(),
  target: ProviderTargetSchema,
  /** Modes each run gets; never broader than the creator's at scheduling time. */
  runtimeMode: RuntimeModeSchema,
  interactionMode: InteractionModeSchema,
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  lastRunAt: IsoTimeSchema.nullable(),
  nextRunAt: IsoTimeSchema.nullable(),
});
export type ScheduledTask = z.infer<typeof ScheduledTaskSchema>;
