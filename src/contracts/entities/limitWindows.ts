import { z } from "zod";
import { IsoTimeSchema } from "../thread.js";
import { EntityIdSchema } from "./fields.js";

/**
 * A provider instance's usage limit window (docs/limits.md, "Unavailable
 * until the reset"): a session on some Loom node met the account's usage
 * limit, and the instance takes no new work until `resetAt`. In the log, so
 * every node sharing it (PostgreSQL) holds the instance unavailable, not
 * only the node whose session met the limit. One per instance: a later
 * reset replaces it.
 */
export const ProviderLimitWindowSchema = z
  .object({
    providerInstanceId: EntityIdSchema,
    resetAt: IsoTimeSchema,
    /** The provider's own words about the limit. */
    message: z.string().max(2_000),
    recordedAt: IsoTimeSchema,
  })
  .strict();
export type ProviderLimitWindow = z.infer<typeof ProviderLimitWindowSchema>;
