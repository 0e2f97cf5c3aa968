import { z } from "zod";
import { IsoTimeSchema } from "../thread.js";
import { EntityIdSchema, NullableEntityIdSchema } from "./fields.js";

/**
 * The provider's own conversation behind a thread (Codex's thread, Claude's
 * session, an ACP session), as a provider session reported it. Its id is
 * derived from the native id (spec 004 §2.2), so a replayed stream lands on
 * the same record.
 */
export const ProviderThreadSchema = z.object({
  id: EntityIdSchema,
  threadId: EntityIdSchema,
  providerSessionId: NullableEntityIdSchema,
  providerInstanceId: NullableEntityIdSchema,
  driver: z.string().min(1),
  nativeThreadId: z.string().min(1),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
});
export type ProviderThread = z.infer<typeof ProviderThreadSchema>;

export const ProviderTurnStatus = {
  running: "running",
  completed: "completed",
  interrupted: "interrupted",
  failed: "failed",
  abandoned: "abandoned",
} as const;
export type ProviderTurnStatus = (typeof ProviderTurnStatus)[keyof typeof ProviderTurnStatus];
export const ProviderTurnStatusSchema = z.enum(ProviderTurnStatus);

/** One native turn of a provider thread: the provider side of a run attempt. */
export const ProviderTurnSchema = z.object({
  id: EntityIdSchema,
  providerThreadId: EntityIdSchema,
  threadId: EntityIdSchema,
  runId: EntityIdSchema,
  runAttemptId: EntityIdSchema,
  nativeTurnId: z.string().min(1),
  status: ProviderTurnStatusSchema,
  startedAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  endedAt: IsoTimeSchema.nullable(),
});
export type ProviderTurn = z.infer<typeof ProviderTurnSchema>;
