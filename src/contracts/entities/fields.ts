import { z } from "zod";

/**
 * Field schemas shared by the entity records. Ids are opaque strings minted by
 * `allocate` or `derive` (src/core/ids.ts); readers never parse them.
 */
export const EntityIdSchema = z.string().min(1);
export const NullableEntityIdSchema = EntityIdSchema.nullable();

/** A failure as the record keeps it: a stable code plus a message for people. */
export const FailureSchema = z.object({
  code: z.string().min(1),
  message: z.string(),
});
export type Failure = z.infer<typeof FailureSchema>;

/** Counts are whole, non-negative numbers. */
export const CountSchema = z.number().int().nonnegative();

/**
 * Where work runs, as a caller asks for it (spec 000, delegate_task `target`).
 * Every field is optional: omitted ones inherit from the caller.
 */
export const ProviderTargetSchema = z.object({
  providerInstanceId: z.string().min(1).optional(),
  driverKind: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
});
export type ProviderTarget = z.infer<typeof ProviderTargetSchema>;
