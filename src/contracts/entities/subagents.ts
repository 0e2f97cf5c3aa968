import { z } from "zod";
import { IsoTimeSchema } from "../thread.js";
import { EntityIdSchema, NullableEntityIdSchema } from "./fields.js";

/**
 * Who owns a subagent: the provider's own sub-agent feature, or Loom, which
 * runs every delegated task as a child thread (spec 000, Delegated Task Lifecycle).
 */
export const SubagentOrigin = {
  providerNative: "provider_native",
  appDelegated: "app_delegated",
} as const;
export type SubagentOrigin = (typeof SubagentOrigin)[keyof typeof SubagentOrigin];
export const SubagentOriginSchema = z.enum(SubagentOrigin);

/** The subagent state machine (spec 004 §2, OrchestrationV2Subagent.status). */
export const SubagentStatus = {
  spawning: "spawning",
  running: "running",
  waiting: "waiting",
  completed: "completed",
  interrupted: "interrupted",
  failed: "failed",
  cancelled: "cancelled",
} as const;
export type SubagentStatus = (typeof SubagentStatus)[keyof typeof SubagentStatus];
export const SubagentStatusSchema = z.enum(SubagentStatus);

const terminalSubagentStatuses: ReadonlySet<SubagentStatus> = new Set([
  SubagentStatus.completed,
  SubagentStatus.interrupted,
  SubagentStatus.failed,
  SubagentStatus.cancelled,
]);
export function isTerminalSubagentStatus(status: SubagentStatus): boolean {
  return terminalSubagentStatuses.has(status);
}

/**
 * A sub-agent as its parent thread sees it (spec 004 §2). An app-delegated
 * subagent's id is the delegated task id and it always has a child thread; a
 * provider-native one may have none. `promptOmitted`/`resultOmitted` mark a
 * body left out of a deduplicated wire snapshot, never a stored record.
 */
export const SubagentSchema = z.object({
  id: EntityIdSchema,
  threadId: EntityIdSchema,
  runId: EntityIdSchema,
  parentNodeId: NullableEntityIdSchema,
  providerInstanceId: NullableEntityIdSchema,
  driver: z.string().min(1).nullable(),
  childThreadId: NullableEntityIdSchema,
  origin: SubagentOriginSchema,
  agentLabel: z.string().nullable(),
  prompt: z.string(),
  promptOmitted: z.literal(true).optional(),
  result: z.string().nullable(),
  resultOmitted: z.literal(true).optional(),
  status: SubagentStatusSchema,
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  endedAt: IsoTimeSchema.nullable(),
});
export type Subagent = z.infer<typeof SubagentSchema>;
