import { z } from "zod";
import { HandoffStatusSchema, HandoffStrategySchema, RunOrdinalRangeSchema } from "../entities/contextTransfers.js";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";

/**
 * t3_thread_configuration and t3_thread_configure (spec 004 §3.5): a thread's
 * runtime mode, interaction mode, model and provider instance. Changing the
 * provider instance is provider.switch, with a context handoff.
 */
const ThreadIdInput = z.string().min(1).max(512).describe("Default: the calling thread");

export const ThreadConfigurationInput = z.object({ threadId: ThreadIdInput.optional() }).strict();
export type ThreadConfigurationInput = z.infer<typeof ThreadConfigurationInput>;

export const ThreadConfigureInput = z
  .object({
    threadId: ThreadIdInput.optional(),
    providerInstanceId: z.string().min(1).max(512).optional().describe("Move the thread to this provider instance: its next run goes there, with a context handoff"),
    model: z.string().min(1).max(200).optional().describe("A model the (new) provider advertises; with a new provider and no model, its first advertised model"),
    runtimeMode: RuntimeModeSchema.optional().describe("Not broader than yours"),
    interactionMode: InteractionModeSchema.optional().describe("Not broader than yours"),
    clientRequestId: z.string().min(1).max(200).optional().describe("Idempotency key: a retry with the same value replays the same change"),
    failOver: z
      .literal(true)
      .optional()
      .describe("Switch now: a thread waiting on a usage limit moves to providerInstanceId, or to the first available of its failover instances, and its work goes on there at once instead of at the reset"),
  })
  .strict();
export type ThreadConfigureInput = z.infer<typeof ThreadConfigureInput>;

/** A context handoff as the configuration tools show it. */
export const HandoffViewSchema = z.object({
  handoffId: z.string(),
  strategy: HandoffStrategySchema,
  status: HandoffStatusSchema,
  fromProvider: z.string().nullable(),
  toProvider: z.string(),
  coveredRunOrdinals: RunOrdinalRangeSchema,
  /** Size of the built transcript; null until the target's first run builds it. */
  bytes: z.number().int().nullable(),
  estimatedTokens: z.number().int().nullable(),
  deliveredToRunId: z.string().nullable(),
});
export type HandoffView = z.infer<typeof HandoffViewSchema>;

export const ThreadConfigurationOutput = z.object({
  threadId: z.string(),
  providerInstanceId: z.string().nullable(),
  driver: z.string().nullable(),
  model: z.string().nullable(),
  runtimeMode: RuntimeModeSchema,
  interactionMode: InteractionModeSchema,
  /** What the thread's provider instance offers; null when it has none or it is not configured. */
  provider: z
    .object({
      available: z.boolean(),
      reason: z.string().nullable(),
      models: z.array(z.string()),
      runtimeModes: z.array(RuntimeModeSchema),
      steering: z.boolean(),
      interrupt: z.boolean(),
      fork: z.boolean(),
    })
    .nullable(),
  /** Where the active run runs: it stays on its provider after a switch. */
  activeRunProviderInstanceId: z.string().nullable(),
  /** The thread's newest handoff, if it ever switched providers with runs to hand over. */
  handoff: HandoffViewSchema.nullable(),
});
export type ThreadConfigurationOutput = z.infer<typeof ThreadConfigurationOutput>;

export const ThreadConfigureOutput = ThreadConfigurationOutput.extend({
  /** What this call changed, in the order applied; empty when everything already had the asked value. */
  changed: z.array(z.enum(["runtimeMode", "interactionMode", "model", "provider"])),
  commandIds: z.array(z.string()),
  /** Log sequence of the last change; null when nothing changed. */
  sequence: z.number().int().nullable(),
});
export type ThreadConfigureOutput = z.infer<typeof ThreadConfigureOutput>;
