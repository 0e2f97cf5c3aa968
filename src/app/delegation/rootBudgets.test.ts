import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childScript, connectAsThread, startDelegationHarness, systemMessages, tasksOf, toolResults } from "../../testkit/delegationHarness.js";
import { type LoomHarness, script } from "../../testkit/loomHarness.js";
import type { ThreadReadOutput } from "../../contracts/tools/threadTools.js";

/**
 * Budgets on root threads (docs/budgets.md, Root threads) over real MCP with
 * scripted agents (one token per 4 characters): set with t3_thread_launch or
 * t3_thread_update set_budget by the owner, they govern the whole tree like a
 * task budget: refusals, stopping, the root's notice, spend in thread reads.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

const LONG = "z".repeat(400);
const delegateLong = { call: "delegate_task", args: { task: childScript({ say: LONG }), target: { providerInstanceId: "b" }, mode: "wait" } };

async function launchWithBudget(steps: readonly Record<string, unknown>[], budget: Record<string, unknown>) {
  return h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Budgeted root", message: script(...steps), target: { providerInstanceId: "a" }, budget });
}

const read = (threadId: string) => h.owner.ok<ThreadReadOutput>("t3_thread_read", { threadId });

describe("budgets on root threads", () => {
  it("refuses the spawn past a root's spawns budget and reports the tree's spend in the thread read", async () => {
    const child = { call: "delegate_task", args: { task: childScript({ say: "hi" }), target: { providerInstanceId: "b" }, mode: "wait" } };
    const root = await launchWithBudget([child, { ...child, as: "second" }, { say: "done" }], { spawns: 1 });
    await h.waitForEnd(root.runId, 20_000);
    const calls = toolResults<{ error?: { code: string; message: string } }>(h, root.threadId, "delegate_task");
    expect(calls[0]!.result.error).toBeUndefined();
    expect(calls[1]!.result.error).toMatchObject({ code: "budget_exceeded", message: expect.stringContaining(`spawns budget of thread ${root.threadId} ran out`) });
    expect(tasksOf(h, root.threadId)).toHaveLength(1);
    expect((await read(root.threadId)).budget).toMatchObject({ limits: { spawns: 1 }, spent: { spawns: 1, turns: 2 }, remaining: { spawns: 0 }, reached: ["spawns"], exceeded: null });
  });

  it("stops the whole tree when the root's tokens run out and tells the root", async () => {
    const root = await launchWithBudget([delegateLong, { sleep: 30_000 }, { say: "not reached" }], { tokens: 60 });
    const ended = await h.waitForEnd(root.runId, 20_000);
    expect(ended.status).toBe("interrupted");
    const budget = (await read(root.threadId)).budget!;
    expect(budget.exceeded).toMatchObject({ kind: "tokens", limit: 60, policy: "stop" });
    expect(budget.spent.tokens).toBeGreaterThanOrEqual(100);
    const notice = await h.until(() => systemMessages(h, root.threadId).find((message) => message.text.includes("budget of this thread's tree ran out")) ?? null, "the root's budget notice");
    expect(notice.text).toContain("The tokens budget of this thread's tree ran out");
    // New work under it is refused.
    const send = await h.owner.call("t3_thread_send", { threadId: root.threadId, message: "more", mode: "queue" });
    expect(send).toMatchObject({ isError: true, errorCode: "budget_exceeded" });
  });

  it("with finish_turn lets the root's turn finish, refuses a follow-up until the owner raises the budget", async () => {
    const root = await launchWithBudget([delegateLong, { sleep: 200 }, { say: "finished" }], { tokens: 60, onExceeded: "finish_turn" });
    const ended = await h.waitForEnd(root.runId, 20_000);
    expect(ended.status).toBe("completed");
    await h.until(() => h.state.threads.get(root.threadId)?.budget?.exceeded ?? null, "the budget to be recorded as run out");
    expect((await read(root.threadId)).budget!.exceeded).toMatchObject({ kind: "tokens", policy: "finish_turn" });
    const refused = await h.owner.call("t3_thread_send", { threadId: root.threadId, message: script({ say: "again" }), mode: "queue" });
    expect(refused).toMatchObject({ isError: true, errorCode: "budget_exceeded" });
    // The owner raises the budget: spend is counted afresh against the new limits, and the thread takes the message.
    await h.owner.ok("t3_thread_update", { threadId: root.threadId, action: "set_budget", budget: { tokens: 100_000 } });
    expect((await read(root.threadId)).budget).toMatchObject({ limits: { tokens: 100_000 }, exceeded: null });
    const sent = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: root.threadId, message: script({ say: "again" }), mode: "queue" });
    expect((await h.waitForEnd(sent.runId, 20_000)).status).toBe("completed");
  });

  it("refuses a negative or non-numeric limit with invalid_request and writes nothing", async () => {
    const root = await h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Bad limits", message: script({ say: "ok" }), target: { providerInstanceId: "a" }, budget: { tokens: 1_000 } });
    await h.waitForEnd(root.runId, 20_000);
    const before = h.state.threads.get(root.threadId)!;
    for (const budget of [{ tokens: -5 }, { turns: "lots" }, { spawns: 1.5 }, { costUsd: 0 }]) {
      const refused = await h.owner.call("t3_thread_update", { threadId: root.threadId, action: "set_budget", budget });
      expect(refused, JSON.stringify(budget)).toMatchObject({ isError: true, errorCode: "invalid_request" });
    }
    const after = h.state.threads.get(root.threadId)!;
    expect(after.budget).toEqual(before.budget);
    expect(after.updatedAt).toBe(before.updatedAt);
  });

  it("only the owner sets a budget, only on a root thread", async () => {
    const root = await h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Root", message: script({ sleep: 2_000 }, { say: "ok" }), target: { providerInstanceId: "a" } });
    const agent = await connectAsThread(h, root.threadId);
    const asAgent = await agent.call("t3_thread_update", { action: "set_budget", budget: { tokens: 10 } });
    expect(asAgent).toMatchObject({ isError: true, errorCode: "capability_denied" });
    const launchAsAgent = await agent.call("t3_thread_launch", { message: "x", budget: { tokens: 10 } });
    expect(launchAsAgent).toMatchObject({ isError: true, errorCode: "capability_denied" });
    await agent.close();
    const parent = await h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Parent", message: script({ call: "delegate_task", args: { task: childScript({ say: "c" }), mode: "wait" }, as: "t" }, { say: "{{t.childThreadId}}" }), target: { providerInstanceId: "a" } });
    const done = await h.waitForEnd(parent.runId, 20_000);
    const childThreadId = tasksOf(h, parent.threadId)[0]!.childThreadId;
    expect(done.status).toBe("completed");
    const onChild = await h.owner.call("t3_thread_update", { threadId: childThreadId, action: "set_budget", budget: { tokens: 10 } });
    expect(onChild).toMatchObject({ isError: true, errorCode: "invalid_request", errorMessage: expect.stringContaining("not a root thread") });
    expect(h.state.threads.get(childThreadId)!.budget ?? null).toBeNull();
  });
});
