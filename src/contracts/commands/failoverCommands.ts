import { z } from "zod";
import { CeilingSchema } from "../modes.js";
import { IdSchema, commandSchema as command } from "./commandSchema.js";

/**
 * A thread a usage limit stopped moves to another provider instance and its
 * work goes on there at once instead of at the reset (docs/limits.md,
 * "Failover"): `automatic` when the app took the next available instance of
 * the thread's failover list as the limit stopped it, `requested` for
 * "switch now". The command names the recovery it ends, so a retry, a second
 * node or a resume that came first makes it stale (limit_recovery_stale).
 */
export const LimitRecoveryFailOverCommandSchema = command(
  "thread.limit-recovery.fail-over",
  z
    .object({
      threadId: IdSchema,
      runId: IdSchema,
      resetAt: z.string().min(1),
      providerInstanceId: IdSchema,
      model: z.string().min(1).nullable(),
      trigger: z.enum(["automatic", "requested"]),
      /** The caller whose modes the thread may not exceed (src/core/policy/ceiling.ts); absent: none (the app's own failover). */
      ceiling: CeilingSchema.optional(),
    })
    .strict(),
);
export type LimitRecoveryFailOverCommand = z.infer<typeof LimitRecoveryFailOverCommandSchema>;

/**
 * A session met a usage limit of its provider instance's account, resetting
 * at `resetAt` (docs/limits.md, "Unavailable until the reset"): record the
 * instance's limit window, so every node holds the instance unavailable
 * until then. A window already recorded to reset as late or later stays.
 */
export const LimitWindowRecordCommandSchema = command(
  "provider-instance.limit-window.record",
  z
    .object({
      providerInstanceId: IdSchema,
      resetAt: z.iso.datetime({ offset: true }),
      message: z.string().max(2_000),
    })
    .strict(),
);
export type LimitWindowRecordCommand = z.infer<typeof LimitWindowRecordCommandSchema>;
