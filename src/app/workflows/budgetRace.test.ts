import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childScript, launchParent, startDelegationHarness, toolResults } from "../../testkit/delegationHarness.js";
import { type LoomHarness, script } from "../../testkit/loomHarness.js";
import type { WorkflowOutput } from "../../contracts/tools/workflowTools.js";

/**
 * Budgets under work decided together (docs/budgets.md, Reservations): parallel
 * agent() calls ask at once, queued follow-ups wait for their turn, and
 * exactly as many start as the pool allows; the rest get budget_exceeded.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

describe("a workflow's spawns budget under parallel agent() calls", () => {
  it("16 parallel agent() calls under spawns 4 start exactly 4; the other 12 get budget_exceeded", async () => {
    const prompt = JSON.stringify(childScript({ say: "ok" }));
    const script = `
const outcomes = await parallel(Array.from({ length: 16 }, (_, i) => async () => {
  try { return await agent(${prompt}, { label: "s" + i }); } catch (error) { return error.code; }
}));
return outcomes;`;
    const parent = await launchParent(h, [{ call: "t3_workflow_start", args: { mode: "wait", timeoutMs: 30_000, script, budget: { spawns: 4 } }, as: "w" }, { say: "done" }]);
    await h.waitForEnd(parent.runId, 40_000);
    const [call] = toolResults<WorkflowOutput>(h, parent.threadId, "t3_workflow_start");
    const result = call!.result;
    expect(result.status).toBe("completed");
    const outcomes = result.result as string[];
    expect(outcomes.filter((outcome) => outcome === "ok")).toHaveLength(4);
    expect(outcomes.filter((outcome) => outcome === "budget_exceeded")).toHaveLength(12);
    const started = [...h.state.tasks.values()].filter((task) => task.workflowStep?.workflowId === result.workflowId);
    expect(started).toHaveLength(4);
    expect(result.budget).toMatchObject({ limits: { spawns: 4 }, spent: { spawns: 4 }, exceeded: true });
  });
});

describe("a turns budget under work decided together", () => {
  it("8 parallel agent() calls under turns 3 start exactly 3 turns; the other 5 get budget_exceeded", async () => {
    const prompt = JSON.stringify(childScript({ say: "ok" }));
    const script = `
const outcomes = await parallel(Array.from({ length: 8 }, (_, i) => async () => {
  try { return await agent(${prompt}, { label: "t" + i }); } catch (error) { return error.code; }
}));
return outcomes;`;
    const parent = await launchParent(h, [{ call: "t3_workflow_start", args: { mode: "wait", timeoutMs: 30_000, script, budget: { turns: 3 } }, as: "w" }, { say: "done" }]);
    await h.waitForEnd(parent.runId, 40_000);
    const [call] = toolResults<WorkflowOutput>(h, parent.threadId, "t3_workflow_start");
    const result = call!.result;
    const outcomes = result.result as string[];
    expect(outcomes.filter((outcome) => outcome === "ok")).toHaveLength(3);
    expect(outcomes.filter((outcome) => outcome === "budget_exceeded")).toHaveLength(5);
    const children = [...h.state.tasks.values()].filter((task) => task.workflowStep?.workflowId === result.workflowId).map((task) => task.childThreadId);
    const turns = children.flatMap((threadId) => h.state.threadRuns.get(threadId) ?? []);
    expect(turns).toHaveLength(3);
    expect(result.budget).toMatchObject({ limits: { turns: 3 }, spent: { turns: 3 } });
  });

  it("queued follow-ups under a root's turns 2: the second turn starts, the later ones are cancelled instead of started", async () => {
    const root = await h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Queued", message: script({ sleep: 1_000 }, { say: "first" }), target: { providerInstanceId: "a" }, budget: { turns: 2 } });
    const queued: string[] = [];
    for (const say of ["second", "third", "fourth"]) {
      queued.push((await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: root.threadId, message: script({ say }), mode: "queue" })).runId);
    }
    expect((await h.waitForEnd(root.runId, 20_000)).status).toBe("completed");
    expect((await h.waitForEnd(queued[0]!, 20_000)).status).toBe("completed");
    for (const runId of queued.slice(1)) {
      expect(await h.waitForEnd(runId, 20_000)).toMatchObject({ status: "cancelled", endReason: "budget_exceeded:turns", startedAt: null });
    }
    const started = (h.state.threadRuns.get(root.threadId) ?? []).map((runId) => h.state.runs.get(runId)!).filter((run) => run.startedAt !== null);
    expect(started).toHaveLength(2);
  });
});

describe("a workflow's token pool under parallel agent() calls", () => {
  it("once parallel agents spent the pool, no new turn starts in any of their tasks; the overshoot is what the running turns spent", async () => {
    const prompt = JSON.stringify(childScript({ say: "y".repeat(200) }));
    const body = `return await parallel([0, 1].map((i) => () => agent(${prompt}, { label: "p" + i })));`;
    const parent = await launchParent(h, [{ call: "t3_workflow_start", args: { mode: "wait", timeoutMs: 30_000, script: body, budget: { tokens: 200, onExceeded: "finish_turn" } }, as: "w" }, { say: "done" }]);
    await h.waitForEnd(parent.runId, 40_000);
    const [call] = toolResults<WorkflowOutput>(h, parent.threadId, "t3_workflow_start");
    const result = call!.result;
    expect(result.status).toBe("completed");
    const tasks = [...h.state.tasks.values()].filter((task) => task.workflowStep?.workflowId === result.workflowId);
    expect(tasks).toHaveLength(2);
    // Each agent stayed under its own share (200), together they spent the pool.
    const perTask = tasks.map((task) => (h.state.threadRuns.get(task.childThreadId) ?? []).flatMap((runId) => h.state.runAttempts.get(runId) ?? []).map((id) => h.state.attempts.get(id)!.usage!).reduce((sum, usage) => sum + usage.inputTokens + usage.outputTokens, 0));
    expect(perTask.every((tokens) => tokens > 100)).toBe(true);
    expect(perTask.every((tokens) => tokens < 200)).toBe(true);
    expect(result.budget!.spent.tokens).toBe(perTask[0]! + perTask[1]!);
    expect(result.budget!.spent.tokens).toBeGreaterThanOrEqual(200);
    // No call was refused, yet the view says the pool is spent, which kind, and what is left.
    expect(result.budget).toMatchObject({ exceeded: true, reached: ["tokens"], remaining: { tokens: 0 } });
    const status = await h.owner.ok<WorkflowOutput>("t3_workflow_status", { workflowId: result.workflowId });
    expect(status.budget).toMatchObject({ limits: { tokens: 200 }, exceeded: true, reached: ["tokens"], remaining: { tokens: 0 } });
    const refused = await h.owner.call("t3_thread_send", { threadId: tasks[0]!.childThreadId, message: script({ say: "more" }), mode: "queue" });
    expect(refused).toMatchObject({ isError: true, errorCode: "budget_exceeded" });
    expect(JSON.stringify(refused)).toContain(`tokens budget of workflow ${result.workflowId} ran out`);
    expect(h.state.threadRuns.get(tasks[0]!.childThreadId)).toHaveLength(1);
  });
});
