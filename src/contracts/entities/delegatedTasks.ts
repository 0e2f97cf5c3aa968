import { z } from "zod";
import { WorkflowStepRefSchema } from "./workflows.js";
import { InteractionModeSchema, RuntimeModeSchema } from "../modes.js";
import { IsoTimeSchema } from "../thread.js";
import { BudgetExceededSchema, BudgetLimitsSchema } from "./budgets.js";
import { EntityIdSchema, NullableEntityIdSchema } from "./fields.js";
import { OnCrashPolicySchema } from "./runs.js";

/** The optional role instruction given to the child with its task (spec 000, delegate_task). */
export const DelegatedTaskRole = {
  implementation: "implementation",
  research: "research",
  review: "review",
  design: "design",
  test: "test",
  general: "general",
} as const;
export type DelegatedTaskRole = (typeof DelegatedTaskRole)[keyof typeof DelegatedTaskRole];
export const DelegatedTaskRoleSchema = z.enum(DelegatedTaskRole);

/** `async` answers at once with the durable state; `wait` blocks until a result or timeout. */
export const DelegationMode = {
  async: "async",
  wait: "wait",
} as const;
export type DelegationMode = (typeof DelegationMode)[keyof typeof DelegationMode];
export const DelegationModeSchema = z.enum(DelegationMode);

/**
 * The task state machine as task_status reports it (spec 000,
 * DelegateTaskResult.status). A task stays nonterminal until all its known
 * work finishes; its published summary and result transfer never change after.
 */
export const DelegatedTaskStatus = {
  queued: "queued",
  running: "running",
  waiting: "waiting",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  interrupted: "interrupted",
} as const;
export type DelegatedTaskStatus = (typeof DelegatedTaskStatus)[keyof typeof DelegatedTaskStatus];
export const DelegatedTaskStatusSchema = z.enum(DelegatedTaskStatus);

const terminalDelegatedTaskStatuses: ReadonlySet<DelegatedTaskStatus> = new Set([
  DelegatedTaskStatus.completed,
  DelegatedTaskStatus.failed,
  DelegatedTaskStatus.cancelled,
  DelegatedTaskStatus.interrupted,
]);
export function isTerminalDelegatedTaskStatus(status: DelegatedTaskStatus): boolean {
  return terminalDelegatedTaskStatuses.has(status);
}

/**
 * Whether the task's completion wakes the parent thread with a follow-up run
 * carrying the result (`on_completion`), or the parent only reads it through
 * a wait or task_status (`never`). Changed by delegated_task.wake-policy.
 */
export const WakePolicy = {
  onCompletion: "on_completion",
  never: "never",
} as const;
export type WakePolicy = (typeof WakePolicy)[keyof typeof WakePolicy];
export const WakePolicySchema = z.enum(WakePolicy);

/**
 * Automatic delivery of the result to the parent: `not_ready` until the task
 * is terminal, then `pending` until a follow-up run carries it (`delivered`),
 * the parent reads it itself (`acknowledged`), or delivery is cancelled, e.g.
 * by task_cancel (`disposed`). Only `pending` ever changes again.
 */
export const CompletionDeliveryStatus = {
  notReady: "not_ready",
  pending: "pending",
  delivered: "delivered",
  acknowledged: "acknowledged",
  disposed: "disposed",
} as const;
export type CompletionDeliveryStatus = (typeof CompletionDeliveryStatus)[keyof typeof CompletionDeliveryStatus];
export const CompletionDeliveryStatusSchema = z.enum(CompletionDeliveryStatus);

/** A follow-up's state on the parent: running until its child run ends, then that run's terminal status. */
export const TaskFollowUpStatus = {
  running: "running",
  completed: "completed",
  failed: "failed",
  interrupted: "interrupted",
  cancelled: "cancelled",
} as const;
export type TaskFollowUpStatus = (typeof TaskFollowUpStatus)[keyof typeof TaskFollowUpStatus];

export const TaskFollowUpSchema = z.object({
  /** The child run the follow-up started or queued. */
  runId: EntityIdSchema,
  status: z.enum(TaskFollowUpStatus),
  createdAt: IsoTimeSchema,
  endedAt: IsoTimeSchema.nullable(),
});
export type TaskFollowUp = z.infer<typeof TaskFollowUpSchema>;

/** Why a task's final answer is not its structured result: the last answer's validation errors. */
export const StructuredResultErrorSchema = z.object({ message: z.string(), errors: z.array(z.string()) });
export type StructuredResultError = z.infer<typeof StructuredResultErrorSchema>;

/**
 * A delegate_task call as the parent thread's durable projection keeps it
 * (spec 000, Delegated Task Lifecycle). `taskId` is also the id of the
 * parent's app_delegated Subagent. `childRunId` names the original run only:
 * follow-ups sent to the child later never replace the published result.
 * The same `clientRequestId` from the same provider session returns this
 * task instead of creating another.
 */
/** One wait holding a task: its id, the parent run it blocks (null for a caller without one) and the server node serving it. */
export const TaskHoldSchema = z.object({ waitId: z.string().min(1), runId: z.string().min(1).nullable(), holder: z.string().min(1) }).strict();
export type TaskHold = z.infer<typeof TaskHoldSchema>;

/** An instance a delegation may move to (and the model there; null: its first). */
export const TaskFallbackSchema = z.object({ providerInstanceId: z.string().min(1), model: z.string().min(1).nullable() }).strict();
export type TaskFallback = z.infer<typeof TaskFallbackSchema>;

export const DelegatedTaskSchema = z.object({
  taskId: EntityIdSchema,
  parentThreadId: EntityIdSchema,
  parentRunId: EntityIdSchema,
  parentNodeId: EntityIdSchema,
  childThreadId: EntityIdSchema,
  childRunId: NullableEntityIdSchema,
  childNodeId: EntityIdSchema,
  providerInstanceId: EntityIdSchema,
  model: z.string().min(1).nullable(),
  role: DelegatedTaskRoleSchema.nullable(),
  title: z.string(),
  /** The prompt the child receives: the only context it gets from the parent. */
  task: z.string().min(1),
  mode: DelegationModeSchema,
  runtimeMode: RuntimeModeSchema,
  interactionMode: InteractionModeSchema,
  clientRequestId: z.string().min(1).nullable(),
  status: DelegatedTaskStatusSchema,
  summary: z.string().nullable(),
  resultContextTransferId: NullableEntityIdSchema,
  wakePolicy: WakePolicySchema,
  completionDelivery: CompletionDeliveryStatusSchema,
  cancelReason: z.string().nullable(),
  /** Set by task_cancel: once the child's turn ends, a completed result settles as interrupted. */
  cancelRequestedAt: IsoTimeSchema.nullable(),
  /** How deep the child sits below its root thread (a root's children are depth 1). */
  depth: z.number().int().positive(),
  /**
   * Runs on the parent that carry a notice about this task (a completion, a
   * child's question or a routed approval), so answering or disposing can cancel one still queued.
   */
  notices: z.array(
    z.object({
      kind: z.enum(["completion", "question", "approval"]),
      requestId: NullableEntityIdSchema,
      runId: NullableEntityIdSchema,
      delivery: z.enum(["steered", "queued"]),
      /** When the run carrying a queued notice ended interrupted (a restart, a lost node, a crashed session) before its agent answered: the notice goes out again (docs/delegation.md). */
      lostAt: IsoTimeSchema.optional(),
    }),
  ),
  /**
   * Follow-ups sent to the child after the task was final (t3_thread_send on
   * its childThreadId): each runs as a fresh turn in the child and never
   * changes the published result. The parent shows one as running until its
   * child run ends. Absent in logs written before follow-ups were tracked.
   */
  followUps: z.array(TaskFollowUpSchema).optional(),
  /**
   * Structured results (docs/delegation.md): the JSON Schema the final answer
   * must match; the follow-up run that asked the child once to fix a
   * mismatching answer; the parsed value once it matched, or the errors of
   * the last answer. Absent on tasks without a schema and in older logs.
   */
  outputSchema: z.record(z.string(), z.unknown()).nullable().optional(),
  schemaRepairRunId: NullableEntityIdSchema.optional(),
  structuredResult: z.unknown().optional(),
  structuredResultError: StructuredResultErrorSchema.nullable().optional(),
  /** The effective budget of the child's subtree (after narrowing by every ancestor's), and when it ran out (docs/budgets.md). */
  budget: BudgetLimitsSchema.nullable().optional(),
  budgetExceeded: BudgetExceededSchema.nullable().optional(),
  /** parent: the child's approval requests reach the parent as notices it may decide (docs/delegation.md). Absent means owner. */
  approvalRouting: z.enum(["owner", "parent"]).optional(),
  /** An agent() child of a workflow script: its lineage back to the workflow step (docs/workflows.md). */
  workflowStep: WorkflowStepRefSchema.optional(),
  /** What a restart or a lost node does to the child's runs (docs/runs.md, "Work after a crash"); absent means resume. */
  onCrash: OnCrashPolicySchema.optional(),
  /** The delegation's `target.fallbacks`: where the child's work may move, in order, when a usage limit stops it (docs/limits.md, "Failover"). Absent means none. */
  fallbacks: z.array(TaskFallbackSchema).optional(),
  /**
   * The waits holding the task (docs/delegation.md, "Waits and notices"): a
   * delegate_task or t3_background_wait wait in progress that will hand the
   * parent this task's result or blocking question, so no notice goes out
   * for either while one holds. Recorded when the wait starts, removed when
   * it ends, when the run that waits ends, or when the node that serves it
   * is lost. Absent means none.
   */
  heldBy: z.array(TaskHoldSchema).optional(),
  /**
   * The parent run a wait that was cut short (the provider aborted the call)
   * owes the task's pending question to: it reaches the parent as a notice
   * once that run completes, fails or settles its background work.
   */
  questionsOwedTo: z.string().min(1).nullable().optional(),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
});
export type DelegatedTask = z.infer<typeof DelegatedTaskSchema>;
