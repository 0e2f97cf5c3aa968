import { z } from "zod";

/** t3_thread_organize (spec 004 §3.5): pins, archive, settle, snooze, read state and auto-settle of a thread. */
export const OrganizeAction = {
  pin: "pin",
  unpin: "unpin",
  reorderPins: "reorder_pins",
  archive: "archive",
  unarchive: "unarchive",
  delete: "delete",
  settle: "settle",
  unsettle: "unsettle",
  snooze: "snooze",
  unsnooze: "unsnooze",
  markUnread: "mark_unread",
  autoSettle: "auto_settle",
} as const;
export type OrganizeAction = (typeof OrganizeAction)[keyof typeof OrganizeAction];

export const ThreadOrganizeInput = z
  .object({
    threadId: z.string().min(1).max(512).optional().describe("Default: the calling thread; not used by reorder_pins"),
    action: z.enum(OrganizeAction),
    until: z.iso.datetime({ offset: true }).max(64).optional().describe("snooze: when the thread wakes (ISO-8601); it wakes early on a pending request or a failure"),
    threadIds: z.array(z.string().min(1).max(512)).max(1_000).optional().describe("reorder_pins: every pinned thread once, in the new order"),
    enabled: z.boolean().optional().describe("auto_settle: turn settling the thread when its work finishes on or off"),
    clientRequestId: z.string().min(1).max(200).optional().describe("Idempotency key: a retry with the same value replays the same change"),
  })
  .strict();
export type ThreadOrganizeInput = z.infer<typeof ThreadOrganizeInput>;

/** A thread's place in the lists and its attention state (deleted: gone from every list; every later change is refused). */
export const OrganizationViewSchema = z.object({
  threadId: z.string(),
  pinned: z.boolean(),
  pinnedRank: z.number().int().nullable(),
  archived: z.boolean(),
  deleted: z.boolean(),
  settled: z.boolean(),
  /** In force: set, not past, and not woken early by a pending request or a failure. */
  snoozed: z.boolean(),
  snoozedUntil: z.string().nullable(),
  unread: z.boolean(),
  autoSettle: z.boolean(),
});
export type OrganizationView = z.infer<typeof OrganizationViewSchema>;

export const ThreadOrganizeOutput = z.object({
  action: z.enum(OrganizeAction),
  commandId: z.string(),
  sequence: z.number().int(),
  /** The thread after the change; null for reorder_pins. */
  thread: OrganizationViewSchema.nullable(),
  /** The pinned threads in rank order after the change. */
  pinnedOrder: z.array(z.string()),
  /** Every thread the change acted on: the one named and, for archive, unarchive and delete, each thread under it that moved with it. */
  affectedThreadIds: z.array(z.string()),
});
export type ThreadOrganizeOutput = z.infer<typeof ThreadOrganizeOutput>;
