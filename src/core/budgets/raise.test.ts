import { describe, expect, it } from "vitest";
import { RejectionCode } from "../rejections.js";
import { cmd } from "../testing/fixtures.js";
import { ROOT, delegate, fold, rootWithRun, setupContext, step, steps } from "../testing/delegationFixtures.js";
import { given } from "../testing/scenario.js";

/** budget.raise (docs/budgets.md, "Pause and raise"): who may raise which budget, by how much, and what the raise clears. */

const ctx = setupContext();
const TASK = "subagent:t1";
const raise = (limits: Record<string, unknown>, callerThreadId: string | null, holder: { kind: "task" | "thread" | "workflow"; id: string } = { kind: "task", id: TASK }) => cmd("budget.raise", { holder, limits, callerThreadId });

function budgeted() {
  return steps(rootWithRun(), [cmd("thread.budget.set", { threadId: ROOT, budget: { tokens: 500 } }), delegate("t1", ROOT, undefined, { budget: { tokens: 100, onExceeded: "pause" } })], ctx);
}

describe("budget.raise", () => {
  it("the delegating agent raises its child's budget within its own; the owner past it; the exhaustion is cleared", () => {
    const history = budgeted();
    expect(fold(step(history, raise({ tokens: 400 }, ROOT), ctx)).tasks.get(TASK)).toMatchObject({ budget: { tokens: 400, onExceeded: "pause" }, budgetExceeded: null });
    given(...history).when(raise({ tokens: 900 }, ROOT)).thenRejects(RejectionCode.budgetRaiseDenied);
    expect(fold(step(history, raise({ tokens: 900 }, null), ctx)).tasks.get(TASK)!.budget).toEqual({ tokens: 900, onExceeded: "pause" });
  });

  it("refuses an agent below the budget, a lower or new limit, no change, and a holder without a budget", () => {
    const history = budgeted();
    given(...history).when(raise({ tokens: 200 }, "thread:t1")).thenRejects(RejectionCode.budgetRaiseDenied);
    given(...history).when(raise({ tokens: 50 }, null)).thenRejects(RejectionCode.budgetNotRaised);
    given(...history).when(raise({ turns: 5 }, null)).thenRejects(RejectionCode.budgetNotRaised);
    given(...history).when(raise({ tokens: 100 }, null)).thenRejects(RejectionCode.budgetNotRaised);
    given(...history).when(raise({ tokens: 200 }, null, { kind: "task", id: "subagent:none" })).thenRejects(RejectionCode.budgetNotFound);
    given(...rootWithRun()).when(raise({ tokens: 200 }, null, { kind: "thread", id: ROOT })).thenRejects(RejectionCode.budgetNotFound);
  });

  it("only the owner raises a root thread's budget, and wall-clock time keeps counting from when it was set", () => {
    const history = budgeted();
    given(...history).when(raise({ tokens: 800 }, ROOT, { kind: "thread", id: ROOT })).thenRejects(RejectionCode.budgetRaiseDenied);
    const before = fold(history).threads.get(ROOT)!.budget!;
    const after = fold(step(history, raise({ tokens: 800 }, null, { kind: "thread", id: ROOT }), ctx)).threads.get(ROOT)!.budget!;
    expect(after).toEqual({ limits: { tokens: 800 }, since: before.since, exceeded: null });
  });
});
