import { z } from "zod";
import { BudgetLimitsSchema } from "../entities/budgets.js";
import { ApprovalDecisionSchema } from "../turnItemParts.js";
import { DRY_RUN_DESCRIPTION, LaunchEstimateSchema } from "./launchEstimate.js";
import { OutputSchemaInput } from "./outputSchema.js";
import { DelegationTargetInput } from "./threadTools.js";
import { DelegateTaskResultSchema, PendingRequestSummarySchema } from "./toolOutputs.js";

/** Questions one request may be answered for at once. */
const MAX_ANSWERS = 100;

/** Inputs and outputs of the delegation and pending-request tools (spec 000). */
export const DelegateTaskInput = z
  .object({
    task: z.string().min(1).max(200_000).describe("The complete brief: the child receives only this (plus the role instruction), never your conversation unless relation is fork"),
    target: DelegationTargetInput.optional().describe("Where the child runs; omitted fields inherit from you"),
    title: z.string().min(1).max(500).optional(),
    role: z.enum(["implementation", "research", "review", "design", "test", "general"]).optional(),
    mode: z.enum(["async", "wait"]).optional().describe("async (default): return at once; wait: return on the result, a blocking question, a pending approval, or the wait cap"),
    timeoutMs: z.number().int().min(0).max(3_600_000).optional().describe("For mode wait; capped by the server"),
    clientRequestId: z.string().min(1).max(200).optional().describe("Stable per delegation round: a retry returns the same task instead of a second child"),
    runtimeMode: z.enum(["inherit", "approval-required", "auto-accept-edits", "full-access"]).optional(),
    interactionMode: z.enum(["inherit", "plan", "default"]).optional(),
    relation: z
      .enum(["subagent", "fork"])
      .optional()
      .describe("subagent (default): the child gets only `task`; fork: the child starts from your conversation (a bounded transcript of this thread) plus `task`"),
    isolation: z
      .enum(["shared", "worktree"])
      .optional()
      .describe("shared (default): the child works in your checkout; worktree: a git worktree of its own, branched from your workspace as it is now (uncommitted changes included), so parallel children never touch each other's files"),
    outputSchema: OutputSchemaInput.optional(),
    budget: BudgetLimitsSchema.optional().describe("Limits on what the child's whole subtree may spend (tokens, turns, wallClockMs, spawns, costUsd); inherited limits can only be narrowed"),
    approvalRouting: z
      .enum(["owner", "parent"])
      .optional()
      .describe("owner (default): the child's approval requests wait for the user; parent: you are told of each one and may decide it with t3_pending_request_respond within your own runtime mode, or leave it to the user"),
    onCrash: z
      .enum(["resume", "fail"])
      .optional()
      .describe("resume (default): if Loom restarts or its node is lost while the child works, the child's run starts again where its conversation stopped; fail: it ends interrupted"),
    dryRun: z.boolean().optional().describe(DRY_RUN_DESCRIPTION),
  })
  .strict();
export type DelegateTaskInput = z.infer<typeof DelegateTaskInput>;

export const TaskStatusInput = z.object({ taskId: z.string().min(1).max(512) }).strict();
export type TaskStatusInput = z.infer<typeof TaskStatusInput>;

export const TaskCancelInput = z
  .object({ taskId: z.string().min(1).max(512), reason: z.string().min(1).max(2_000).optional() })
  .strict();
export type TaskCancelInput = z.infer<typeof TaskCancelInput>;

export const PendingRequestListInput = z.object({ threadId: z.string().min(1).max(512) }).strict();
export type PendingRequestListInput = z.infer<typeof PendingRequestListInput>;

export const PendingRequestReadInput = z.object({ threadId: z.string().min(1).max(512), requestId: z.string().min(1).max(512) }).strict();
export type PendingRequestReadInput = z.infer<typeof PendingRequestReadInput>;

export const PendingRequestRespondInput = z
  .object({
    threadId: z.string().min(1).max(512),
    requestId: z.string().min(1).max(512),
    answers: z
      .record(z.string().min(1).max(512), z.union([z.string().max(20_000), z.array(z.string().max(20_000)).max(50)]))
      .refine((answers) => Object.keys(answers).length <= MAX_ANSWERS, { message: `at most ${MAX_ANSWERS} answers` })
      .meta({ maxProperties: MAX_ANSWERS })
      .optional()
      .describe("Answers keyed by question id (from t3_pending_request_read)"),
    answer: z.string().max(20_000).optional().describe("Shorthand: one answer for a single-question request"),
    dismiss: z.boolean().optional().describe("Close the question without an answer"),
    decision: ApprovalDecisionSchema.optional().describe(
      "An approval's decision, for a child delegated to you with approvalRouting parent: accept only what your own runtime mode allows without asking; decline always",
    ),
  })
  .strict();
export type PendingRequestRespondInput = z.infer<typeof PendingRequestRespondInput>;

// Outputs: the structuredContent each delegation tool answers with.

/** The task, or with dryRun the estimate (nothing started). */
export const DelegateTaskOutput = z.union([DelegateTaskResultSchema, LaunchEstimateSchema]);
export const TaskStatusOutput = DelegateTaskResultSchema;
export const TaskCancelOutput = DelegateTaskResultSchema.extend({
  cancelReason: z.string().nullable(),
  /** Follow-ups that lost their child run but still showed as running here, cancelled by this call (their child run ids). */
  cancelledFollowUps: z.array(z.string()),
});

export const PendingRequestListOutput = z.object({ threadId: z.string(), requests: z.array(PendingRequestSummarySchema) });
export const PendingRequestReadOutput = PendingRequestSummarySchema.extend({
  payload: z.record(z.string(), z.unknown()),
  resolution: z.record(z.string(), z.unknown()).nullable(),
  resolvedAt: z.string().nullable(),
});
export const PendingRequestRespondOutput = PendingRequestSummarySchema;
