import { z } from "zod";
import { IsoTimeSchema } from "../thread.js";
import { EntityIdSchema } from "./fields.js";

/** A workspace root that threads belong to. `root` is an absolute path on the server host. */
export const ProjectSchema = z.object({
  id: EntityIdSchema,
  root: z.string().min(1),
  name: z.string().min(1),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
});
export type Project = z.infer<typeof ProjectSchema>;

/**
 * The provider session state machine: `starting` → `ready` ⇄ `busy`, ending
 * in `released` (closed on purpose) or `failed`. An MCP credential lives no
 * longer than its session: releasing the session revokes it (spec 000).
 */
export const ProviderSessionStatus = {
  starting: "starting",
  ready: "ready",
  busy: "busy",
  released: "released",
  failed: "failed",
} as const;
export type ProviderSessionStatus = (typeof ProviderSessionStatus)[keyof typeof ProviderSessionStatus];
export const ProviderSessionStatusSchema = z.enum(ProviderSessionStatus);

export function isEndedProviderSessionStatus(status: ProviderSessionStatus): boolean {
  return status === ProviderSessionStatus.released || status === ProviderSessionStatus.failed;
}

/**
 * A live connection to a provider process on behalf of one thread. The
 * native ids are the provider's own and are known only once it answers;
 * `releaseReason` is set together with `releasedAt`.
 */
export const ProviderSessionSchema = z.object({
  id: EntityIdSchema,
  threadId: EntityIdSchema,
  providerInstanceId: EntityIdSchema,
  driver: z.string().min(1),
  status: ProviderSessionStatusSchema,
  nativeSessionId: z.string().min(1).nullable(),
  nativeThreadId: z.string().min(1).nullable(),
  startedAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  releasedAt: IsoTimeSchema.nullable(),
  releaseReason: z.string().nullable(),
});
export type ProviderSession = z.infer<typeof ProviderSessionSchema>;
