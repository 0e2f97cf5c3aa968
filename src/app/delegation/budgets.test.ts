import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childScript, delegateStep, launchParent, onlyTask, startDelegationHarness, systemMessages, tasksOf, toolResults, waitForResult } from "../../testkit/delegationHarness.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * Tree-wide budgets (docs/budgets.md) over real MCP with scripted
 * agents: the scripted driver reports one token per 4 characters, so token
 * spend is exact. Admission refusals, widening, the reactor stopping a tree
 * and the root's notice are all read from Loom's own state.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

/** A parent on `a` whose first turn delegates `child` (on `b`) with `args`, async; returns the task once it settles. */
async function budgetedTask(child: readonly Record<string, unknown>[], args: Record<string, unknown>) {
  const parent = await launchParent(h, [delegateStep(child, { clientRequestId: "t", ...args }, "t"), { say: "delegated" }]);
  await h.waitViaMcp(parent.threadId, parent.runId);
  const task = onlyTask(h, parent.threadId);
  return { parent, task: await waitForResult(h, task.taskId, 20_000) };
}

describe("tree-wide budgets", () => {
  it("refuses the spawn past a spawns budget with budget_exceeded, and reports spend", async () => {
    const grandchild = { call: "delegate_task", args: { task: "hello", target: { providerInstanceId: "a" }, mode: "wait" } };
    const { task } = await budgetedTask([grandchild, { ...grandchild, as: "second" }, { say: "second: {{second}}" }], { budget: { spawns: 1 } });
    expect(task.status).toBe("completed");
    const calls = toolResults<Record<string, unknown>>(h, task.childThreadId, "delegate_task");
    expect(calls).toHaveLength(2);
    expect(calls[0]!.result).toMatchObject({ status: "completed" });
    expect(calls[1]!.result).toMatchObject({ error: { code: "budget_exceeded", retryable: false } });
    expect((calls[1]!.result as { error: { message: string } }).error.message).toContain("spawns budget");
    expect(tasksOf(h, task.childThreadId)).toHaveLength(1);
    const status = await h.owner.ok<{ budget: unknown }>("task_status", { taskId: task.taskId });
    expect(status.budget).toMatchObject({ limits: { spawns: 1 }, spent: { spawns: 1, turns: 2 }, remaining: { spawns: 0 }, reached: ["spawns"], exceeded: null });
  });

  it("refuses a child budget wider than the inherited one", async () => {
    const { task } = await budgetedTask([{ call: "delegate_task", args: { task: "x", budget: { tokens: 5_000 } } }, { say: "after" }], { budget: { tokens: 1_000 } });
    const [call] = toolResults<{ error: { code: string; message: string } }>(h, task.childThreadId, "delegate_task");
    expect(call!.result.error.code).toBe("invalid_request");
    expect(call!.result.error.message).toContain("budget.tokens 5000 is wider than the inherited 1000");
    expect(tasksOf(h, task.childThreadId)).toHaveLength(0);
  });

  it("narrows: a grandchild records its own narrower limits and stays under its ancestor's pool", async () => {
    const inner = { call: "delegate_task", args: { task: "hi", target: { providerInstanceId: "a" }, budget: { tokens: 500 }, mode: "wait" } };
    const { task } = await budgetedTask([inner, { say: "ok" }], { budget: { tokens: 1_000, turns: 9 } });
    const [grandchild] = tasksOf(h, task.childThreadId);
    expect(grandchild!.budget).toEqual({ tokens: 500 });
    const status = await h.owner.ok<{ budget: { spent: { turns: number } } }>("task_status", { taskId: task.taskId });
    // The child's pool counts its own turn and the grandchild's.
    expect(status.budget.spent.turns).toBe(2);
  });

  it("stops the tree when its tokens run out and tells the root", async () => {
    // The grandchild's answer alone is 100 output tokens; the child's budget is 60.
    const long = "x".repeat(400);
    const inner = { call: "delegate_task", args: { task: childScript({ say: long }), target: { providerInstanceId: "a" }, mode: "wait" } };
    const { parent, task } = await budgetedTask([inner, { sleep: 30_000 }, { say: "not reached" }], { budget: { tokens: 60 } });
    expect(task.status).toBe("interrupted");
    expect(task.budgetExceeded).toMatchObject({ kind: "tokens", limit: 60, policy: "stop" });
    expect(task.budgetExceeded!.spent).toBeGreaterThanOrEqual(100);
    const notice = await h.until(() => systemMessages(h, parent.threadId).find((message) => message.text.includes("budget")) ?? null, "the root's budget notice");
    expect(notice.text).toContain(`The tokens budget of task "${task.title}" (taskId ${task.taskId}) ran out`);
    expect(notice.text).toContain(task.childThreadId);
  });

  it("stops work at its wall-clock limit", async () => {
    const { task } = await budgetedTask([{ sleep: 30_000 }, { say: "not reached" }], { budget: { wallClockMs: 300 } });
    expect(task.status).toBe("interrupted");
    expect(task.budgetExceeded).toMatchObject({ kind: "wallClockMs", limit: 300 });
  });

  it("with finish_turn lets the running turn finish but refuses new delegations", async () => {
    const long = "y".repeat(400);
    const inner = { call: "delegate_task", args: { task: childScript({ say: long }), target: { providerInstanceId: "a" }, mode: "wait" } };
    const again = { call: "delegate_task", args: { task: "more", target: { providerInstanceId: "a" } } };
    const { task } = await budgetedTask([inner, { sleep: 200 }, again, { say: "finished" }], { budget: { tokens: 60, onExceeded: "finish_turn" } });
    expect(task.status).toBe("completed");
    expect(task.summary).toBe("finished");
    expect(task.budgetExceeded).toMatchObject({ kind: "tokens", policy: "finish_turn" });
    const calls = toolResults<{ error?: { code: string } }>(h, task.childThreadId, "delegate_task");
    expect(calls[1]!.result.error?.code).toBe("budget_exceeded");
    // A follow-up turn sent to the thread under the spent budget is refused too, and no run is recorded for it.
    const runsBefore = (h.state.threadRuns.get(task.childThreadId) ?? []).length;
    const followUp = await h.owner.call("t3_thread_send", { threadId: task.childThreadId, message: "one more thing", mode: "queue" });
    expect(followUp).toMatchObject({ isError: true, errorCode: "budget_exceeded" });
    expect(followUp.errorMessage).toContain(`the tokens budget of task ${task.taskId} ran out`);
    expect(h.state.threadRuns.get(task.childThreadId) ?? []).toHaveLength(runsBefore);
  });
});
