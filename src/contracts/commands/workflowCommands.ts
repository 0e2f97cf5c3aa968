import type { BudgetLimits } from "../entities/budgets.js";
import type { Failure } from "../entities/fields.js";
import type { WorkflowPhase } from "../entities/workflows.js";

/**
 * Workflow scripts (docs/workflows.md). Loom's own and engine-only, like the
 * scheduled-task commands: the app sends them after it checked the script
 * and its arguments (the decider checks the budget); the HTTP API refuses
 * their names. Each
 * journals one fact of a running script, with a command id derived from the
 * fact, so a re-run after a restart that repeats one changes nothing.
 */
export const WorkflowCommandType = {
  start: "workflow.start",
  progress: "workflow.progress",
  stepStart: "workflow.step.start",
  stepFinish: "workflow.step.finish",
  stepReissue: "workflow.step.reissue",
  finish: "workflow.finish",
  stop: "workflow.stop",
} as const;
export type WorkflowCommandType = (typeof WorkflowCommandType)[keyof typeof WorkflowCommandType];

export interface WorkflowStartCommand {
  readonly type: "workflow.start";
  readonly commandId: string;
  readonly data: {
    readonly workflowId: string;
    readonly parentThreadId: string;
    readonly parentRunId: string;
    readonly itemId: string;
    readonly name: string | null;
    readonly description: string | null;
    readonly phases: readonly WorkflowPhase[];
    readonly script: string;
    readonly args: unknown;
    /** The pool asked for its agents; refused when wider than a budget the parent runs under, or when one of those ran out. */
    readonly budget: BudgetLimits | null;
    readonly clientRequestId: string | null;
    /** An ended workflow of the same parent thread whose finished calls this one reuses (docs/workflows.md, Resuming an edited script). */
    readonly resumeFrom?: string | null;
  };
}

/** The script entered a phase (phase(title)). */
export interface WorkflowProgressCommand {
  readonly type: "workflow.progress";
  readonly commandId: string;
  readonly data: { readonly workflowId: string; readonly phase: string };
}

/** An agent() call journaled before its task is requested; a repeat of a known step is refused (workflow_step_exists). */
export interface WorkflowStepStartCommand {
  readonly type: "workflow.step.start";
  readonly commandId: string;
  readonly data: {
    readonly workflowId: string;
    readonly stepId: string;
    readonly callKey: string;
    readonly label: string | null;
    readonly phase: string | null;
    readonly taskId: string | null;
    readonly childThreadId: string | null;
    readonly providerInstanceId: string | null;
    /** The step answers from this completed step of the workflow it resumes from: it is journaled completed with that result. */
    readonly resumedFrom?: { readonly workflowId: string; readonly stepId: string };
  };
}

export interface WorkflowStepFinishCommand {
  readonly type: "workflow.step.finish";
  readonly commandId: string;
  readonly data: {
    readonly workflowId: string;
    readonly stepId: string;
    readonly status: "completed" | "failed";
    readonly result?: unknown;
    readonly error: Failure | null;
  };
}

/**
 * A running step's task was lost to a restart (interrupted, never cancelled):
 * the call is re-issued once as a new task, `attempt` 2, 3, ...
 */
export interface WorkflowStepReissueCommand {
  readonly type: "workflow.step.reissue";
  readonly commandId: string;
  readonly data: { readonly workflowId: string; readonly stepId: string; readonly attempt: number; readonly taskId: string; readonly childThreadId: string };
}

/** The script returned (completed) or threw (failed). */
export interface WorkflowFinishCommand {
  readonly type: "workflow.finish";
  readonly commandId: string;
  readonly data: {
    readonly workflowId: string;
    readonly status: "completed" | "failed";
    readonly result?: unknown;
    readonly error: Failure | null;
    /** Written to the parent thread as a notification item when `notify`. */
    readonly summary: string;
    /** Wake the parent with the summary (a notice): false when a t3_workflow_start wait hands it the result. */
    readonly notify: boolean;
  };
}

/** t3_workflow_stop: the workflow ends `stopped`; the app stops its running tasks. */
export interface WorkflowStopCommand {
  readonly type: "workflow.stop";
  readonly commandId: string;
  readonly data: { readonly workflowId: string; readonly reason: string | null };
}

export type WorkflowCommand =
  | WorkflowStartCommand
  | WorkflowProgressCommand
  | WorkflowStepStartCommand
  | WorkflowStepFinishCommand
  | WorkflowStepReissueCommand
  | WorkflowFinishCommand
  | WorkflowStopCommand;
