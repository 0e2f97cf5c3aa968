import { z } from "zod";
import { IsoTimeSchema } from "../thread.js";
import { EntityIdSchema, NullableEntityIdSchema } from "./fields.js";

/**
 * How a handoff summarizes the thread for a provider that has not seen it
 * (spec 004 §2, OrchestrationV2ContextHandoff.strategy).
 */
export const HandoffStrategy = {
  deltaSinceTargetLastSeen: "delta_since_target_last_seen",
  forkDeltaSummary: "fork_delta_summary",
  fullThreadSummary: "full_thread_summary",
  checkpointSummary: "checkpoint_summary",
  manualContext: "manual_context",
} as const;
export type HandoffStrategy = (typeof HandoffStrategy)[keyof typeof HandoffStrategy];
export const HandoffStrategySchema = z.enum(HandoffStrategy);

/** The handoff state machine (spec 004 §2): a newer handoff for the same target supersedes a pending one. */
export const HandoffStatus = {
  pending: "pending",
  ready: "ready",
  failed: "failed",
  superseded: "superseded",
} as const;
export type HandoffStatus = (typeof HandoffStatus)[keyof typeof HandoffStatus];
export const HandoffStatusSchema = z.enum(HandoffStatus);

/** Inclusive range of run ordinals a handoff summarizes. */
export const RunOrdinalRangeSchema = z
  .object({ from: z.number().int().nonnegative(), to: z.number().int().nonnegative() })
  .refine((range) => range.from <= range.to, { message: "from must not exceed to" });
export type RunOrdinalRange = z.infer<typeof RunOrdinalRangeSchema>;

/** One prior message carried verbatim into the handoff prompt, within the byte budget. */
export const HandoffHistoryEntrySchema = z.object({
  runOrdinal: z.number().int().nonnegative(),
  role: z.enum(["user", "assistant"]),
  text: z.string(),
});
export type HandoffHistoryEntry = z.infer<typeof HandoffHistoryEntrySchema>;

/**
 * Context prepared when a thread moves to another provider (provider.switch)
 * or is forked (thread.fork): a bounded summary plus recent history. It is
 * delivered at most once, as the preamble of the target's next run.
 */
export const ContextHandoffSchema = z.object({
  id: EntityIdSchema,
  threadId: EntityIdSchema,
  sourceProviderInstanceId: NullableEntityIdSchema,
  targetProviderInstanceId: EntityIdSchema,
  strategy: HandoffStrategySchema,
  status: HandoffStatusSchema,
  coveredRunOrdinals: RunOrdinalRangeSchema,
  summaryText: z.string().nullable(),
  history: z.array(HandoffHistoryEntrySchema),
  /** Set when the handoff was prepended to a run; null until then. */
  delivery: z.object({ runId: EntityIdSchema, deliveredAt: IsoTimeSchema }).nullable(),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
});
export type ContextHandoff = z.infer<typeof ContextHandoffSchema>;

/**
 * Why text crosses from one thread into another. A delegated task records one
 * `subagent_spawn` transfer (the task prompt into the child) and one
 * `subagent_result` transfer (the result into the parent); an existing
 * `subagent_result` makes finalization idempotent (spec 000). A `fork`
 * carries the source's transcript into a new fork thread (portable context
 * transfer), and a `merge_back` a fork's or child's outcome into its source;
 * both reach the receiving thread's next run.
 */
export const ContextTransferKind = {
  subagentSpawn: "subagent_spawn",
  subagentResult: "subagent_result",
  handoff: "handoff",
  manual: "manual",
  fork: "fork",
  mergeBack: "merge_back",
} as const;
export type ContextTransferKind = (typeof ContextTransferKind)[keyof typeof ContextTransferKind];
export const ContextTransferKindSchema = z.enum(ContextTransferKind);

/** `pending` until the target thread's run reads the text (`consumed`) or delivery gives up (`failed`). */
export const ContextTransferStatus = {
  pending: "pending",
  consumed: "consumed",
  failed: "failed",
} as const;
export type ContextTransferStatus = (typeof ContextTransferStatus)[keyof typeof ContextTransferStatus];
export const ContextTransferStatusSchema = z.enum(ContextTransferStatus);

/**
 * Text moved between threads. `threadId` is the receiving thread. Only the
 * text in `text` crosses: a delegated child never sees its parent's history.
 */
export const ContextTransferSchema = z.object({
  id: EntityIdSchema,
  threadId: EntityIdSchema,
  sourceThreadId: EntityIdSchema,
  kind: ContextTransferKindSchema,
  status: ContextTransferStatusSchema,
  subagentId: NullableEntityIdSchema,
  /** The run that produced (result) or received (spawn) the text, when known. */
  runId: NullableEntityIdSchema,
  text: z.string(),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  consumedAt: IsoTimeSchema.nullable(),
  /** The source runs the text accounts for (fork, merge_back); absent on older records. */
  coveredRunOrdinals: RunOrdinalRangeSchema.nullable().optional(),
  /** The receiving thread's run whose input carries the text (fork, merge_back); null until delivered. */
  deliveredRunId: NullableEntityIdSchema.optional(),
});
export type ContextTransfer = z.infer<typeof ContextTransferSchema>;
