import { z } from "zod";
import { IdSchema, commandSchema as command } from "./commandSchema.js";
import { CeilingSchema, InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { CreatedBySchema, CreationSourceSchema } from "../thread.js";

/**
 * Lineage and provider switching (spec 004 §3.1): provider.switch, thread.fork
 * and thread.merge_back. Each moves context between providers or threads as a
 * bounded transcript (docs/threads.md, "Lineage and provider switching").
 */

/** Longest caller-written merge-back summary, in characters; the transfer budget bounds it again. */
export const MAX_MERGE_SUMMARY_LENGTH = 32_000;

/**
 * provider.switch: the thread's next run goes to another provider instance,
 * with a context handoff of the runs that instance has not seen.
 */
export const ProviderSwitchCommandSchema = command(
  "provider.switch",
  z
    .object({
      threadId: IdSchema,
      providerInstanceId: IdSchema,
      /** Null or absent: the provider's default model. */
      model: z.string().min(1).nullable().optional(),
      /** The caller whose modes the thread may not exceed (src/core/policy/ceiling.ts); absent: none. */
      ceiling: CeilingSchema.optional(),
    })
    .strict(),
);

/**
 * thread.fork: a new thread with lineage `fork` from `sourceThreadId`, carrying
 * the source's transcript through run `sourceRunOrdinal` (default: its newest
 * run). The caller chooses the new thread's id, provider and modes.
 */
export const ThreadForkCommandSchema = command(
  "thread.fork",
  z
    .object({
      sourceThreadId: IdSchema,
      threadId: IdSchema,
      sourceRunOrdinal: z.number().int().positive().optional(),
      title: z.string().max(500).optional(),
      providerInstanceId: IdSchema,
      model: z.string().min(1).nullable(),
      runtimeMode: RuntimeModeSchema,
      interactionMode: InteractionModeSchema,
      createdBy: CreatedBySchema.optional(),
      creationSource: CreationSourceSchema.optional(),
      /** The caller whose modes bound the fork's (src/core/policy/ceiling.ts); absent: none. */
      ceiling: CeilingSchema.optional(),
    })
    .strict(),
);

/**
 * thread.merge_back: the outcome of a fork (or a delegated child) since its
 * last merge back, as a context transfer into its source thread that the
 * source's next run receives. `summary` replaces the transcript with the
 * caller's own words.
 */
export const ThreadMergeBackCommandSchema = command(
  "thread.merge_back",
  z
    .object({
      threadId: IdSchema,
      summary: z.string().min(1).max(MAX_MERGE_SUMMARY_LENGTH).optional(),
      /** The transfer's id, chosen by the caller so a retried call names the same transfer; allocated when absent. */
      transferId: IdSchema.optional(),
      /** The caller whose modes the source (which the change lands in) may not exceed; absent: none. */
      ceiling: CeilingSchema.optional(),
    })
    .strict(),
);

export type ProviderSwitchCommand = z.infer<typeof ProviderSwitchCommandSchema>;
export type ThreadForkCommand = z.infer<typeof ThreadForkCommandSchema>;
export type ThreadMergeBackCommand = z.infer<typeof ThreadMergeBackCommandSchema>;
