import { z } from "zod";
import { PullRequestStatusSchema } from "../pullRequests.js";
import { DelegatedTaskStatusSchema } from "../entities/delegatedTasks.js";
import { BudgetExceededSchema, BudgetReachedSchema, BudgetRemainingSchema, BudgetLimitsSchema, BudgetSpendSchema } from "../entities/budgets.js";
import { RunKindSchema, RunStatusSchema } from "../entities/runs.js";
import { ApprovalKindSchema, RuntimeRequestKindSchema, RuntimeRequestStatusSchema } from "../entities/runtimeRequests.js";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { CreatedBySchema, CreationSourceSchema, ThreadLineageSchema } from "../thread.js";
import { TURN_ITEM_TYPES } from "../turnItems.js";

/**
 * Output pieces shared by several tools' results. Every tool's output schema
 * (the structuredContent it answers with) is built from these; the MCP
 * endpoint advertises them as `outputSchema` and a test checks real results
 * against them.
 */

const Nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

/** A thread's latest run status, or idle when it has never run. */
export const ThreadStatusSchema = z.union([z.literal("idle"), RunStatusSchema]);

/** The thread's linked pull request; `status` is what the last sync read, `watched` whether a watch runs (docs/pull-requests.md). */
export const LinkedPullRequestSchema = z.object({
  url: z.string(),
  number: Nullable(z.number().int()),
  title: Nullable(z.string()),
  status: Nullable(PullRequestStatusSchema),
  watched: z.boolean(),
});

export const RunSummarySchema = z.object({
  runId: z.string(),
  ordinal: z.number().int(),
  kind: RunKindSchema,
  status: RunStatusSchema,
  endReason: Nullable(z.string()),
  error: Nullable(z.string()),
  createdAt: z.string(),
  endedAt: Nullable(z.string()),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

/**
 * A thread a usage limit stopped (docs/limits.md, "Waiting for the reset"):
 * `waiting_on_limit` while its work resumes by itself at `resetAt`,
 * `stopped_on_limit` when its instance's autoResume is off.
 */
export const LimitRecoveryStatus = { waitingOnLimit: "waiting_on_limit", stoppedOnLimit: "stopped_on_limit" } as const;
export type LimitRecoveryStatus = (typeof LimitRecoveryStatus)[keyof typeof LimitRecoveryStatus];
export const LimitRecoveryViewSchema = z.object({
  status: z.enum(LimitRecoveryStatus),
  resetAt: z.string(),
  /** The run the limit stopped. */
  runId: z.string(),
  /** For a person: "waiting for the limit to reset at 14:05 UTC, resumes by itself". */
  text: z.string(),
});
export type LimitRecoveryView = z.infer<typeof LimitRecoveryViewSchema>;

/** A thread as list and read results show it, with provenance and what it still waits on. */
export const ThreadSummarySchema = z.object({
  threadId: z.string(),
  link: z.string(),
  title: z.string(),
  titleRegenerating: z.boolean(),
  projectId: z.string(),
  providerInstanceId: Nullable(z.string()),
  model: Nullable(z.string()),
  runtimeMode: RuntimeModeSchema,
  interactionMode: InteractionModeSchema,
  relation: ThreadLineageSchema.shape.relation,
  parentThreadId: Nullable(z.string()),
  status: ThreadStatusSchema,
  latestRunId: Nullable(z.string()),
  activeRunId: Nullable(z.string()),
  queuedRuns: z.number().int(),
  pendingRequests: z.number().int(),
  pullRequest: Nullable(LinkedPullRequestSchema),
  archived: z.boolean(),
  snoozed: z.boolean(),
  snoozedUntil: Nullable(z.string()),
  blockedOnThreadWait: z.boolean(),
  pendingBackgroundTasks: z.number().int(),
  createdBy: CreatedBySchema,
  creationSource: CreationSourceSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
  /** The checkout the thread works in when it is not its project's root, and its branch. */
  worktreePath: Nullable(z.string()).optional(),
  branch: Nullable(z.string()).optional(),
  /** A worktree child's live siblings that changed some of the same files, with those files (docs/workspaces.md); absent when none. */
  overlaps: z.array(z.object({ threadId: z.string(), files: z.array(z.string()) })).optional(),
  /** A usage limit stopped the thread's work: when it resets and whether the work resumes by itself; absent otherwise. */
  limitRecovery: LimitRecoveryViewSchema.optional(),
  /**
   * Its run's turn is over and the run settles background work it awaits (docs/runs.md, "Background work"): what
   * and until when, e.g. "settling background work: npm test (command); Loom stops waiting at 14:05 UTC"; absent otherwise.
   */
  backgroundWork: z.string().optional(),
});
export type ThreadSummary = z.infer<typeof ThreadSummarySchema>;

/** One timeline item as a read shows it. Optional fields appear only for the item types that have them. */
export const ItemViewSchema = z.object({
  position: z.number().int(),
  itemId: z.string(),
  type: z.enum(TURN_ITEM_TYPES),
  runId: Nullable(z.string()),
  createdAt: z.string(),
  text: z.string(),
  truncated: z.boolean(),
  createdBy: z.string().optional(),
  creationSource: z.string().optional(),
  title: Nullable(z.string()).optional(),
  status: z.string().optional(),
  exitCode: Nullable(z.number()).optional(),
  requestId: z.string().optional(),
  decision: Nullable(z.string()).optional(),
  answers: Nullable(z.record(z.string(), z.array(z.string()))).optional(),
  level: z.string().optional(),
  code: Nullable(z.string()).optional(),
  childThreadId: Nullable(z.string()).optional(),
  sourceThreadId: Nullable(z.string()).optional(),
});
export type ItemView = z.infer<typeof ItemViewSchema>;

/** DelegateTaskResult (spec 000), read from the parent's durable projection. */
export const DelegateTaskResultSchema = z.object({
  taskId: z.string(),
  childThreadId: z.string(),
  childRunId: Nullable(z.string()),
  childNodeId: z.string(),
  status: DelegatedTaskStatusSchema,
  workState: z.enum(["working", "waiting_for_children", "result_available"]),
  hasPendingChildRuns: z.boolean(),
  providerInstanceId: z.string(),
  model: Nullable(z.string()),
  summary: Nullable(z.string()),
  resultContextTransferId: Nullable(z.string()),
  latestTerminalRunId: Nullable(z.string()),
  latestTerminalStatus: Nullable(z.enum(["completed", "failed", "cancelled", "interrupted"])),
  latestTerminalSummary: Nullable(z.string()),
  latestTerminalResultContextTransferId: Nullable(z.string()),
  hasPendingQuestion: z.boolean(),
  pendingApproval: Nullable(z.object({ requestId: z.string(), kind: ApprovalKindSchema, runId: z.string() })),
  waitTimedOut: z.boolean(),
  /** Tasks with an outputSchema: the validated JSON value of the final answer, once it matched. */
  structuredResult: z.unknown().optional(),
  /** Tasks with an outputSchema: why there is no structured result (the last answer's validation errors); null while none is known. */
  structuredResultError: Nullable(z.object({ message: z.string(), errors: z.array(z.string()) })).optional(),
  /** Tasks with a budget: its limits, what the subtree spent, when it ran out, and whether the tree is paused on it until a raise (docs/budgets.md). */
  budget: z
    .object({ limits: BudgetLimitsSchema, spent: BudgetSpendSchema, remaining: BudgetRemainingSchema, reached: BudgetReachedSchema, exceeded: BudgetExceededSchema.nullable(), paused: z.boolean() })
    .optional(),
  /** The child is waiting for a usage limit to reset (status `waiting`): when, and that its work resumes by itself then; absent otherwise. */
  limitRecovery: LimitRecoveryViewSchema.optional(),
  /** The child's run settles background work (status `running`), as ThreadSummary.backgroundWork says it; absent otherwise. */
  backgroundWork: z.string().optional(),
});
export type DelegateTaskResult = z.infer<typeof DelegateTaskResultSchema>;

/** A pending request as the pending-request tools list it. */
export const PendingRequestSummarySchema = z.object({
  requestId: z.string(),
  threadId: z.string(),
  runId: z.string(),
  kind: RuntimeRequestKindSchema,
  status: RuntimeRequestStatusSchema,
  blocking: z.boolean(),
  createdAt: z.string(),
  summary: z.string(),
});
export type PendingRequestSummary = z.infer<typeof PendingRequestSummarySchema>;
