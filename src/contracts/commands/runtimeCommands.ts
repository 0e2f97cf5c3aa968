import { z } from "zod";
import { IdSchema, commandSchema as command } from "./commandSchema.js";
import { SessionReleaseReasonSchema } from "../effects.js";
import { CheckpointFileSchema, CheckpointStatusSchema, CheckpointTriggerSchema } from "../entities/checkpoints.js";
import { ProviderItemSchema, TurnEndStatus } from "../providerEvents.js";
import { BudgetLimitsSchema } from "../entities/budgets.js";
import { OnCrashPolicySchema } from "../entities/runs.js";
import { LimitCauseSchema, PendingBackgroundTaskKindSchema } from "../thread.js";

/**
 * Runtime ingestion commands: how provider output and engine housekeeping
 * re-enter the log (DESIGN.md §1, "provider output becomes commands again").
 * They are Loom's own, outside the spec's public and internal command sets,
 * and only the engine dispatches them: the HTTP API refuses their names.
 */

export type { SessionReleaseReason } from "../effects.js";

/** Token use as a provider reports it for a turn: cumulative, absent counts left out. */
export const ReportedUsageSchema = z
  .object({
    inputTokens: z.number(),
    outputTokens: z.number(),
    cachedInputTokens: z.number().optional(),
    reasoningOutputTokens: z.number().optional(),
    costUsd: z.number().optional(),
  })
  .strict();
export type ReportedUsage = z.infer<typeof ReportedUsageSchema>;

export const SessionOpenedCommandSchema = command(
  "provider-runtime.session-opened",
  z.object({ threadId: IdSchema, providerSessionId: IdSchema, providerInstanceId: IdSchema, driver: z.string().min(1) }).strict(),
);
export type SessionOpenedCommand = z.infer<typeof SessionOpenedCommandSchema>;

export const SessionReleasedCommandSchema = command(
  "provider-runtime.session-released",
  z.object({ threadId: IdSchema, providerSessionId: IdSchema, reason: SessionReleaseReasonSchema, message: z.string() }).strict(),
);
export type SessionReleasedCommand = z.infer<typeof SessionReleasedCommandSchema>;

/** The session manager handed the run to a provider session: a new run attempt, bound to that session. */
export const AttemptStartedCommandSchema = command(
  "provider-runtime.attempt-started",
  z.object({ threadId: IdSchema, runId: IdSchema, providerSessionId: IdSchema }).strict(),
);
export type AttemptStartedCommand = z.infer<typeof AttemptStartedCommandSchema>;

/** The provider began the turn; native ids when it has them. */
export const TurnStartedCommandSchema = command(
  "provider-runtime.turn-started",
  z
    .object({
      threadId: IdSchema,
      runId: IdSchema,
      providerSessionId: IdSchema.optional(),
      nativeThreadId: z.string().nullable().optional(),
      nativeTurnId: z.string().nullable().optional(),
    })
    .strict(),
);
export type TurnStartedCommand = z.infer<typeof TurnStartedCommandSchema>;

/** Token use so far in the run's current attempt (coarse checkpoints, not every delta). */
export const UsageReportedCommandSchema = command(
  "provider-runtime.usage-reported",
  z.object({ threadId: IdSchema, runId: IdSchema, usage: ReportedUsageSchema }).strict(),
);
export type UsageReportedCommand = z.infer<typeof UsageReportedCommandSchema>;

export const ItemCompletedCommandSchema = command(
  "provider-runtime.item-completed",
  z.object({ threadId: IdSchema, runId: IdSchema, driver: z.string().min(1), nativeItemId: z.string().min(1), item: ProviderItemSchema }).strict(),
);
export type ItemCompletedCommand = z.infer<typeof ItemCompletedCommandSchema>;

/** A driver reported background work of a run started or ended (docs/runs.md, "Background work"). */
export const BackgroundTaskReportedCommandSchema = command(
  "provider-runtime.background-task",
  z
    .object({
      threadId: IdSchema,
      runId: IdSchema,
      driver: z.string().min(1),
      nativeTaskId: z.string().min(1).max(512),
      kind: PendingBackgroundTaskKindSchema,
      awaited: z.boolean(),
      status: z.enum(["started", "ended"]),
      title: z.string().max(2_000).optional(),
    })
    .strict(),
);
export type BackgroundTaskReportedCommand = z.infer<typeof BackgroundTaskReportedCommandSchema>;

export const TurnCompletedCommandSchema = command(
  "provider-runtime.turn-completed",
  z
    .object({
      threadId: IdSchema,
      runId: IdSchema,
      status: z.enum(TurnEndStatus),
      error: z.string().nullable(),
      endReason: z.string().optional(),
      usage: ReportedUsageSchema.optional(),
      /**
       * The usage limit that stopped a failed turn (its reset time) and whether the instance resumes work after it
       * (docs/limits.md); with cause outage, the transient limits that outlasted Loom's retries, and when to try again.
       */
      limit: z.object({ resetAt: z.string().min(1), message: z.string(), autoResume: z.boolean(), cause: LimitCauseSchema.optional() }).strict().optional(),
    })
    .strict(),
);
export type TurnCompletedCommand = z.infer<typeof TurnCompletedCommandSchema>;

/**
 * The limit that stopped a thread's run has reset: its work resumes as one
 * follow-up run (docs/limits.md). Sent by the limit resumer at `resetAt`
 * with a command id derived from (thread, run, reset), so a retry or a
 * second node resumes it once; a recovery that is no longer the thread's is
 * refused (limit_recovery_stale).
 */
export const LimitRecoveryResumeCommandSchema = command(
  "thread.limit-recovery.resume",
  z.object({ threadId: IdSchema, runId: IdSchema, resetAt: z.string().min(1) }).strict(),
);
export type LimitRecoveryResumeCommand = z.infer<typeof LimitRecoveryResumeCommandSchema>;

/** A run whose process-bound work was lost (a restart, a session that never opened). */
export const RunLostCommandSchema = command(
  "provider-runtime.run-lost",
  z
    .object({
      threadId: IdSchema,
      runId: IdSchema,
      status: z.enum(["interrupted", "failed"]),
      reason: z.string(),
      message: z.string(),
      /** The run's provider instance's configured onCrash, when it sets one: the decider weighs it with the delegation's (src/core/run/crashResume.ts). */
      instanceOnCrash: OnCrashPolicySchema.optional(),
    })
    .strict(),
);
export type RunLostCommand = z.infer<typeof RunLostCommandSchema>;

/**
 * Tell a parent about its task: the result (`completion`), a child's open
 * question, or a child's approval request when the task routes approvals to
 * the parent. Dispatched by the engine when no delegate_task wait is there to
 * receive it; steered into the parent's running turn when its provider can
 * steer, else queued as a follow-up run that wakes it.
 */
export const DeliverTaskNoticeCommandSchema = command(
  "delegated-task.deliver-notice",
  z.object({ taskId: IdSchema, kind: z.enum(["completion", "question", "approval"]), requestId: IdSchema.nullable() }).strict(),
);
export type DeliverTaskNoticeCommand = z.infer<typeof DeliverTaskNoticeCommandSchema>;

/** Finalize a task whose child work is over (idempotent; replayed after a restart). */
export const FinalizeTaskCommandSchema = command("delegated-task.finalize", z.object({ taskId: IdSchema }).strict());
export type FinalizeTaskCommand = z.infer<typeof FinalizeTaskCommandSchema>;

/**
 * A capture effect's outcome: the checkpoint (ready, missing with a reason, or
 * error) in the scope the effect resolved (created here when new). For a
 * child_branch capture, `forRunId` names the worktree child's prepared run
 * that waits for it.
 */
export const CheckpointCapturedCommandSchema = command(
  "workspace-runtime.checkpoint-captured",
  z
    .object({
      threadId: IdSchema,
      checkpointId: IdSchema,
      scopeId: IdSchema,
      workspacePath: z.string(),
      ordinal: z.number().int().nonnegative(),
      runId: IdSchema.nullable(),
      trigger: CheckpointTriggerSchema,
      status: CheckpointStatusSchema,
      ref: z.string(),
      commit: z.string().nullable(),
      files: z.array(CheckpointFileSchema),
      reason: z.string().nullable(),
      forRunId: IdSchema.nullable(),
    })
    .strict(),
);
export type CheckpointCapturedCommand = z.infer<typeof CheckpointCapturedCommandSchema>;

/** A task's budget ran out (the budget reactor saw its spend reach a limit): record it, stop its work per policy, tell the root. */
export const BudgetExceedCommandSchema = command("delegated-task.budget-exceed", z.object({ taskId: IdSchema }).strict());
export type BudgetExceedCommand = z.infer<typeof BudgetExceedCommandSchema>;

/** Set (or clear, null) a root thread's budget; its wall-clock time and any recorded exhaustion start over. */
export const ThreadBudgetSetCommandSchema = command("thread.budget.set", z.object({ threadId: IdSchema, budget: BudgetLimitsSchema.nullable() }).strict());
export type ThreadBudgetSetCommand = z.infer<typeof ThreadBudgetSetCommandSchema>;

/**
 * Raise a budget (docs/budgets.md, "Pause and raise"): new, higher values for
 * limits it already has (and optionally its policy). `callerThreadId` is the
 * agent that asks (null: the owner); an agent may raise only a budget below
 * its own thread, and never past the budgets that govern that budget.
 */
export const BudgetRaiseCommandSchema = command(
  "budget.raise",
  z
    .object({
      holder: z.object({ kind: z.enum(["task", "thread", "workflow"]), id: IdSchema }).strict(),
      limits: BudgetLimitsSchema,
      callerThreadId: IdSchema.nullable(),
    })
    .strict(),
);
export type BudgetRaiseCommand = z.infer<typeof BudgetRaiseCommandSchema>;

/** A root thread's budget ran out: record it, stop its tree's work per policy, tell the root. */
export const ThreadBudgetExceedCommandSchema = command("thread.budget-exceed", z.object({ threadId: IdSchema }).strict());
export type ThreadBudgetExceedCommand = z.infer<typeof ThreadBudgetExceedCommandSchema>;
