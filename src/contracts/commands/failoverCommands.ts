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
