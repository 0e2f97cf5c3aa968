import type { BudgetSpend } from "../../contracts/entities/budgets.js";
import type { WorkflowOutput } from "../../contracts/tools/workflowTools.js";
import { spendOf } from "../../core/budgets/budgets.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { workflowStatus } from "./start.js";

/** What a step's task and its subtree spent so far: the budget reactor's figures. */
export type WorkflowStepSpend = Pick<BudgetSpend, "tokens" | "turns" | "costUsd">;

/**
 * `GET /api/ui/workflows/:workflowId`: t3_workflow_status's record, plus what
 * the web UI's workflow panel shows beside it: the meta's description, when
 * the workflow and each step started and ended, and each step's spend.
 */
export type UiWorkflowView = Omit<WorkflowOutput, "steps"> & {
  readonly description: string | null;
  readonly createdAt: string;
  readonly endedAt: string | null;
  readonly steps: readonly (WorkflowOutput["steps"][number] & {
    readonly startedAt: string;
    readonly endedAt: string | null;
    /** Null for a step that has no task (refused before one existed, or answered by resumeFrom). */
    readonly spend: WorkflowStepSpend | null;
  })[];
};

/** The workflow panel's read, for the same callers as t3_workflow_status (the owner sees every workflow). */
export function getUiWorkflow(ctx: AppContext, caller: Caller, workflowId: string): UiWorkflowView {
  const view = workflowStatus(ctx, caller, { workflowId });
  const state = ctx.orchestrator.state;
  const workflow = state.workflows.get(workflowId) ?? fail("workflow_not_found", `no workflow ${workflowId}`);
  const now = new Date(ctx.clock()).toISOString();
  return {
    ...view,
    description: workflow.description,
    createdAt: workflow.createdAt,
    endedAt: workflow.endedAt,
    steps: view.steps.map((step) => {
      const journaled = workflow.steps[step.index - 1];
      const task = step.taskId === null || step.resumedFrom !== undefined ? undefined : state.tasks.get(step.taskId);
      const spent = task === undefined ? null : spendOf(state, task, journaled?.endedAt ?? now);
      return {
        ...step,
        startedAt: journaled?.startedAt ?? workflow.createdAt,
        endedAt: journaled?.endedAt ?? null,
        spend: spent === null ? null : { tokens: spent.tokens, turns: spent.turns, costUsd: spent.costUsd },
      };
    }),
  };
}
