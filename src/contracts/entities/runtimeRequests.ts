import { z } from "zod";
import type { RuntimeMode } from "../modes.js";
import { IsoTimeSchema } from "../thread.js";
import { EntityIdSchema, NullableEntityIdSchema } from "./fields.js";

/**
 * What a provider asks of the user mid-run (spec 004 §2). The first five are
 * approvals; a delegated task's `pendingApproval.kind` is one of them (spec 000).
 */
export const RuntimeRequestKind = {
  command: "command",
  fileRead: "file-read",
  fileChange: "file-change",
  mcpElicitation: "mcp-elicitation",
  permission: "permission",
  dynamicToolCall: "dynamic_tool_call",
  userInput: "user_input",
  authRefresh: "auth_refresh",
} as const;
export type RuntimeRequestKind = (typeof RuntimeRequestKind)[keyof typeof RuntimeRequestKind];
export const RuntimeRequestKindSchema = z.enum(RuntimeRequestKind);

export const ApprovalKind = {
  command: RuntimeRequestKind.command,
  fileRead: RuntimeRequestKind.fileRead,
  fileChange: RuntimeRequestKind.fileChange,
  mcpElicitation: RuntimeRequestKind.mcpElicitation,
  permission: RuntimeRequestKind.permission,
} as const;
export type ApprovalKind = (typeof ApprovalKind)[keyof typeof ApprovalKind];
export const ApprovalKindSchema = z.enum(ApprovalKind);

/** Whether a request kind is one of the five approvals. */
export function isApprovalKind(kind: RuntimeRequestKind): kind is ApprovalKind {
  return (Object.values(ApprovalKind) as string[]).includes(kind);
}

/**
 * The approvals an agent may grant a delegated child (docs/delegation.md,
 * Approvals): what its own runtime mode lets it do without asking. Declining
 * is always within reach; anything else is left to the owner.
 */
export const APPROVALS_WITHIN_MODE: Record<RuntimeMode, readonly ApprovalKind[]> = {
  "approval-required": [],
  "auto-accept-edits": [ApprovalKind.fileRead, ApprovalKind.fileChange],
  "full-access": Object.values(ApprovalKind),
};

/**
 * The request state machine (spec 004 §2): `pending` until answered
 * (`resolved`), its provider callback is gone (`expired`), or its run ends
 * (`cancelled`). The durable record can outlive the callback, so a reader
 * must check the status before answering.
 */
export const RuntimeRequestStatus = {
  pending: "pending",
  resolved: "resolved",
  expired: "expired",
  cancelled: "cancelled",
} as const;
export type RuntimeRequestStatus = (typeof RuntimeRequestStatus)[keyof typeof RuntimeRequestStatus];
export const RuntimeRequestStatusSchema = z.enum(RuntimeRequestStatus);

/**
 * A request that blocks (or, when `blocking` is false, only informs) a run
 * until someone answers it. `payload` and `resolution` are kind-specific and
 * opaque at this layer; the provider adapter that raised the request owns
 * their shape.
 */
export const RuntimeRequestSchema = z.object({
  id: EntityIdSchema,
  threadId: EntityIdSchema,
  runId: EntityIdSchema,
  nodeId: NullableEntityIdSchema,
  kind: RuntimeRequestKindSchema,
  status: RuntimeRequestStatusSchema,
  /** False for asynchronous questions that let the run keep working. */
  blocking: z.boolean(),
  /** The provider's id for the pending callback, when it has one. */
  nativeRequestId: z.string().min(1).nullable(),
  payload: z.record(z.string(), z.unknown()),
  resolution: z.record(z.string(), z.unknown()).nullable(),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  resolvedAt: IsoTimeSchema.nullable(),
});
export type RuntimeRequest = z.infer<typeof RuntimeRequestSchema>;
