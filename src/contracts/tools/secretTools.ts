import { z } from "zod";
import { ENV_VAR_NAME_PATTERN } from "../commands/secretCommands.js";
import { SecretRequestStatusSchema } from "../turnItemParts.js";

/** Longest secret value the owner may supply. */
export const MAX_SECRET_LENGTH = 65_536;

/** request_secret (spec 004 §3.5): an agent asks the owner for a named secret. */
export const RequestSecretInput = z
  .object({
    secretName: z.string().min(1).max(200).describe("What the secret is, as the owner will see it (e.g. 'GitHub deploy token')"),
    envVarName: z
      .string()
      .max(128)
      .regex(ENV_VAR_NAME_PATTERN)
      .describe("The environment variable your commands will find it in: upper case letters, digits and _, not a system variable (PATH, HOME, ...)"),
    description: z.string().min(1).max(2_000).optional().describe("Why you need it"),
  })
  .strict();
export type RequestSecretInput = z.infer<typeof RequestSecretInput>;

export const SecretRequestOutput = z.object({
  requestId: z.string(),
  threadId: z.string(),
  secretName: z.string(),
  envVarName: z.string(),
  status: SecretRequestStatusSchema,
});
export type SecretRequestOutput = z.infer<typeof SecretRequestOutput>;
export const RequestSecretOutput = SecretRequestOutput;

/** The owner's answer (HTTP route, and the UI later): the value, or a refusal. */
export const SupplySecretInput = z
  .object({
    threadId: z.string().min(1).max(512),
    requestId: z.string().min(1).max(512),
    value: z.string().min(1).max(MAX_SECRET_LENGTH).optional(),
    decline: z.literal(true).optional(),
  })
  .strict()
  .refine((input) => (input.value === undefined) !== (input.decline === undefined), { message: "pass either value or decline: true" });
export type SupplySecretInput = z.infer<typeof SupplySecretInput>;
