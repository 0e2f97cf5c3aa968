import { z } from "zod";
import { IdSchema, commandSchema as command } from "./commandSchema.js";

/**
 * notification.delivery.accept: the recipient took in a notification some
 * other way (the user read it, the agent read the result with task_status),
 * so it needs no turn of its own: its follow-up run, if it has not started,
 * is cancelled and the notification reads `accepted`. Accepting a task's
 * completion notice also acknowledges the task's result.
 */
export const NotificationDeliveryAcceptCommandSchema = command(
  "notification.delivery.accept",
  z.object({ threadId: IdSchema, itemId: IdSchema }).strict(),
);
export type NotificationDeliveryAcceptCommand = z.infer<typeof NotificationDeliveryAcceptCommandSchema>;

/**
 * thread.created.record: a thread_created turn item on `threadId` for a
 * thread it created (create_threads, t3_thread_launch from an agent), so the
 * creator's timeline points at the new thread. One item per pair.
 */
export const ThreadCreatedRecordCommandSchema = command(
  "thread.created.record",
  z.object({ threadId: IdSchema, childThreadId: IdSchema, runId: IdSchema.optional() }).strict(),
);
export type ThreadCreatedRecordCommand = z.infer<typeof ThreadCreatedRecordCommandSchema>;

/**
 * thread.title.regeneration.complete: the titling turn (or its fallback, the
 * first line of the first message) produced a title. Only while a
 * regeneration runs: a rename in between wins and this is refused.
 */
export const ThreadTitleRegenerationCompleteCommandSchema = command(
  "thread.title.regeneration.complete",
  z.object({ threadId: IdSchema, title: z.string().max(500) }).strict(),
);
export type ThreadTitleRegenerationCompleteCommand = z.infer<typeof ThreadTitleRegenerationCompleteCommandSchema>;
