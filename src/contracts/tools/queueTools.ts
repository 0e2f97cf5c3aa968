import { z } from "zod";
import { RunKindSchema, RunStatusSchema } from "../entities/runs.js";
import { CreatedBySchema } from "../thread.js";

/**
 * The queue tools (spec 004 §3.5, ThreadToolkit): read and change the runs
 * waiting in a thread's queue, over the queued-run commands (docs/runs.md, Queue).
 */
const ThreadIdInput = z.string().min(1).max(512).describe("Thread id, e.g. from t3_thread_list or a t3-thread:// link");
const RunIdInput = z.string().min(1).max(512).describe("A queued run's id, from t3_queue_list");
const ClientRequestIdInput = z
  .string()
  .min(1)
  .max(200)
  .describe("Idempotency key: retrying with the same value replays the same change instead of making another");

export const QueueListInput = z.object({ threadId: ThreadIdInput }).strict();
export type QueueListInput = z.infer<typeof QueueListInput>;

export const QueueReadInput = z.object({ threadId: ThreadIdInput, runId: RunIdInput }).strict();
export type QueueReadInput = z.infer<typeof QueueReadInput>;

export const QueueEditInput = z
  .object({ threadId: ThreadIdInput, runId: RunIdInput, message: z.string().min(1).max(200_000).describe("The queued message's new text"), clientRequestId: ClientRequestIdInput.optional() })
  .strict();
export type QueueEditInput = z.infer<typeof QueueEditInput>;

export const QueueCancelInput = z.object({ threadId: ThreadIdInput, runId: RunIdInput, clientRequestId: ClientRequestIdInput.optional() }).strict();
export type QueueCancelInput = z.infer<typeof QueueCancelInput>;

export const QueueReorderInput = z
  .object({
    threadId: ThreadIdInput,
    runIds: z.array(RunIdInput).max(1_000).describe("Every queued run of the thread, once each, in the new order (first runs next)"),
    clientRequestId: ClientRequestIdInput.optional(),
  })
  .strict();
export type QueueReorderInput = z.infer<typeof QueueReorderInput>;

export const QueuePromoteInput = z.object({ threadId: ThreadIdInput, runId: RunIdInput, clientRequestId: ClientRequestIdInput.optional() }).strict();
export type QueuePromoteInput = z.infer<typeof QueuePromoteInput>;

/** One queued run as the queue tools show it. */
export const QueuedRunViewSchema = z.object({
  runId: z.string(),
  /** Place in the queue: 0 runs next. */
  position: z.number().int(),
  /** True while a Stop holds it until the queue is resumed. */
  held: z.boolean(),
  kind: RunKindSchema,
  messageId: z.string().nullable(),
  /** The message text; bounded (list: 500 characters, read: 30,000), see `truncated`. */
  text: z.string(),
  textLength: z.number().int(),
  truncated: z.boolean(),
  createdBy: CreatedBySchema.nullable(),
  providerInstanceId: z.string().nullable(),
  createdAt: z.string(),
});
export type QueuedRunView = z.infer<typeof QueuedRunViewSchema>;

export const QueueListOutput = z.object({
  threadId: z.string(),
  activeRunId: z.string().nullable(),
  activeRunStatus: RunStatusSchema.nullable(),
  /** Whether a queued message can be promoted into the active turn now. */
  steerable: z.boolean(),
  runs: z.array(QueuedRunViewSchema),
});
export type QueueListOutput = z.infer<typeof QueueListOutput>;

export const QueueReadOutput = z.object({ threadId: z.string(), run: QueuedRunViewSchema });
export type QueueReadOutput = z.infer<typeof QueueReadOutput>;

/** Every queue change answers with the run it changed and the queue after the change. */
export const QueueChangeOutput = z.object({
  threadId: z.string(),
  runId: z.string().nullable(),
  /** The changed run's status after the change (cancel and promote end it `cancelled`). */
  runStatus: RunStatusSchema.nullable(),
  /** promote: the active run that received the message. */
  steeredRunId: z.string().nullable(),
  commandId: z.string(),
  sequence: z.number().int(),
  queue: z.array(QueuedRunViewSchema),
});
export type QueueChangeOutput = z.infer<typeof QueueChangeOutput>;
