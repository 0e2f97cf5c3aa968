import type { BudgetRaiseInput, BudgetRaiseOutput } from "../../contracts/tools/budgetTools.js";
import { budgetReading, holderSpend, taskHolder, threadHolder, workflowHolder } from "../../core/budgets/budgets.js";
import { pausedBudget } from "../../core/budgets/workflowBudget.js";
import { type Caller, resolveCaller } from "../caller.js";
import { type AppContext, execute, freshUuid } from "../context.js";
import { fail } from "../errors.js";

type Holder = BudgetRaiseOutput["holder"];

/**
 * t3_budget_raise (docs/budgets.md, "Pause and raise"): the decider checks the
 * raise (only higher limits the budget has; an agent only for a budget below
 * its own thread and within what governs it) and resumes paused work; this
 * names the holder and answers with the budget as it stands after.
 */
export async function raiseBudget(ctx: AppContext, caller: Caller, input: BudgetRaiseInput): Promise<BudgetRaiseOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "t3_budget_raise");
  const named: Holder[] = [
    ...(input.taskId === undefined ? [] : [{ kind: "task" as const, id: input.taskId }]),
    ...(input.threadId === undefined ? [] : [{ kind: "thread" as const, id: input.threadId }]),
    ...(input.workflowId === undefined ? [] : [{ kind: "workflow" as const, id: input.workflowId }]),
  ];
  if (named.length !== 1) fail("invalid_request", "name exactly one budget: taskId, threadId or workflowId");
  const holder = named[0]!;
  await execute(ctx, {
    type: "budget.raise",
    commandId: `cmd:budget-raise:${freshUuid(ctx)}`,
    data: { holder, limits: input.limits, callerThreadId: acting.thread?.id ?? null },
  });
  return budgetAfter(ctx, holder);
}

function budgetAfter(ctx: AppContext, holder: Holder): BudgetRaiseOutput {
  const state = ctx.orchestrator.state;
  const now = new Date(ctx.clock()).toISOString();
  const task = holder.kind === "task" ? state.tasks.get(holder.id) : undefined;
  const thread = holder.kind === "thread" ? state.threads.get(holder.id) : undefined;
  const workflow = holder.kind === "workflow" ? state.workflows.get(holder.id) : undefined;
  const found = task !== undefined ? taskHolder(task) : thread !== undefined ? threadHolder(thread) : workflow !== undefined ? workflowHolder(state, workflow) : null;
  if (found === null) fail("orchestration_error", `the raised budget of ${holder.kind} ${holder.id} is gone`);
  const spent = holderSpend(state, found, now);
  const reading = budgetReading(found.budget, spent);
  const paused = workflow !== undefined ? pausedBudget(state, workflow, now) !== null : reading.reached.length > 0 && found.budget.onExceeded === "pause";
  return { holder, limits: found.budget, spent, ...reading, paused };
}
