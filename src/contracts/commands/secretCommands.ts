import { z } from "zod";
import { IdSchema, commandSchema as command } from "./commandSchema.js";
import { SecretRequestStatusSchema } from "../turnItemParts.js";

/** An environment variable name a secret may be delivered as: upper case letters, digits and `_`. */
export const ENV_VAR_NAME_PATTERN = /^[A-Z_][A-Z0-9_]{0,127}$/;

/**
 * secret_request.record (internal): the secret_request turn item an agent's
 * request_secret call opens (`pending`), and what became of it (`provided`,
 * `declined`, `cancelled`). The value itself never travels in a command, an
 * event or a projection: the app hands it to the requesting session's
 * environment (docs/secrets.md). `provided` and `declined` also tell the
 * agent with a notification that starts (or queues) a follow-up turn.
 */
export const SecretRequestRecordCommandSchema = command(
  "secret_request.record",
  z
    .object({
      threadId: IdSchema,
      requestId: IdSchema,
      /** The run the request was made from (pending only). */
      runId: IdSchema.optional(),
      /** The provider session that asked (pending only): the only session the value may reach. */
      providerSessionId: IdSchema.optional(),
      secretName: z.string().min(1).max(200),
      envVarName: z.string().regex(ENV_VAR_NAME_PATTERN),
      description: z.string().max(2_000).nullable(),
      status: SecretRequestStatusSchema,
    })
    .strict(),
);
export type SecretRequestRecordCommand = z.infer<typeof SecretRequestRecordCommandSchema>;
