import { z } from "zod";
import { TraceParentSchema } from "../traceContext.js";

/**
 * A command's idempotency key. The ids Loom derives for its own commands join
 * the ids they concern (a provider session's, a run's, a task's, each nesting
 * its parents'), so the bound leaves room for several entity ids.
 */
export const CommandIdSchema = z.string().min(1).max(4_096);
/**
 * An entity id inside a command (thread, run, task, request ...). Derived
 * ids nest the ids they are derived from, escaped (a provider session's
 * holds its thread's, which may hold a workflow's and its parent's), so the
 * bound leaves room for a few levels.
 */
export const IdSchema = z.string().min(1).max(2_048);

/**
 * The idempotency claim a tool call's first command carries (spec 000, Policy
 * And Idempotency): the caller's key and a fingerprint of the request it was
 * first used for. The decider records it and refuses a later command that
 * claims the same key for a different fingerprint.
 */
export const ClientRequestClaimSchema = z
  .object({
    /** client-request:<scope>:tool:<tool>:request:<clientRequestId> */
    key: z.string().min(1).max(1_024),
    tool: z.string().min(1).max(128),
    /** SHA-256 (hex) of the canonical JSON of the tool's parsed input without the key. */
    fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();
export type ClientRequestClaim = z.infer<typeof ClientRequestClaimSchema>;

/**
 * A command schema: the readonly record `{ type, commandId, data }`, plus the
 * optional `clientRequest` claim the server's tools attach (outside clients
 * may not send it: src/contracts/commands.ts) and the optional `traceParent`
 * of the call that sent it, which a run the command starts keeps
 * (docs/telemetry.md).
 */
export function commandSchema<T extends string, D extends z.ZodType>(type: T, data: D) {
  return z.object({ type: z.literal(type), commandId: CommandIdSchema, data, clientRequest: ClientRequestClaimSchema.optional(), traceParent: TraceParentSchema.optional() }).strict();
}
