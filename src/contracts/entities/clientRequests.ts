import { z } from "zod";

/**
 * The first use of a clientRequestId (spec 000, Policy And Idempotency): the
 * key, the tool, and the fingerprint of the request it was used for. It is
 * written by the request's first command and kept in the folded state, so a
 * reused key is checked against it after any restart.
 */
export const ClientRequestRecordSchema = z.object({
  /** client-request:<scope>:tool:<tool>:request:<clientRequestId> */
  key: z.string().min(1),
  tool: z.string().min(1),
  /** SHA-256 (hex) of the canonical JSON of the tool's parsed input without the key. */
  fingerprint: z.string(),
  /** The command that carried the claim. */
  commandId: z.string(),
  recordedAt: z.string(),
});
export type ClientRequestRecord = z.infer<typeof ClientRequestRecordSchema>;
