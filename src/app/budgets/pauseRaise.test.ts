import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BudgetRaiseOutput } from "../../contracts/tools/budgetTools.js";
import type { WorkflowOutput } from "../../contracts/tools/workflowTools.js";
import { childScript, delegateStep, launchParent, onlyTask, startDelegationHarness, waitForResult } from "../../testkit/delegationHarness.js";
import { type LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * onExceeded "pause" and t3_budget_raise (docs/budgets.md, "Pause and
 * raise") over real MCP with scripted agents: a paused tree starts nothing
 * new, reads paused everywhere, survives a restart, and goes on where it
 * stopped once the limit is raised; a bad raise is a typed error that writes
 * nothing.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

const workflowTasks = (workflowId: string) => [...h.state.tasks.values()].filter((task) => task.workflowStep?.workflowId === workflowId);

async function startWorkflow(body: string, budget: Record<string, unknown>): Promise<{ parent: { threadId: string; runId: string }; workflowId: string }> {
  const parent = await launchParent(h, [{ call: "t3_workflow_start", args: { script: body, budget }, as: "w" }, { say: "started {{w.workflowId}}" }]);
  await h.waitForEnd(parent.runId, 20_000);
  const workflowId = await h.until(() => [...h.state.workflows.values()].find((workflow) => workflow.parentThreadId === parent.threadId)?.workflowId ?? null, "the workflow");
  return { parent, workflowId };
}

/** Once every task the workflow started (`tasks` of them) has its result: the workflow's status, which must still be running and read paused. */
async function pausedWith(workflowId: string, tasks: number): Promise<WorkflowOutput> {
  await h.until(() => {
    const started = workflowTasks(workflowId);
    return started.length === tasks && started.every((task) => task.resultContextTransferId !== null) ? started : null;
  }, `${tasks} finished agent() tasks`);
  const status = await h.owner.ok<WorkflowOutput>("t3_workflow_status", { workflowId });
  expect(status).toMatchObject({ status: "running", budget: { paused: true } });
  return status;
}

/** The workflow's status once it ended. */
async function ended(workflowId: string): Promise<WorkflowOutput> {
  await h.until(() => h.state.workflows.get(workflowId)?.status !== "running", "the workflow to end", 40_000);
  return h.owner.ok<WorkflowOutput>("t3_workflow_status", { workflowId });
}

describe("a workflow paused on its spawns budget", () => {
  it("16 parallel agent() calls under spawns 4 with pause: 4 run, 12 wait; a raise to 16 lets all 12 go on", async () => {
    const prompt = JSON.stringify(childScript({ say: "ok" }));
    const body = `return await parallel(Array.from({ length: 16 }, (_, i) => () => agent(${prompt}, { label: "s" + i })));`;
    const { workflowId } = await startWorkflow(body, { spawns: 4, onExceeded: "pause" });
    const paused = await pausedWith(workflowId, 4);
    expect(paused).toMatchObject({ status: "running", budget: { limits: { spawns: 4 }, spent: { spawns: 4 }, reached: ["spawns"], paused: true } });
    expect(paused.steps.filter((step) => step.status === "failed")).toEqual([]);

    const raised = await h.owner.ok<BudgetRaiseOutput>("t3_budget_raise", { workflowId, limits: { spawns: 16 } });
    expect(raised).toMatchObject({ holder: { kind: "workflow", id: workflowId }, limits: { spawns: 16, onExceeded: "pause" }, paused: false });
    const done = await ended(workflowId);
    expect(done.status).toBe("completed");
    expect(done.result).toEqual(Array.from({ length: 16 }, () => "ok"));
    expect(workflowTasks(workflowId)).toHaveLength(16);
    expect(done.budget).toMatchObject({ spent: { spawns: 16 }, paused: false });
  });

  it("stays paused across a restart, and the raise after it resumes the waiting call", async () => {
    const prompt = (say: string) => JSON.stringify(childScript({ say }));
    const body = `const a = await agent(${prompt("one")}, { label: "a" }); const b = await agent(${prompt("two")}, { label: "b" }); return [a, b];`;
    const { workflowId } = await startWorkflow(body, { spawns: 1, onExceeded: "pause" });
    await pausedWith(workflowId, 1);
    h = await h.restart();
    // The restarted runner replays the script: the first call is answered from the journal, the second waits again.
    await h.until(() => h.state.workflows.get(workflowId)?.steps.length === 1, "the replayed journal");
    const after = await pausedWith(workflowId, 1);
    expect(after.steps.map((step) => step.status)).toEqual(["completed"]);

    await h.owner.ok<BudgetRaiseOutput>("t3_budget_raise", { workflowId, limits: { spawns: 2 } });
    const done = await ended(workflowId);
    expect(done).toMatchObject({ status: "completed", result: ["one", "two"] });
    expect(workflowTasks(workflowId)).toHaveLength(2);
  });
});

describe("a task paused on its tokens budget", () => {
  it("lets the running turn finish, takes no new message until a raise, then takes it", async () => {
    // The child's answer alone is 100 output tokens; its budget is 60 and pauses.
    const parent = await launchParent(h, [delegateStep([{ say: "x".repeat(400) }], { clientRequestId: "p", budget: { tokens: 60, onExceeded: "pause" } }, "t"), { say: "delegated" }]);
    await h.waitViaMcp(parent.threadId, parent.runId);
    const task = await waitForResult(h, onlyTask(h, parent.threadId).taskId, 20_000);
    expect(task.status).toBe("completed");
    const exceeded = await h.until(() => h.state.tasks.get(task.taskId)!.budgetExceeded ?? null, "the exhaustion to be recorded");
    expect(exceeded).toMatchObject({ kind: "tokens", limit: 60, policy: "pause" });
    const status = await h.owner.ok<{ budget: { paused: boolean; reached: string[] } }>("task_status", { taskId: task.taskId });
    expect(status.budget).toMatchObject({ paused: true, reached: ["tokens"] });

    const refused = await h.owner.call("t3_thread_send", { threadId: task.childThreadId, message: script({ say: "more" }) });
    expect(refused).toMatchObject({ isError: true, errorCode: "budget_exceeded" });
    expect(JSON.stringify(refused)).toContain("paused on budget until it is raised");

    const raised = await h.owner.ok<BudgetRaiseOutput>("t3_budget_raise", { taskId: task.taskId, limits: { tokens: 10_000 } });
    expect(raised).toMatchObject({ limits: { tokens: 10_000, onExceeded: "pause" }, reached: [], paused: false });
    expect(h.state.tasks.get(task.taskId)!.budgetExceeded).toBeNull();
    const sent = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: task.childThreadId, message: script({ say: "more" }) });
    expect((await h.waitForEnd(sent.runId, 20_000)).status).toBe("completed");
  });
});

describe("a root thread paused on its turns budget", () => {
  it("keeps queued follow-ups queued instead of cancelling them, and a raise starts them in order", async () => {
    const root = await h.owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
      title: "Paused queue",
      message: script({ sleep: 500 }, { say: "first" }),
      target: { providerInstanceId: "a" },
      budget: { turns: 2, onExceeded: "pause" },
    });
    const queued: string[] = [];
    for (const say of ["second", "third", "fourth"]) {
      queued.push((await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: root.threadId, message: script({ say }), mode: "queue" })).runId);
    }
    expect((await h.waitForEnd(root.runId, 20_000)).status).toBe("completed");
    expect((await h.waitForEnd(queued[0]!, 20_000)).status).toBe("completed");
    // The thread is idle with two turns left in its queue: paused (its 2 turns are spent, so a third would pass the limit), not cancelled.
    expect(queued.slice(1).map((runId) => h.state.runs.get(runId)!.status)).toEqual(["queued", "queued"]);

    const raised = await h.owner.ok<BudgetRaiseOutput>("t3_budget_raise", { threadId: root.threadId, limits: { turns: 4 } });
    expect(raised).toMatchObject({ holder: { kind: "thread", id: root.threadId }, limits: { turns: 4 }, paused: false });
    for (const runId of queued.slice(1)) expect((await h.waitForEnd(runId, 20_000)).status).toBe("completed");
    expect(h.assistantTexts(root.threadId)).toEqual(["first", "second", "third", "fourth"]);
  });
});

describe("bad raises", () => {
  it("answer a typed error and write nothing", async () => {
    const parent = await launchParent(h, [delegateStep([{ say: "hi" }], { clientRequestId: "bad", budget: { tokens: 1_000, turns: 5 } }, "t"), { say: "delegated" }]);
    await h.waitViaMcp(parent.threadId, parent.runId);
    const task = await waitForResult(h, onlyTask(h, parent.threadId).taskId, 20_000);
    const before = h.state.lastSequence;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ taskId: task.taskId, limits: { tokens: 10 } }, "invalid_request", "a raise cannot lower a limit"],
      [{ taskId: task.taskId, limits: { spawns: 3 } }, "invalid_request", "it has no spawns limit to raise"],
      [{ taskId: task.taskId, limits: { tokens: 1_000 } }, "invalid_request", "the raise changes no limit"],
      [{ taskId: task.taskId, threadId: parent.threadId, limits: { tokens: 2_000 } }, "invalid_request", "name exactly one budget"],
      [{ taskId: "subagent:none", limits: { tokens: 2_000 } }, "invalid_request", "does not exist"],
      [{ threadId: parent.threadId, limits: { tokens: 2_000 } }, "invalid_request", "has no budget"],
      [{ taskId: task.taskId, limits: { tokens: -5 } }, "invalid_request", "tokens"],
      [{ taskId: task.taskId, limits: { tokens: "lots" } }, "invalid_request", "tokens"],
    ];
    for (const [args, code, message] of cases) {
      const outcome = await h.owner.call("t3_budget_raise", args);
      expect(outcome, JSON.stringify(args)).toMatchObject({ isError: true, errorCode: code });
      expect(JSON.stringify(outcome)).toContain(message);
    }
    expect(h.state.lastSequence).toBe(before);
    expect(h.state.tasks.get(task.taskId)!.budget).toEqual({ tokens: 1_000, turns: 5 });
  });

  it("an agent may not raise a budget above it: a child raising its own task's budget is capability_denied", async () => {
    const parent = await launchParent(h, [delegateStep([{ say: "child" }], { clientRequestId: "own", budget: { tokens: 1_000 } }, "t"), { say: "delegated" }]);
    await h.waitViaMcp(parent.threadId, parent.runId);
    const task = await waitForResult(h, onlyTask(h, parent.threadId).taskId, 20_000);
    // The child is done; its thread raises through a follow-up turn, as any agent below the budget would.
    const raise = { call: "t3_budget_raise", args: { taskId: task.taskId, limits: { tokens: 5_000 } }, as: "r" };
    const sent = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: task.childThreadId, message: script(raise, { say: "{{r.error.code}}" }) });
    await h.waitForEnd(sent.runId, 20_000);
    expect(h.assistantTexts(task.childThreadId).at(-1)).toBe("capability_denied");
    expect(h.state.tasks.get(task.taskId)!.budget).toEqual({ tokens: 1_000 });
  });
});
