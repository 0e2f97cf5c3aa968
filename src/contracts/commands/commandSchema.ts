import { z } from "zod";

/** A command's idempotency key. */
export const CommandIdSchema = z.string().min(1).max(256);
/** An entity id inside a command (thread, run, task, request ...). */
export const IdSchema = z.string().min(1).max(512);

/** A command schema: the readonly record `{ type, commandId, data }`, nothing else. */
export function commandSchema<T extends string, D extends z.ZodType>(type: T, data: D) {
  return z.object({ type: z.literal(type), commandId: CommandIdSchema, data }).strict();
}
