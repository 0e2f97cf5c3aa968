import type { SessionReleaseReason } from "../effects.js";
import type { CheckpointFile, CheckpointStatus, CheckpointTrigger } from "../entities/checkpoints.js";
import type { ProviderItem, TurnEndStatus } from "../providerEvents.js";
import type { BudgetLimits } from "../entities/budgets.js";

/**
 * Runtime ingestion commands: how provider output and engine housekeeping
 * re-enter the log (DESIGN.md §1, "provider output becomes commands again").
 * They are Loom's own, outside the spec's public and internal command sets,
 * and only the engine dispatches them: the HTTP API refuses their names.
 */
export const RuntimeCommandType = {
  sessionOpened: "provider-runtime.session-opened",
  sessionReleased: "provider-runtime.session-released",
  attemptStarted: "provider-runtime.attempt-started",
  turnStarted: "provider-runtime.turn-started",
  usageReported: "provider-runtime.usage-reported",
  itemCompleted: "provider-runtime.item-completed",
  turnCompleted: "provider-runtime.turn-completed",
  runLost: "provider-runtime.run-lost",
  deliverTaskNotice: "delegated-task.deliver-notice",
  finalizeTask: "delegated-task.finalize",
  checkpointCaptured: "workspace-runtime.checkpoint-captured",
  budgetExceed: "delegated-task.budget-exceed",
  threadBudgetSet: "thread.budget.set",
  threadBudgetExceed: "thread.budget-exceed",
} as const;
export type RuntimeCommandType = (typeof RuntimeCommandType)[keyof typeof RuntimeCommandType];

interface RuntimeCommand<T extends RuntimeCommandType, D> {
  readonly type: T;
  readonly commandId: string;
  readonly data: D;
}

export type { SessionReleaseReason } from "../effects.js";

/** Token use as a provider reports it for a turn: cumulative, absent counts left out. */
export interface ReportedUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cachedInputTokens?: number;
  readonly reasoningOutputTokens?: number;
  readonly costUsd?: number;
}

export type SessionOpenedCommand = RuntimeCommand<
  "provider-runtime.session-opened",
  { threadId: string; providerSessionId: string; providerInstanceId: string; driver: string }
>;
export type SessionReleasedCommand = RuntimeCommand<
  "provider-runtime.session-released",
  { threadId: string; providerSessionId: string; reason: SessionReleaseReason; message: string }
>;
/** The session manager handed the run to a provider session: a new run attempt, bound to that session. */
export type AttemptStartedCommand = RuntimeCommand<"provider-runtime.attempt-started", { threadId: string; runId: string; providerSessionId: string }>;
/** The provider began the turn; native ids when it has them. */
export type TurnStartedCommand = RuntimeCommand<
  "provider-runtime.turn-started",
  { threadId: string; runId: string; providerSessionId?: string; nativeThreadId?: string | null; nativeTurnId?: string | null }
>;
/** Token use so far in the run's current attempt (coarse checkpoints, not every delta). */
export type UsageReportedCommand = RuntimeCommand<"provider-runtime.usage-reported", { threadId: string; runId: string; usage: ReportedUsage }>;
export type ItemCompletedCommand = RuntimeCommand<
  "provider-runtime.item-completed",
  { threadId: string; runId: string; driver: string; nativeItemId: string; item: ProviderItem }
>;
export type TurnCompletedCommand = RuntimeCommand<
  "provider-runtime.turn-completed",
  { threadId: string; runId: string; status: TurnEndStatus; error: string | null; endReason?: string; usage?: ReportedUsage }
>;
/** A run whose process-bound work was lost (a restart, a session that never opened). */
export type RunLostCommand = RuntimeCommand<
  "provider-runtime.run-lost",
  { threadId: string; runId: string; status: "interrupted" | "failed"; reason: string; message: string }
>;

/**
 * Tell a parent about its task: the result (`completion`), a child's open
 * question, or a child's approval request when the task routes approvals to
 * the parent. Dispatched by the engine when no delegate_task wait is there to
 * receive it; steered into the parent's running turn when its provider can
 * steer, else queued as a follow-up run that wakes it.
 */
export type DeliverTaskNoticeCommand = RuntimeCommand<
  "delegated-task.deliver-notice",
  { taskId: string; kind: "completion" | "question" | "approval"; requestId: string | null }
>;
/** Finalize a task whose child work is over (idempotent; replayed after a restart). */
export type FinalizeTaskCommand = RuntimeCommand<"delegated-task.finalize", { taskId: string }>;

/**
 * A capture effect's outcome: the checkpoint (ready, missing with a reason, or
 * error) in the scope the effect resolved (created here when new). For a
 * child_branch capture, `forRunId` names the worktree child's prepared run
 * that waits for it.
 */
export type CheckpointCapturedCommand = RuntimeCommand<
  "workspace-runtime.checkpoint-captured",
  {
    threadId: string;
    checkpointId: string;
    scopeId: string;
    workspacePath: string;
    ordinal: number;
    runId: string | null;
    trigger: CheckpointTrigger;
    status: CheckpointStatus;
    ref: string;
    commit: string | null;
    files: CheckpointFile[];
    reason: string | null;
    forRunId: string | null;
  }
>;

/** A task's budget ran out (the budget reactor saw its spend reach a limit): record it, stop its work per policy, tell the root. */
export type BudgetExceedCommand = RuntimeCommand<"delegated-task.budget-exceed", { taskId: string }>;

/** Set (or clear, null) a root thread's budget; its wall-clock time and any recorded exhaustion start over. */
export type ThreadBudgetSetCommand = RuntimeCommand<"thread.budget.set", { threadId: string; budget: BudgetLimits | null }>;

/** A root thread's budget ran out: record it, stop its tree's work per policy, tell the root. */
export type ThreadBudgetExceedCommand = RuntimeCommand<"thread.budget-exceed", { threadId: string }>;

export type RuntimeIngestCommand =
  | CheckpointCapturedCommand
  | BudgetExceedCommand
  | ThreadBudgetSetCommand
  | ThreadBudgetExceedCommand
  | DeliverTaskNoticeCommand
  | FinalizeTaskCommand
  | SessionOpenedCommand
  | SessionReleasedCommand
  | AttemptStartedCommand
  | TurnStartedCommand
  | UsageReportedCommand
  | ItemCompletedCommand
  | TurnCompletedCommand
  | RunLostCommand;
