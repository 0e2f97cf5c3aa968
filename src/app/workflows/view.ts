import type { Workflow } from "../../contracts/entities/workflows.js";
import type { WorkflowOutput } from "../../contracts/tools/workflowTools.js";
import type { OrchestrationState } from "../../core/state.js";
import { pausedBudget, workflowSpend } from "../../core/budgets/workflowBudget.js";
import { budgetReading } from "../../core/budgets/budgets.js";
import type { BudgetLimits, BudgetSpend } from "../../contracts/entities/budgets.js";

/** The pool's view: `exceeded` once any limit is reached (`reached` says which) or a call was refused on it. */
function workflowBudgetView(state: OrchestrationState, workflow: Workflow, limits: BudgetLimits, spent: BudgetSpend, now: string): NonNullable<WorkflowOutput["budget"]> {
  const reading = budgetReading(limits, spent);
  const exceeded = reading.reached.length > 0 || workflow.steps.some((step) => step.error?.code === "budget_exceeded");
  return { limits, spent, ...reading, exceeded, paused: workflow.status === "running" && pausedBudget(state, workflow, now) !== null };
}

/** t3_workflow_start / status / stop answer: the workflow read from its journal. */
export function workflowView(state: OrchestrationState, workflow: Workflow, waitTimedOut: boolean, now: string): WorkflowOutput {
  const started = new Set(workflow.steps.map((step) => step.phase).filter((phase) => phase !== null));
  if (workflow.currentPhase !== null) started.add(workflow.currentPhase);
  const phaseStatus = (title: string): "pending" | "active" | "done" => {
    if (workflow.status === "running" && title === workflow.currentPhase) return "active";
    if (workflow.steps.some((step) => step.phase === title && step.status === "running")) return "active";
    return started.has(title) ? "done" : "pending";
  };
  const spend = workflow.budget === null ? null : workflowSpend(state, workflow, workflow.endedAt ?? now);
  return {
    workflowId: workflow.workflowId,
    name: workflow.name,
    status: workflow.status,
    phases: workflow.phases.map((phase) => ({ ...phase, status: phaseStatus(phase.title) })),
    currentPhase: workflow.currentPhase,
    steps: workflow.steps.map((step) => ({
      index: step.index,
      label: step.label,
      phase: step.phase,
      status: step.status,
      taskId: step.taskId,
      childThreadId: step.childThreadId,
      providerInstanceId: step.providerInstanceId,
      ...(step.result === undefined ? {} : { result: step.result }),
      error: step.error,
      ...(step.resumedFrom === undefined ? {} : { resumedFrom: step.resumedFrom }),
    })),
    ...(workflow.result === undefined ? {} : { result: workflow.result }),
    error: workflow.error,
    stopReason: workflow.stopReason,
    ...(workflow.budget === null || spend === null
      ? {}
      : { budget: workflowBudgetView(state, workflow, workflow.budget, spend, now) }),
    waitTimedOut,
  };
}

const MAX_SUMMARY_RESULT_CHARS = 4_000;

/** What the parent is told when a workflow ends: its outcome, its steps, and the result (truncated). */
export function workflowSummary(workflow: Workflow): string {
  const name = workflow.name ?? workflow.workflowId;
  const lines = [`Workflow ${name} (workflowId ${workflow.workflowId}) ${workflow.status} after ${workflow.steps.length} agent call(s).`];
  const failed = workflow.steps.filter((step) => step.status === "failed");
  if (failed.length > 0) lines.push(`Failed calls: ${failed.map((step) => `${step.label ?? `#${step.index}`} (${step.error?.code ?? "failed"})`).join(", ")}.`);
  if (workflow.error !== null) lines.push(`Error: ${workflow.error.message}`);
  if (workflow.result !== undefined) {
    const text = JSON.stringify(workflow.result, null, 2) ?? "undefined";
    lines.push("Result:", text.length > MAX_SUMMARY_RESULT_CHARS ? `${text.slice(0, MAX_SUMMARY_RESULT_CHARS)}… (truncated; t3_workflow_status has it whole)` : text);
  }
  return lines.join("\n");
}
