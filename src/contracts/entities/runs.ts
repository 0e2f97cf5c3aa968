import { z } from "zod";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { IsoTimeSchema, ModelSelectionSchema } from "../thread.js";
import { TraceParentSchema } from "../traceContext.js";
import { CountSchema, EntityIdSchema, FailureSchema, NullableEntityIdSchema } from "./fields.js";

/** Why a run exists (spec 004 §2, OrchestrationV2Run.kind). */
export const RunKind = {
  userTurn: "user_turn",
  steeredTurn: "steered_turn",
  delegatedTask: "delegated_task",
  scheduledTask: "scheduled_task",
  systemFollowUp: "system_follow_up",
  rollbackRecovery: "rollback_recovery",
} as const;
export type RunKind = (typeof RunKind)[keyof typeof RunKind];
export const RunKindSchema = z.enum(RunKind);

/**
 * What happens to a run whose agent process was lost with its server (a
 * restart, a lost node): `resume` starts it again as a new attempt of the
 * same run; `fail` ends it `interrupted` (docs/runs.md, "Work after a crash").
 */
export const OnCrashPolicySchema = z.enum(["resume", "fail"]);
export type OnCrashPolicy = z.infer<typeof OnCrashPolicySchema>;

/** One resume of a run after its process was lost: when, why, and the tool calls left unfinished (which may be half done). */
export const CrashResumeSchema = z.object({
  at: IsoTimeSchema,
  /** `server_restarted` or `node_lost`. */
  reason: z.string().min(1),
  /** The attempt that was lost. */
  lostAttemptOrdinal: z.number().int().nonnegative(),
  unfinished: z.array(z.string()),
});
export type CrashResume = z.infer<typeof CrashResumeSchema>;

/**
 * The run state machine (spec 004 §2). `queued` → `starting` → `running`,
 * which may pause in a `waiting_*` or `settling_background_work` state; the
 * last four are terminal and never change again.
 */
export const RunStatus = {
  queued: "queued",
  starting: "starting",
  running: "running",
  waitingOnApproval: "waiting_on_approval",
  waitingOnUserInput: "waiting_on_user_input",
  waitingOnSubagent: "waiting_on_subagent",
  settlingBackgroundWork: "settling_background_work",
  completed: "completed",
  interrupted: "interrupted",
  failed: "failed",
  cancelled: "cancelled",
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];
export const RunStatusSchema = z.enum(RunStatus);

const terminalRunStatuses: ReadonlySet<RunStatus> = new Set([
  RunStatus.completed,
  RunStatus.interrupted,
  RunStatus.failed,
  RunStatus.cancelled,
]);
export function isTerminalRunStatus(status: RunStatus): boolean {
  return terminalRunStatuses.has(status);
}

/**
 * A prepared run (spec 004 prepared-run.*): work Loom does before the turn's
 * provider starts. `workspace` creates the thread's worktree (from a base ref
 * or, for a worktree child, from its parent's checkpoint) and runs the
 * project's setup command; `rollback` restores a checkpoint before a
 * rollback_recovery turn. The provider starts only on `prepared-run.release`.
 */
export const RunPreparationKind = { workspace: "workspace", rollback: "rollback" } as const;
export type RunPreparationKind = (typeof RunPreparationKind)[keyof typeof RunPreparationKind];

export const RunPreparationStep = {
  /** Waiting for the parent's checkpoint a worktree child branches from. */
  base: "base",
  worktree: "worktree",
  setup: "setup",
  restore: "restore",
} as const;
export type RunPreparationStep = (typeof RunPreparationStep)[keyof typeof RunPreparationStep];

export const RunPreparationStatus = { preparing: "preparing", ready: "ready", failed: "failed" } as const;
export type RunPreparationStatus = (typeof RunPreparationStatus)[keyof typeof RunPreparationStatus];

export const RunPreparationSchema = z.object({
  kind: z.enum(RunPreparationKind),
  status: z.enum(RunPreparationStatus),
  /** The step in progress, or the one that failed. */
  step: z.enum(RunPreparationStep),
  /** The setup command's command_execution turn item, once the setup started. */
  setupItemId: NullableEntityIdSchema,
  /** rollback: the checkpoint restored. */
  checkpointId: NullableEntityIdSchema,
  /** rollback: overwrite uncaptured changes in the way. */
  force: z.boolean(),
  startedAt: IsoTimeSchema,
  endedAt: IsoTimeSchema.nullable(),
});
export type RunPreparation = z.infer<typeof RunPreparationSchema>;

/**
 * One unit of agent work in a thread (spec 004 §2, OrchestrationV2Run).
 * `ordinal` counts runs within the thread from 1 and never repeats.
 */
export const RunSchema = z.object({
  id: EntityIdSchema,
  threadId: EntityIdSchema,
  ordinal: z.number().int().positive(),
  kind: RunKindSchema,
  status: RunStatusSchema,
  providerInstanceId: NullableEntityIdSchema,
  driver: z.string().min(1).nullable(),
  modelSelection: ModelSelectionSchema.nullable(),
  /** The modes the run executes with, fixed when the run is created. */
  runtimeMode: RuntimeModeSchema,
  interactionMode: InteractionModeSchema,
  /** The user message that started the run, when one did. */
  messageId: NullableEntityIdSchema,
  guestMessageId: EntityIdSchema.optional(),
  /** Set once, when the run fails; the provider error comes before any progress text. */
  failure: FailureSchema.nullable(),
  /**
   * While `queued`: the run's place in its thread's queue (0 runs next) and
   * whether Stop holds it until the queue is resumed. Null once it leaves the queue.
   */
  queueRank: z.number().int().nonnegative().nullable(),
  held: z.boolean(),
  /** When an interrupt (or Stop) reached the run; later sends may not restart it again. */
  interruptRequestedAt: IsoTimeSchema.nullable(),
  /** Why a terminal run ended, e.g. `completed`, `interrupted_by_user`, `server_restarted`, `session_reaped`. */
  endReason: z.string().nullable(),
  /** Work done before the provider starts (a prepared run); absent for a run that needs none. */
  preparation: RunPreparationSchema.optional(),
  /** The W3C traceparent of the call that started the run (an MCP request's header), when it carried one (docs/telemetry.md). */
  traceParent: TraceParentSchema.optional(),
  /** Each time the run was started again after its process was lost (onCrash resume), oldest first; absent when never. */
  resumes: z.array(CrashResumeSchema).optional(),
  /** While settling_background_work: when Loom stops waiting for the background work and settles the run anyway (docs/runs.md, "Background work"). */
  backgroundSettleBy: IsoTimeSchema.optional(),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  startedAt: IsoTimeSchema.nullable(),
  endedAt: IsoTimeSchema.nullable(),
});
export type Run = z.infer<typeof RunSchema>;

/** The attempt state machine (spec 004 §2, OrchestrationV2RunAttempt.status). */
export const RunAttemptStatus = {
  starting: "starting",
  running: "running",
  completed: "completed",
  interrupted: "interrupted",
  failed: "failed",
  abandoned: "abandoned",
} as const;
export type RunAttemptStatus = (typeof RunAttemptStatus)[keyof typeof RunAttemptStatus];
export const RunAttemptStatusSchema = z.enum(RunAttemptStatus);

const terminalRunAttemptStatuses: ReadonlySet<RunAttemptStatus> = new Set([
  RunAttemptStatus.completed,
  RunAttemptStatus.interrupted,
  RunAttemptStatus.failed,
  RunAttemptStatus.abandoned,
]);
export function isTerminalRunAttemptStatus(status: RunAttemptStatus): boolean {
  return terminalRunAttemptStatuses.has(status);
}

/** Token usage reported by the provider for one attempt; absent counts are null. */
export const TokenUsageSchema = z.object({
  inputTokens: CountSchema,
  outputTokens: CountSchema,
  cachedInputTokens: CountSchema.nullable(),
  reasoningOutputTokens: CountSchema.nullable(),
  costUsd: z.number().nonnegative().nullable(),
});
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

/**
 * One try at executing a run on a provider (spec 004 §2). A run retried after
 * a crash or provider failure gets a new attempt with the next
 * `attemptOrdinal`; the old one ends `abandoned` or `failed`.
 */
export const RunAttemptSchema = z.object({
  id: EntityIdSchema,
  runId: EntityIdSchema,
  threadId: EntityIdSchema,
  attemptOrdinal: z.number().int().positive(),
  status: RunAttemptStatusSchema,
  providerSessionId: NullableEntityIdSchema,
  providerThreadId: NullableEntityIdSchema,
  providerTurnId: NullableEntityIdSchema,
  usage: TokenUsageSchema.nullable(),
  failure: FailureSchema.nullable(),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  endedAt: IsoTimeSchema.nullable(),
});
export type RunAttempt = z.infer<typeof RunAttemptSchema>;

/** What a node of the execution graph stands for (spec 004 §2, OrchestrationV2ExecutionNode.kind). */
export const ExecutionNodeKind = {
  turn: "turn",
  step: "step",
  toolCall: "tool_call",
  subagent: "subagent",
  approvalGate: "approval_gate",
  userInputGate: "user_input_gate",
  checkpoint: "checkpoint",
  compaction: "compaction",
  handoff: "handoff",
} as const;
export type ExecutionNodeKind = (typeof ExecutionNodeKind)[keyof typeof ExecutionNodeKind];
export const ExecutionNodeKindSchema = z.enum(ExecutionNodeKind);

/** The node state machine (spec 004 §2). `rolled_back` marks work undone by a checkpoint rollback. */
export const ExecutionNodeStatus = {
  idle: "idle",
  pending: "pending",
  running: "running",
  waiting: "waiting",
  completed: "completed",
  interrupted: "interrupted",
  failed: "failed",
  cancelled: "cancelled",
  rolledBack: "rolled_back",
} as const;
export type ExecutionNodeStatus = (typeof ExecutionNodeStatus)[keyof typeof ExecutionNodeStatus];
export const ExecutionNodeStatusSchema = z.enum(ExecutionNodeStatus);

const terminalExecutionNodeStatuses: ReadonlySet<ExecutionNodeStatus> = new Set([
  ExecutionNodeStatus.completed,
  ExecutionNodeStatus.interrupted,
  ExecutionNodeStatus.failed,
  ExecutionNodeStatus.cancelled,
  ExecutionNodeStatus.rolledBack,
]);
export function isTerminalExecutionNodeStatus(status: ExecutionNodeStatus): boolean {
  return terminalExecutionNodeStatuses.has(status);
}

/**
 * A node of the durable execution graph (spec 004 §2). Nodes form a tree per
 * run through `parentNodeId`; the transcript (turn items) is projected from
 * them and never the other way round.
 */
export const ExecutionNodeSchema = z.object({
  id: EntityIdSchema,
  threadId: EntityIdSchema,
  runId: EntityIdSchema,
  runAttemptId: NullableEntityIdSchema,
  parentNodeId: NullableEntityIdSchema,
  kind: ExecutionNodeKindSchema,
  status: ExecutionNodeStatusSchema,
  /** A short human label, e.g. the tool name of a tool_call node. */
  label: z.string().nullable(),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  endedAt: IsoTimeSchema.nullable(),
});
export type ExecutionNode = z.infer<typeof ExecutionNodeSchema>;
