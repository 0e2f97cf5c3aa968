import { z } from "zod";
import { ContextTransferKindSchema, HandoffStrategySchema, RunOrdinalRangeSchema } from "../entities/contextTransfers.js";
import { MergeQueueStatusSchema } from "../entities/mergeQueue.js";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { TargetInput } from "./threadTools.js";
import { ThreadStatusSchema } from "./toolOutputs.js";

/** t3_thread_fork, t3_thread_merge_back and t3_thread_transfers (spec 004 §3.5). */
const ThreadIdInput = z.string().min(1).max(512);
const ClientRequestIdInput = z
  .string()
  .min(1)
  .max(200)
  .describe("Idempotency key: retrying with the same value returns the same durable work instead of creating more");

export const ThreadForkInput = z
  .object({
    threadId: ThreadIdInput.describe("The thread to fork"),
    sourceRunOrdinal: z.number().int().positive().optional().describe("Fork after this run (ordinal, from t3_thread_read runs); default: the newest run"),
    message: z.string().min(1).max(200_000).optional().describe("Starts the fork's first run at once; without it the fork stays idle"),
    title: z.string().min(1).max(500).optional(),
    target: TargetInput.optional().describe("Where the fork runs; default: the source thread's provider and model"),
    runtimeMode: z.enum(["inherit", "approval-required", "auto-accept-edits", "full-access"]).optional().describe("Default: the source's, narrowed to yours"),
    interactionMode: z.enum(["inherit", "plan", "default"]).optional(),
    clientRequestId: ClientRequestIdInput.optional(),
  })
  .strict();
export type ThreadForkInput = z.infer<typeof ThreadForkInput>;

export const ThreadMergeBackInput = z
  .object({
    threadId: ThreadIdInput.optional().describe("The fork or delegated child whose outcome goes back; default: the calling thread"),
    summary: z.string().min(1).max(32_000).optional().describe("The outcome in your own words, instead of the transcript of the finished runs"),
    clientRequestId: ClientRequestIdInput.optional(),
  })
  .strict();
export type ThreadMergeBackInput = z.infer<typeof ThreadMergeBackInput>;

export const ThreadTransfersInput = z
  .object({
    threadId: ThreadIdInput,
    direction: z.enum(["incoming", "outgoing", "all"]).optional().describe("incoming: context this thread received; outgoing: context it sent; default all"),
    includeText: z.boolean().optional().describe("Include each transfer's text (bounded to 30,000 characters)"),
    limit: z.number().int().min(1).max(200).optional().describe("Newest first; default 50"),
  })
  .strict();
export type ThreadTransfersInput = z.infer<typeof ThreadTransfersInput>;

/** One context transfer (or provider-switch handoff, kind `handoff`) as t3_thread_transfers lists it. */
export const TransferViewSchema = z.object({
  transferId: z.string(),
  kind: ContextTransferKindSchema,
  direction: z.enum(["incoming", "outgoing"]),
  /** The receiving thread. */
  threadId: z.string(),
  sourceThreadId: z.string(),
  /** pending, consumed, failed; a handoff: pending, ready (delivered), failed, superseded. */
  status: z.string(),
  strategy: HandoffStrategySchema.nullable(),
  coveredRunOrdinals: RunOrdinalRangeSchema.nullable(),
  bytes: z.number().int(),
  estimatedTokens: z.number().int(),
  /** The run that produced the text, when known. */
  runId: z.string().nullable(),
  /** The receiving thread's run whose input carried it. */
  deliveredRunId: z.string().nullable(),
  createdAt: z.string(),
  consumedAt: z.string().nullable(),
  text: z.string().optional(),
  truncated: z.boolean().optional(),
});
export type TransferView = z.infer<typeof TransferViewSchema>;

export const ThreadTransfersOutput = z.object({ threadId: z.string(), total: z.number().int(), transfers: z.array(TransferViewSchema) });
export type ThreadTransfersOutput = z.infer<typeof ThreadTransfersOutput>;

export const ThreadForkOutput = z.object({
  threadId: z.string(),
  link: z.string(),
  title: z.string(),
  sourceThreadId: z.string(),
  sourceRunOrdinal: z.number().int().nullable(),
  providerInstanceId: z.string(),
  model: z.string().nullable(),
  runtimeMode: RuntimeModeSchema,
  interactionMode: InteractionModeSchema,
  /** How the fork got the source's context: `portable` (a bounded transcript its first run receives). */
  contextMode: z.enum(["portable"]),
  contextTransferId: z.string().nullable(),
  coveredRunOrdinals: RunOrdinalRangeSchema.nullable(),
  transferBytes: z.number().int(),
  runId: z.string().nullable(),
  status: ThreadStatusSchema,
});
export type ThreadForkOutput = z.infer<typeof ThreadForkOutput>;

export const ThreadMergeBackOutput = z.object({
  threadId: z.string(),
  sourceThreadId: z.string(),
  commandId: z.string(),
  sequence: z.number().int(),
  transfer: TransferViewSchema,
  /**
   * A worktree child's branch, queued in its parent's merge queue (t3_merge_queue lists it): `waiting_for_idle` while
   * either thread has a run going, then queued and merged with the project's check. Null for a thread without a worktree of its own.
   */
  mergeQueueEntry: z.object({ entryId: z.string(), status: MergeQueueStatusSchema }).nullable(),
});
export type ThreadMergeBackOutput = z.infer<typeof ThreadMergeBackOutput>;
