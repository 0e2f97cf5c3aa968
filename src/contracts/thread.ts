import { z } from "zod";
import { PullRequestStatusSchema, PullRequestWatchSchema } from "./pullRequests.js";
import { InteractionModeSchema, RuntimeModeSchema } from "./modes.js";
import { ThreadBudgetSchema } from "./entities/budgets.js";
import { ThreadGuestShareSchema } from "./entities/guestShares.js";

export const IsoTimeSchema = z.string().min(1);

export const ModelSelectionSchema = z.object({
  providerInstanceId: z.string().min(1),
  model: z.string().min(1).nullable(),
});
export type ModelSelection = z.infer<typeof ModelSelectionSchema>;

export const PullRequestLinkSchema = z.object({
  url: z.string().url(),
  number: z.number().int().positive().nullable(),
  title: z.string().nullable(),
  linkedAt: IsoTimeSchema,
  unlinkedAt: IsoTimeSchema.nullable(),
  /** The last status a pull request sync read (docs/pull-requests.md); absent until the first sync. */
  status: PullRequestStatusSchema.nullable().optional(),
});
export type PullRequestLink = z.infer<typeof PullRequestLinkSchema>;

export const ThreadLineageSchema = z.object({
  rootThreadId: z.string().min(1),
  parentThreadId: z.string().min(1).nullable(),
  parentNodeId: z.string().min(1).nullable(),
  relation: z.enum(["root", "subagent", "fork"]),
});
export type ThreadLineage = z.infer<typeof ThreadLineageSchema>;

export const CreatedBySchema = z.enum(["user", "agent", "system"]);
export type CreatedBy = z.infer<typeof CreatedBySchema>;
export const CreationSourceSchema = z.enum(["api", "cli", "mcp", "provider", "scheduler", "ui"]);
export type CreationSource = z.infer<typeof CreationSourceSchema>;

export const QueuedRunRefSchema = z.object({ runId: z.string().min(1), held: z.boolean() });

export const PendingBackgroundTaskKindSchema = z.enum(["subagent", "background_task", "command", "monitor"]);
export type PendingBackgroundTaskKind = z.infer<typeof PendingBackgroundTaskKindSchema>;

/**
 * Background work a thread's agent left running (a background shell, a
 * subagent), as its driver reported it (docs/runs.md, "Background work").
 * A subagent or background_task holds the thread; a command or monitor only
 * when awaited.
 */
export const PendingBackgroundTaskSchema = z.object({
  id: z.string().min(1),
  kind: PendingBackgroundTaskKindSchema,
  awaited: z.literal(true).optional(),
  /** The run whose turn started it. */
  runId: z.string().min(1).optional(),
  /** The driver's own id for it, which the driver is told when it is cancelled. */
  nativeTaskId: z.string().min(1).optional(),
  /** What it is, in the driver's words (a command line, a subagent's description). */
  title: z.string().max(2_000).optional(),
});
export type PendingBackgroundTask = z.infer<typeof PendingBackgroundTaskSchema>;

/**
 * A worktree Loom makes for the thread (t3_thread_launch `worktree`,
 * delegate_task `isolation: "worktree"`). `pending` until the prepared run
 * has created it (worktreePath and branch are then set on the thread) and
 * the project's setup command succeeded; `ready` afterwards. The thread owns
 * the worktree: it is removed when the thread is deleted.
 */
export const ThreadWorkspaceSchema = z.object({
  strategy: z.literal("worktree"),
  status: z.enum(["pending", "ready"]),
  /** A path in the repository the worktree is added to (the project root, or the parent's workspace). */
  repoPath: z.string().min(1),
  /** Commit-ish to start from; null: the repository's HEAD. */
  baseRef: z.string().min(1).nullable(),
  /** Use origin/<branch> when that ref exists locally; nothing is fetched. */
  startFromOrigin: z.boolean(),
  /** A worktree child: the parent's checkpoint (uncommitted work included) its branch starts from. */
  baseCheckpointId: z.string().min(1).nullable(),
  /**
   * The worktree's port block, allocated when the worktree is recorded: no two
   * live threads hold the same one, and a deleted thread's is free again. Its
   * ports and environment: docs/workspaces.md, "Isolation beyond files".
   * Absent before the worktree exists.
   */
  portBlock: z.number().int().nonnegative().optional(),
  /**
   * A worktree child's overlaps: each live sibling in a worktree of its own
   * that changed some of the same files, with those files (sorted). Absent or
   * empty: no overlap known. Both siblings carry the pair.
   */
  overlaps: z.array(z.object({ threadId: z.string().min(1), files: z.array(z.string().min(1)) })).optional(),
});
export type ThreadWorkspace = z.infer<typeof ThreadWorkspaceSchema>;

/**
 * A thread started with an output schema (create_threads, t3_thread_launch
 * `outputSchema`): the answer its first work must end with. `pending` until
 * that work ends; `repairing` while its one repair turn runs; then `matched`
 * (with `value`) or `mismatched` (with `error`). Checked once.
 */
export const ThreadStructuredOutputSchema = z.object({
  schema: z.record(z.string(), z.unknown()),
  status: z.enum(["pending", "repairing", "matched", "mismatched"]),
  repairRunId: z.string().min(1).nullable(),
  value: z.unknown().optional(),
  error: z.object({ message: z.string(), errors: z.array(z.string()) }).nullable(),
});
export type ThreadStructuredOutput = z.infer<typeof ThreadStructuredOutputSchema>;

/**
 * What stopped a run that waits in a limit recovery (docs/limits.md): a
 * usage or plan limit (the default, absent), or an outage: rate limits or
 * overloads past Loom's transient retries, on a thread with somewhere to
 * fail over to; its "reset" is when the instance is tried again.
 */
export const LimitCauseSchema = z.enum(["usage_limit", "outage"]);
export type LimitCause = z.infer<typeof LimitCauseSchema>;

/**
 * A run a usage or plan limit stopped (spec 004 limitRecovery, docs/limits.md):
 * the run, when the limit resets, and whether its work resumes by itself then
 * (`autoResume`) as one follow-up run. `snooze` is the snooze the limit put on
 * the thread (absent when a longer snooze was already in force). Cleared when
 * the work resumes, or when the thread moved on without it.
 */
export const ThreadLimitRecoverySchema = z.object({
  runId: z.string().min(1),
  resetAt: IsoTimeSchema,
  autoResume: z.boolean(),
  /** The provider's own words about the limit. */
  message: z.string(),
  /** Absent for a usage limit. */
  cause: LimitCauseSchema.optional(),
  requestId: z.string().min(1).optional(),
  snooze: z.object({ until: IsoTimeSchema }).optional(),
});
export type ThreadLimitRecovery = z.infer<typeof ThreadLimitRecoverySchema>;

/**
 * The durable thread record (spec 004 §2, OrchestrationV2AppThread). Every
 * thread event carries the whole record, so applying an event is an upsert.
 */
export const AppThreadSchema = z.object({
  id: z.string().min(1),
  projectId: z.string().min(1),
  title: z.string(),
  titleRegenerating: z.boolean(),
  providerInstanceId: z.string().min(1).nullable(),
  modelSelection: ModelSelectionSchema.nullable(),
  runtimeMode: RuntimeModeSchema,
  interactionMode: InteractionModeSchema,
  worktreePath: z.string().nullable(),
  branch: z.string().nullable(),
  pullRequests: z.array(PullRequestLinkSchema),
  lineage: ThreadLineageSchema,
  queuedRuns: z.array(QueuedRunRefSchema),
  createdBy: CreatedBySchema,
  creationSource: CreationSourceSchema,
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  archivedAt: IsoTimeSchema.nullable(),
  deletedAt: IsoTimeSchema.nullable(),
  settledAt: IsoTimeSchema.nullable(),
  autoSettle: z.boolean(),
  snoozedUntil: IsoTimeSchema.nullable(),
  snoozedAt: IsoTimeSchema.nullable(),
  pinnedRank: z.number().int().nonnegative().nullable(),
  activeRank: z.number().int().nonnegative().nullable(),
  lastVisitedAt: IsoTimeSchema.nullable(),
  markedUnreadAt: IsoTimeSchema.nullable(),
  pendingBackgroundTasks: z.array(PendingBackgroundTaskSchema),
  /** The worktree Loom makes and owns for this thread; absent for a thread on a checkout it was given. */
  workspace: ThreadWorkspaceSchema.nullable().optional(),
  /** The thread's pull request watch; absent or null when none runs. */
  pullRequestWatch: PullRequestWatchSchema.nullable().optional(),
  /** Started with an output schema: its structured result as far as known; absent otherwise. */
  structuredOutput: ThreadStructuredOutputSchema.nullable().optional(),
  /** A root thread's tree-wide budget; absent or null when it has none. */
  budget: ThreadBudgetSchema.nullable().optional(),
  /** The thread's live guest share (docs/guest-share.md); absent or null when it was never shared. */
  guestShare: ThreadGuestShareSchema.nullable().optional(),
  /** A usage limit stopped the thread's work (docs/limits.md, "Waiting for the reset"); absent or null otherwise. */
  limitRecovery: ThreadLimitRecoverySchema.nullable().optional(),
});
export type AppThread = z.infer<typeof AppThreadSchema>;
