import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectAsThread,
  delegateStep,
  launchParent,
  onlyTask,
  startDelegationHarness,
  systemMessages,
  tasksOf,
  toolResults,
  waitForResult,
  waitForTasks,
} from "../../testkit/delegationHarness.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";
import type { DelegateTaskResult } from "../../contracts/tools/toolOutputs.js";

/**
 * mode async: delegate_task answers at once, task_status polls the durable
 * projection, and a result reaches a parent that is not waiting as a
 * follow-up run (or a steer into its running turn), exactly once per task.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

describe("async polling", () => {
  it("returns at once, then task_status reaches the result", async () => {
    const parent = await launchParent(h, [
      delegateStep([{ sleep: 300 }, { say: "polled result" }], { clientRequestId: "poll" }, "t"),
      { say: "{{t.status}}/{{t.workState}}/{{t.summary}}" },
      { sleep: 1_200 },
      { call: "task_status", args: { taskId: "{{t.taskId}}" }, as: "s" },
      { say: "{{s.status}}/{{s.workState}}: {{s.summary}}" },
    ]);
    const [task] = await waitForTasks(h, parent.threadId);

    // The parent's own credential polls while the child still works.
    const asParent = await connectAsThread(h, parent.threadId);
    const first = await asParent.ok<DelegateTaskResult>("task_status", { taskId: task!.taskId });
    expect(first).toMatchObject({ taskId: task!.taskId, workState: "working", summary: null, resultContextTransferId: null, providerInstanceId: "b" });
    expect(["queued", "running"]).toContain(first.status);
    let polls = 1;
    let latest = first;
    while (latest.status !== "completed") {
      expect(latest.workState).toBe("working");
      await new Promise((resolve) => setTimeout(resolve, 50));
      latest = await asParent.ok<DelegateTaskResult>("task_status", { taskId: task!.taskId });
      polls += 1;
      expect(polls).toBeLessThan(200);
    }
    expect(polls).toBeGreaterThan(1);
    expect(latest).toMatchObject({ status: "completed", workState: "result_available", summary: "polled result", latestTerminalRunId: task!.childRunId });

    const waited = await h.waitViaMcp(parent.threadId, parent.runId);
    const [delegated] = toolResults<DelegateTaskResult>(h, parent.threadId, "delegate_task");
    expect(["queued", "running"]).toContain(delegated!.result.status);
    expect(delegated!.result).toMatchObject({ workState: "working", summary: null, waitTimedOut: false });
    expect(h.assistantTexts(parent.threadId, parent.runId)[0]).toMatch(/^(queued|running)\/working\/null$/);
    expect(waited.result).toBe("completed/result_available: polled result");
    // The parent was still running: the result was steered into its turn (or
    // acknowledged by a poll first); either way no follow-up run wakes it.
    const settled = h.state.tasks.get(task!.taskId)!;
    expect(["delivered", "acknowledged"]).toContain(settled.completionDelivery);
    if (settled.completionDelivery === "delivered") {
      expect(settled.notices).toEqual([{ kind: "completion", requestId: null, runId: parent.runId, delivery: "steered" }]);
      expect(systemMessages(h, parent.threadId)).toEqual([expect.objectContaining({ runId: parent.runId })]);
    }
    expect(h.runs(parent.threadId).map((run) => run.kind)).toEqual(["user_turn"]);
  });

  it("answers task_not_found for another parent's task", async () => {
    const owner = await launchParent(h, [delegateStep([{ say: "mine" }], { mode: "wait" })]);
    await h.waitViaMcp(owner.threadId, owner.runId);
    const taskId = onlyTask(h, owner.threadId).taskId;

    const stranger = await launchParent(h, [{ call: "task_status", args: { taskId }, as: "x" }, { say: "{{x.error.code}}" }], "a", "Stranger");
    expect((await h.waitViaMcp(stranger.threadId, stranger.runId)).result).toBe("task_not_found");
    const asStranger = await connectAsThread(h, stranger.threadId);
    expect((await asStranger.call("task_status", { taskId })).errorCode).toBe("task_not_found");
    // Between its runs the stranger may read but not cancel (docs/mcp.md, Live run).
    expect((await asStranger.call("task_cancel", { taskId })).errorCode).toBe("parent_not_active");
    expect((await asStranger.call("task_status", { taskId: "subagent:nope" })).errorCode).toBe("task_not_found");
    // The owner may read any task.
    expect(await h.owner.ok("task_status", { taskId })).toMatchObject({ taskId, status: "completed", summary: "mine" });
  });
});

describe("completion delivery to a parent that is not waiting", () => {
  it("wakes the idle parent with a system follow-up run carrying the result", async () => {
    const parent = await launchParent(h, [delegateStep([{ sleep: 300 }, { say: "late result" }], {}, "t"), { say: "delegated" }]);
    const ended = await h.waitForEnd(parent.runId);
    expect(ended.status).toBe("completed");
    const task = onlyTask(h, parent.threadId);
    expect(task.resultContextTransferId).toBeNull();

    const followUp = await h.until(() => h.runs(parent.threadId).find((run) => run.kind === "system_follow_up"), "a follow-up run");
    await h.waitForEnd(followUp.id);
    const notices = systemMessages(h, parent.threadId);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.runId).toBe(followUp.id);
    expect(notices[0]!.text).toContain(task.taskId);
    expect(notices[0]!.text).toContain("late result");
    expect(notices[0]!.text).toContain("completed");
    const settled = h.state.tasks.get(task.taskId)!;
    expect(settled).toMatchObject({ status: "completed", completionDelivery: "delivered", notices: [{ kind: "completion", runId: followUp.id, delivery: "queued" }] });
    expect(h.state.transfers.get(settled.resultContextTransferId!)!.status).toBe("consumed");
    expect(h.runs(parent.threadId)).toHaveLength(2);
  });

  const orders: { name: string; sleeps: number[]; provider: string }[] = [
    { name: "ascending", sleeps: [100, 250, 400], provider: "a" },
    { name: "descending", sleeps: [400, 250, 100], provider: "rigid" },
    { name: "shuffled", sleeps: [300, 50, 450, 0, 200, 100, 350, 150], provider: "a" },
    { name: "shuffled, queued behind a non-steering parent", sleeps: [200, 0, 350, 100, 300, 50, 250, 150], provider: "rigid" },
    { name: "simultaneous", sleeps: [200, 200, 200, 200, 200, 200, 200, 200], provider: "a" },
  ];
  for (const order of orders) {
    it(`delivers exactly one notice per child (${order.sleeps.length} children, ${order.name}, parent on ${order.provider})`, async () => {
      const steps = order.sleeps.map((ms, i) => delegateStep([{ sleep: ms }, { say: `result ${i}` }], { clientRequestId: `child-${i}` }));
      const parent = await launchParent(h, steps, order.provider);
      const tasks = await waitForTasks(h, parent.threadId, order.sleeps.length);
      for (const task of tasks) await waitForResult(h, task.taskId);
      await h.until(
        () =>
          tasksOf(h, parent.threadId).every((task) => task.completionDelivery === "delivered") &&
          h.runs(parent.threadId).every((run) => ["completed", "failed", "interrupted", "cancelled"].includes(run.status)),
        "every notice delivered and the parent idle",
      );
      const notices = systemMessages(h, parent.threadId);
      expect(notices).toHaveLength(order.sleeps.length);
      for (const [i, task] of tasksOf(h, parent.threadId).entries()) {
        expect(task).toMatchObject({ status: "completed", summary: `result ${i}` });
        const mentioning = notices.filter((notice) => notice.text.includes(`(taskId ${task.taskId},`));
        expect(mentioning, `notices for child ${i}`).toHaveLength(1);
        expect(mentioning[0]!.text).toContain(`result ${i}`);
        expect(task.notices.filter((notice) => notice.kind === "completion")).toHaveLength(1);
      }
      const runs = h.runs(parent.threadId);
      expect(runs.every((run) => run.status === "completed")).toBe(true);
      if (order.provider === "rigid") {
        // A parent that cannot steer gets one queued follow-up run per notice.
        expect(runs.filter((run) => run.kind === "system_follow_up")).toHaveLength(order.sleeps.length);
      }
    });
  }
});
