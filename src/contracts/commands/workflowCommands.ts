import { z } from "zod";
import { IdSchema, commandSchema as command } from "./commandSchema.js";
import { BudgetLimitsSchema } from "../entities/budgets.js";
import { FailureSchema } from "../entities/fields.js";
import { WorkflowPhaseSchema, WorkflowStepRefSchema } from "../entities/workflows.js";

/**
 * Workflow scripts (docs/workflows.md). Loom's own and engine-only, like the
 * scheduled-task commands: the app sends them after it checked the script
 * and its arguments (the decider checks the budget); the HTTP API refuses
 * their names. Each
 * journals one fact of a running script, with a command id derived from the
 * fact, so a re-run after a restart that repeats one changes nothing.
 */

const EndStatusSchema = z.enum(["completed", "failed"]);

export const WorkflowStartCommandSchema = command(
  "workflow.start",
  z
    .object({
      workflowId: IdSchema,
      parentThreadId: IdSchema,
      parentRunId: IdSchema,
      itemId: IdSchema,
      name: z.string().nullable(),
      description: z.string().nullable(),
      phases: z.array(WorkflowPhaseSchema).readonly(),
      script: z.string().min(1),
      args: z.unknown(),
      /** The pool asked for its agents; refused when wider than a budget the parent runs under, or when one of those ran out. */
      budget: BudgetLimitsSchema.nullable(),
      clientRequestId: z.string().min(1).nullable(),
      /** An ended workflow of the same parent thread whose finished calls this one reuses (docs/workflows.md, Resuming an edited script). */
      resumeFrom: IdSchema.nullable().optional(),
    })
    .strict(),
);
export type WorkflowStartCommand = z.infer<typeof WorkflowStartCommandSchema>;

/** The script entered a phase (phase(title)). */
export const WorkflowProgressCommandSchema = command("workflow.progress", z.object({ workflowId: IdSchema, phase: z.string() }).strict());
export type WorkflowProgressCommand = z.infer<typeof WorkflowProgressCommandSchema>;

/** An agent() call journaled before its task is requested; a repeat of a known step is refused (workflow_step_exists). */
export const WorkflowStepStartCommandSchema = command(
  "workflow.step.start",
  z
    .object({
      workflowId: IdSchema,
      stepId: IdSchema,
      callKey: z.string().min(1),
      label: z.string().nullable(),
      phase: z.string().nullable(),
      taskId: IdSchema.nullable(),
      childThreadId: IdSchema.nullable(),
      providerInstanceId: IdSchema.nullable(),
      /** The step answers from this completed step of the workflow it resumes from: it is journaled completed with that result. */
      resumedFrom: WorkflowStepRefSchema.optional(),
    })
    .strict(),
);
export type WorkflowStepStartCommand = z.infer<typeof WorkflowStepStartCommandSchema>;

export const WorkflowStepFinishCommandSchema = command(
  "workflow.step.finish",
  z.object({ workflowId: IdSchema, stepId: IdSchema, status: EndStatusSchema, result: z.unknown().optional(), error: FailureSchema.nullable() }).strict(),
);
export type WorkflowStepFinishCommand = z.infer<typeof WorkflowStepFinishCommandSchema>;

/**
 * A running step's task was lost to a restart (interrupted, never cancelled):
 * the call is re-issued once as a new task, `attempt` 2, 3, ...
 */
export const WorkflowStepReissueCommandSchema = command(
  "workflow.step.reissue",
  z.object({ workflowId: IdSchema, stepId: IdSchema, attempt: z.number().int().positive(), taskId: IdSchema, childThreadId: IdSchema }).strict(),
);
export type WorkflowStepReissueCommand = z.infer<typeof WorkflowStepReissueCommandSchema>;

/** The script returned (completed) or threw (failed). */
export const WorkflowFinishCommandSchema = command(
  "workflow.finish",
  z
    .object({
      workflowId: IdSchema,
      status: EndStatusSchema,
      result: z.unknown().optional(),
      error: FailureSchema.nullable(),
      /** Written to the parent thread as a notification item when `notify`. */
      summary: z.string(),
      /** Wake the parent with the summary (a notice): false when a t3_workflow_start wait hands it the result. */
      notify: z.boolean(),
    })
    .strict(),
);
export type WorkflowFinishCommand = z.infer<typeof WorkflowFinishCommandSchema>;

/** t3_workflow_stop: the workflow ends `stopped`; the app stops its running tasks. */
export const WorkflowStopCommandSchema = command("workflow.stop", z.object({ workflowId: IdSchema, reason: z.string().nullable() }).strict());
export type WorkflowStopCommand = z.infer<typeof WorkflowStopCommandSchema>;
