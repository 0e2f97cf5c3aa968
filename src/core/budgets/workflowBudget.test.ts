import { describe, expect, it } from "vitest";
import type { BudgetLimits } from "../../contracts/entities/budgets.js";
import type { DomainEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { ROOT, ROOT_RUN, delegate, fold, rootWithRun, setupContext, startWorkflow, steps } from "../testing/delegationFixtures.js";
import { cmd } from "../testing/fixtures.js";
import { given } from "../testing/scenario.js";

/**
 * A workflow's budget, decided in the decider (docs/workflows.md, Budgets):
 * the pool may not be wider than the budgets its parent runs under, and each
 * agent() task draws on what is left of it.
 */

const WF = "workflow:1";

const start = (budget: BudgetLimits | null) => startWorkflow(WF, budget);

/** A root whose own budget is `spawns: 3`. */
const budgeted = steps(rootWithRun(), [cmd("thread.budget.set", { threadId: ROOT, budget: { spawns: 3 } })], setupContext());

describe("workflow.start and the parent's budgets", () => {
  it("refuses a pool wider than a budget the parent runs under", () => {
    const refused = given(...budgeted).when(start({ spawns: 5 })).thenRejects(RejectionCode.budgetWideningDenied);
    expect(refused.message).toBe("a workflow can only narrow the budget it runs under: budget.spawns 5 is wider than the inherited 3");
  });

  it("records a pool within them as the workflow's budget, and no pool as none", () => {
    expect(fold(given(...budgeted).when(start({ spawns: 2 })).thenHistory()).workflows.get(WF)?.budget).toEqual({ spawns: 2 });
    expect(fold(given(...budgeted).when(start(null)).thenHistory()).workflows.get(WF)?.budget).toBeNull();
  });

  it("refuses a parent whose budget ran out", () => {
    // One turn started already: a turns budget of 1 admits nothing new.
    const spent = steps(rootWithRun(), [cmd("thread.budget.set", { threadId: ROOT, budget: { turns: 1 } })], setupContext());
    given(...spent).when(start(null)).thenRejects(RejectionCode.budgetExceeded);
  });
});

describe("an agent() task and its workflow's pool", () => {
  const ctx = setupContext();
  const journal = (name: string) =>
    cmd("workflow.step.start", { workflowId: WF, stepId: `workflow-step:${name}`, callKey: name, label: name, phase: null, taskId: `subagent:${name}`, childThreadId: `thread:${name}`, providerInstanceId: "steerable" });
  const agent = (name: string, budget?: BudgetLimits) =>
    delegate(name, ROOT, ROOT_RUN, { wakePolicy: "never", workflowStep: { workflowId: WF, stepId: `workflow-step:${name}` }, ...(budget === undefined ? {} : { budget }) });
  const running: DomainEvent[] = steps(rootWithRun(), [start({ spawns: 2, tokens: 1_000 })], ctx);

  it("gives each task what is left of the pool, narrowed further by the call's own budget", () => {
    const first = steps(running, [journal("a1"), agent("a1", { tokens: 400 })], ctx);
    // The task itself is one of the pool's spawns; the rest of the pool is for its subtree.
    expect(fold(first).tasks.get("subagent:a1")?.budget).toEqual({ spawns: 1, tokens: 400 });
    const second = steps(first, [journal("a2"), agent("a2")], ctx);
    expect(fold(second).tasks.get("subagent:a2")?.budget).toEqual({ spawns: 0, tokens: 1_000 });
  });

  it("refuses a task once the pool ran out", () => {
    const full = steps(running, [journal("a1"), agent("a1"), journal("a2"), agent("a2"), journal("a3")], ctx);
    const refused = given(...full).when(agent("a3"), ctx).thenRejects(RejectionCode.budgetExceeded);
    expect(refused.message).toBe(`the spawns budget of workflow ${WF} ran out (2 of 2)`);
  });
});
