import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Failure } from "../../contracts/failures.js";
import type { LaunchEstimate } from "../../contracts/tools/launchEstimate.js";
import { childScript, delegateStep, launchParent, startDelegationHarness, tasksOf, toolResults, waitForResult } from "../../testkit/delegationHarness.js";
import { type LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * dryRun on delegate_task and t3_workflow_start (docs/budgets.md, "Estimate
 * before launch"), over real MCP with scripted agents, whose driver reports
 * one token per 4 characters: nothing is started or recorded; the agent calls
 * are counted (rounds of parallel calls apart); each call is estimated from
 * the medians of completed tasks of the same instance, model and role, and
 * says so; no history gives no figure; bad input is the real call's typed
 * error.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

/** Run a parent whose turn makes `steps`, and return what each `tool` call of it answered, in order. */
async function answers<T>(tool: string, steps: Record<string, unknown>[], providerInstanceId = "a"): Promise<{ parent: string; results: { status: string; result: T }[] }> {
  const parent = await launchParent(h, steps, providerInstanceId);
  await h.waitForEnd(parent.runId, 20_000);
  return { parent: parent.threadId, results: toolResults<T>(h, parent.threadId, tool) };
}

/** Every token the task's runs reported: what its budget charged it. */
function tokensOf(taskId: string): number {
  const task = h.state.tasks.get(taskId)!;
  let tokens = 0;
  for (const runId of h.state.threadRuns.get(task.childThreadId) ?? []) {
    for (const attemptId of h.state.runAttempts.get(runId) ?? []) {
      const usage = h.state.attempts.get(attemptId)!.usage;
      if (usage !== null) tokens += usage.inputTokens + usage.outputTokens;
    }
  }
  return tokens;
}

describe("delegate_task dryRun", () => {
  it("without history: one call, no figure, and says so; nothing is started", async () => {
    const before = h.state.tasks.size;
    const { parent, results } = await answers<LaunchEstimate>("delegate_task", [delegateStep([{ say: "never runs" }], { role: "design", dryRun: true })]);
    expect(results).toHaveLength(1);
    const estimate = results[0]!.result;
    expect(estimate).toMatchObject({ dryRun: true, agentCalls: 1, rounds: 1, total: { tokens: null, costUsd: null, wallClockMs: null }, exceedsBudget: [] });
    expect(estimate.groups).toEqual([{ providerInstanceId: "b", model: estimate.groups[0]!.model, role: "design", calls: 1, sampleSize: 0, perCall: { tokens: null, costUsd: null, wallClockMs: null } }]);
    expect(estimate.notes.some((note) => note.startsWith("No completed task of b"))).toBe(true);
    expect(tasksOf(h, parent)).toEqual([]);
    expect(h.state.tasks.size).toBe(before);
  });

  it("with history: the medians of earlier tasks of that instance, model and role, and the sample size; the next real task lands on the estimate", async () => {
    // Three research tasks whose children say 400, 1,200 and 800 characters: the median task is the 800 one.
    const sizes = [400, 1_200, 800];
    const { parent: first } = await answers("delegate_task", sizes.map((size, index) => delegateStep([{ say: "r".repeat(size) }], { role: "research" }, `t${index}`)));
    const done = await Promise.all(tasksOf(h, first).map((task) => waitForResult(h, task.taskId, 20_000)));
    const actual = done.map((task) => tokensOf(task.taskId));
    const sortedActual = [...actual].sort((a, b) => a - b);

    const { results } = await answers<LaunchEstimate>("delegate_task", [delegateStep([{ say: "r".repeat(800) }], { role: "research", dryRun: true, budget: { tokens: 10 } })]);
    const estimate = results[0]!.result;
    expect(estimate.groups).toHaveLength(1);
    expect(estimate.groups[0]).toMatchObject({ providerInstanceId: "b", role: "research", calls: 1, sampleSize: 3 });
    expect(estimate.total.tokens).toBe(sortedActual[1]);
    expect(estimate.total.wallClockMs).toBeGreaterThan(0);
    // The scripted driver reports no cost and b has no prices: no cost figure rather than $0.
    expect(estimate.total.costUsd).toBeNull();
    expect(estimate.notes.some((note) => note.includes("reported or priced a cost"))).toBe(true);
    expect(estimate.exceedsBudget).toEqual(["tokens"]);
    // Another role has no history of its own.
    const { results: other } = await answers<LaunchEstimate>("delegate_task", [delegateStep([{ say: "x" }], { role: "review", dryRun: true })]);
    expect(other[0]!.result.groups[0]!.sampleSize).toBe(0);

    // Estimate against actual: the same work for real spends what the estimate said, within 5%.
    const { parent: real } = await answers("delegate_task", [delegateStep([{ say: "r".repeat(800) }], { role: "research" }, "t")]);
    const [task] = tasksOf(h, real);
    await waitForResult(h, task!.taskId, 20_000);
    const spent = tokensOf(task!.taskId);
    expect(Math.abs(estimate.total.tokens! - spent) / spent).toBeLessThan(0.05);
  });

  it("refuses what the real call refuses, with its typed error, and records nothing", async () => {
    const before = h.state.tasks.size;
    const { results } = await answers<{ error: Failure }>("delegate_task", [
      delegateStep([{ say: "x" }], { target: { providerInstanceId: "nowhere" }, dryRun: true }),
      delegateStep([{ say: "x" }], { outputSchema: { type: "bogus" }, dryRun: true }),
    ]);
    expect(results.map((entry) => entry.status)).toEqual(["failed", "failed"]);
    expect(results[0]!.result.error.code).toBe("provider_unavailable");
    expect(results[1]!.result.error.code).toBe("invalid_request");
    expect(h.state.tasks.size).toBe(before);
  });

  it("under a root whose spawns ran out: budget_exceeded, as the decider answers the real call", async () => {
    const steps = [delegateStep([{ say: "first" }], { mode: "wait" }), delegateStep([{ say: "x" }], { dryRun: true }), { say: "done" }];
    const root = await h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Spent root", message: script(...steps), target: { providerInstanceId: "a" }, budget: { spawns: 1 } });
    await h.waitForEnd(root.runId, 20_000);
    const [, dry] = toolResults<{ error: Failure }>(h, root.threadId, "delegate_task");
    expect(dry!.status).toBe("failed");
    expect(dry!.result.error).toMatchObject({ code: "budget_exceeded", message: expect.stringContaining(`spawns budget of thread ${root.threadId} ran out`) });
    expect(tasksOf(h, root.threadId)).toHaveLength(1);
  });
});

describe("t3_workflow_start dryRun", () => {
  const fanOut = `
    const drafts = await parallel([0, 1, 2, 3].map((i) => () => agent("draft " + i, { label: "draft " + i, target: { providerInstanceId: "b" } })));
    const verdict = await agent("judge " + drafts.length, { schema: { type: "object", properties: { winner: { type: "integer", minimum: 0 } }, required: ["winner"] } });
    return drafts[verdict.winner];`;

  it("counts the script's agent() calls in rounds, estimates each group, and passes a spawns budget it would break; no workflow starts", async () => {
    const { parent, results } = await answers<LaunchEstimate>("t3_workflow_start", [{ call: "t3_workflow_start", args: { script: fanOut, budget: { spawns: 2 }, dryRun: true } }]);
    expect(results).toHaveLength(1);
    const estimate = results[0]!.result;
    expect(estimate).toMatchObject({ dryRun: true, agentCalls: 5, rounds: 2, exceedsBudget: ["spawns"] });
    // Four on b (their target), one on the parent's own instance.
    expect(estimate.groups.map((group) => [group.providerInstanceId, group.calls])).toEqual([
      ["b", 4],
      ["a", 1],
    ]);
    expect([...h.state.workflows.values()].filter((workflow) => workflow.parentThreadId === parent)).toEqual([]);
    expect(tasksOf(h, parent)).toEqual([]);
  });

  it("wall-clock time adds up over rounds, the slowest call of each", async () => {
    // History for a workflow's agent() on the parent's instance (a, its default model, no role): one finished call.
    const seed = `return await agent(${JSON.stringify(childScript({ say: "y".repeat(100) }))});`;
    const { parent: seeded } = await answers("t3_workflow_start", [{ call: "t3_workflow_start", args: { script: seed, mode: "wait" } }]);
    await waitForResult(h, tasksOf(h, seeded)[0]!.taskId, 20_000);
    const onA = `await parallel([1, 2, 3].map((i) => () => agent("a " + i))); return await agent("last");`;
    const { results } = await answers<LaunchEstimate>("t3_workflow_start", [{ call: "t3_workflow_start", args: { script: onA, dryRun: true } }]);
    const estimate = results[0]!.result;
    const perCall = estimate.groups[0]!.perCall;
    expect(estimate).toMatchObject({ agentCalls: 4, rounds: 2 });
    expect(estimate.groups[0]!.sampleSize).toBeGreaterThanOrEqual(1);
    expect(estimate.total.tokens).toBe(perCall.tokens! * 4);
    expect(estimate.total.wallClockMs).toBe(perCall.wallClockMs! * 2);
  });

  it("a loop that ends on what the agents say is not knowable, and says why", async () => {
    const loop = `let answer = ""; while (!String(answer).includes("DONE")) answer = await agent("try again"); return answer;`;
    const { results } = await answers<LaunchEstimate>("t3_workflow_start", [{ call: "t3_workflow_start", args: { script: loop, dryRun: true } }]);
    const estimate = results[0]!.result;
    expect(estimate).toMatchObject({ agentCalls: null, rounds: null, total: { tokens: null, costUsd: null, wallClockMs: null } });
    expect(estimate.notes[0]).toMatch(/^The fan-out is not knowable: the script made more than 1000 agent\(\) calls/);
  });

  it("a script that does not run, or a negative limit, is the real start's typed error", async () => {
    const { results } = await answers<{ error: Failure }>("t3_workflow_start", [
      { call: "t3_workflow_start", args: { script: "return (", dryRun: true } },
      { call: "t3_workflow_start", args: { script: fanOut, budget: { spawns: -1 }, dryRun: true } },
    ]);
    expect(results.map((entry): [string, string] => [entry.status, entry.result.error.code])).toEqual([
      ["failed", "invalid_request"],
      ["failed", "invalid_request"],
    ]);
  });
});
