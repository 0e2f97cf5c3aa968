import { BUDGET_KINDS, type BudgetLimits, type BudgetSpend } from "../../contracts/entities/budgets.js";
import type { Workflow } from "../../contracts/entities/workflows.js";
import type { OrchestrationState } from "../state.js";
import { budgetPolicy, exhaustedBudget, reachedLimit, spendOf } from "./budgets.js";

/**
 * A workflow's budget (docs/workflows.md), pure: one pool for all of its
 * agent() tasks and their subtrees. Spawns count the agent() tasks and
 * everything they delegated; wall-clock time runs from the workflow's start.
 * The decider holds each agent() task's request to it
 * (src/core/delegation/request.ts).
 */
export function workflowSpend(state: OrchestrationState, workflow: Workflow, now: string): BudgetSpend {
  const spend = { tokens: 0, turns: 0, wallClockMs: Math.max(0, Date.parse(now) - Date.parse(workflow.createdAt)), spawns: 0, costUsd: 0 };
  for (const step of workflow.steps) {
    const task = step.taskId === null ? undefined : state.tasks.get(step.taskId);
    if (task === undefined) continue;
    const spent = spendOf(state, task, now);
    spend.tokens += spent.tokens;
    spend.turns += spent.turns;
    spend.costUsd += spent.costUsd;
    spend.spawns += spent.spawns + 1;
  }
  return spend;
}

/** The limit a new agent() call would pass, or null when the budget has room. */
export function workflowBudgetReached(state: OrchestrationState, workflow: Workflow, now: string) {
  if (workflow.budget === null) return null;
  return reachedLimit(workflow.budget, workflowSpend(state, workflow, now), "admit");
}

/**
 * The paused budget a new agent() call of the workflow waits on, or null: its
 * own pool, or a budget over the workflow's parent thread, that ran out with
 * `onExceeded: "pause"` (docs/budgets.md, "Pause and raise"). A raise lifts it.
 */
export function pausedBudget(state: OrchestrationState, workflow: Workflow, now: string): { readonly label: string; readonly kind: string } | null {
  const pool = workflowBudgetReached(state, workflow, now);
  if (pool !== null && workflow.budget?.onExceeded === "pause") return { label: `workflow ${workflow.workflowId}`, kind: pool.kind };
  const above = exhaustedBudget(state, workflow.parentThreadId, now);
  if (above !== null && budgetPolicy(above.holder) === "pause") return { label: above.holder.label, kind: above.exceeded.kind };
  return null;
}

/**
 * The budget one agent() task gets: what is left of the workflow's pool (so
 * the budget reactor stops a child that alone would overspend it), narrowed
 * further by the call's own `budget` option.
 */
export function stepBudget(state: OrchestrationState, workflow: Workflow, now: string, requested: BudgetLimits | undefined): BudgetLimits | undefined {
  if (workflow.budget === null) return requested;
  const spent = workflowSpend(state, workflow, now);
  const left: { -readonly [K in keyof BudgetLimits]: BudgetLimits[K] } = {};
  for (const kind of BUDGET_KINDS) {
    const limit = workflow.budget[kind];
    if (limit === undefined) continue;
    // A spawn is this task itself; what remains of the pool is for its own subtree.
    const remaining = kind === "spawns" ? limit - spent.spawns - 1 : limit - spent[kind];
    const own = requested?.[kind];
    left[kind] = Math.max(kind === "spawns" ? 0 : kind === "costUsd" ? 1e-6 : 1, own === undefined ? remaining : Math.min(own, remaining));
  }
  for (const kind of BUDGET_KINDS) if (left[kind] === undefined && requested?.[kind] !== undefined) left[kind] = requested[kind];
  const policy = requested?.onExceeded ?? workflow.budget.onExceeded;
  if (policy !== undefined) left.onExceeded = policy;
  return left;
}
