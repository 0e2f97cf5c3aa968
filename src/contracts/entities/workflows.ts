import { z } from "zod";
import { IsoTimeSchema } from "../thread.js";
import { BudgetLimitsSchema } from "./budgets.js";
import { EntityIdSchema, FailureSchema, NullableEntityIdSchema } from "./fields.js";

/**
 * Durable workflow scripts (docs/workflows.md). A workflow is a script run in
 * the sandbox on behalf of a parent thread; its journal is the list of its
 * agent() steps, each a delegated task. The record is what t3_workflow_status
 * reads and what a re-run after a restart replays from.
 */
export const WorkflowStatus = {
  running: "running",
  completed: "completed",
  failed: "failed",
  stopped: "stopped",
} as const;
export type WorkflowStatus = (typeof WorkflowStatus)[keyof typeof WorkflowStatus];
export const WorkflowStatusSchema = z.enum(WorkflowStatus);

export function isTerminalWorkflowStatus(status: WorkflowStatus): boolean {
  return status !== "running";
}

export const WorkflowStepStatus = {
  running: "running",
  completed: "completed",
  failed: "failed",
} as const;
export type WorkflowStepStatus = (typeof WorkflowStepStatus)[keyof typeof WorkflowStepStatus];
export const WorkflowStepStatusSchema = z.enum(WorkflowStepStatus);

export const WorkflowPhaseSchema = z.object({ title: z.string().min(1).max(500), detail: z.string().max(5_000).optional() }).strict();
export type WorkflowPhase = z.infer<typeof WorkflowPhaseSchema>;


/** Where a delegated task sits in a workflow: the lineage of an agent() child back to its step. */
export const WorkflowStepRefSchema = z.object({ workflowId: EntityIdSchema, stepId: EntityIdSchema }).strict();
export type WorkflowStepRef = z.infer<typeof WorkflowStepRefSchema>;

/**
 * One agent() call, journaled. `callKey` is the call's identity within the
 * script: its prompt, its options and its ordinal among identical calls; the
 * step id and the task id derive from (workflowId, callKey). A finished step
 * answers the same call on a re-run from `result` (or throws `error` again).
 */
export const WorkflowStepSchema = z.object({
  stepId: EntityIdSchema,
  /** 1-based, in the order the journal recorded the calls. */
  index: z.number().int().positive(),
  callKey: z.string().min(1),
  label: z.string().nullable(),
  phase: z.string().nullable(),
  /** The delegated task doing the work; null when the call was refused before a task existed (budget_exceeded). */
  taskId: NullableEntityIdSchema,
  childThreadId: NullableEntityIdSchema,
  providerInstanceId: NullableEntityIdSchema,
  status: WorkflowStepStatusSchema,
  /** Which task of the call is current: 1, or more after a task lost to a restart was re-issued. */
  attempt: z.number().int().positive().optional(),
  result: z.unknown().optional(),
  error: FailureSchema.nullable(),
  /** The prior workflow's step that answered this call (a resumed workflow's reused prefix): no task ran for it here. */
  resumedFrom: WorkflowStepRefSchema.optional(),
  startedAt: IsoTimeSchema,
  endedAt: IsoTimeSchema.nullable(),
});
export type WorkflowStep = z.infer<typeof WorkflowStepSchema>;

export const WorkflowSchema = z.object({
  workflowId: EntityIdSchema,
  parentThreadId: EntityIdSchema,
  /** The run that started the workflow; its agent() tasks hang off it. */
  parentRunId: EntityIdSchema,
  /** The parent's dynamic_tool turn item that shows the workflow (phases, step statuses, result). */
  itemId: EntityIdSchema,
  name: z.string().nullable(),
  description: z.string().nullable(),
  /** The script as started (a named workflow's resolved source). */
  script: z.string().min(1),
  args: z.unknown(),
  phases: z.array(WorkflowPhaseSchema),
  currentPhase: z.string().nullable(),
  status: WorkflowStatusSchema,
  steps: z.array(WorkflowStepSchema),
  result: z.unknown().optional(),
  error: FailureSchema.nullable(),
  budget: BudgetLimitsSchema.nullable(),
  clientRequestId: z.string().min(1).nullable(),
  /** The ended workflow whose journal answers this one's calls up to the first call that differs. */
  resumeFrom: EntityIdSchema.nullable().optional(),
  stopReason: z.string().nullable(),
  createdAt: IsoTimeSchema,
  updatedAt: IsoTimeSchema,
  endedAt: IsoTimeSchema.nullable(),
});
export type Workflow = z.infer<typeof WorkflowSchema>;
