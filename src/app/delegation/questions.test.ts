import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delegateStep, launchParent, onlyTask, startDelegationHarness, systemMessages, waitForResult, waitForTasks } from "../../testkit/delegationHarness.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * A child's question reaches a parent that is not in a delegate_task wait as
 * a notice (spec 000, Delegated Task Lifecycle): steered into its running
 * turn where the provider can steer, else a queued follow-up run, which is
 * cancelled if the question is answered before it starts.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

const CHILD = [{ ask: "which color?" }, { say: "color is {{answer}}" }];

/** The child's pending question, once it is asked. */
function pendingQuestion(childThreadId: string) {
  return h.until(
    () => [...h.state.runtimeRequests.values()].find((request) => request.threadId === childThreadId && request.kind === "user_input" && request.status === "pending"),
    `a question in ${childThreadId}`,
  );
}

function questionNotices(threadId: string, requestId: string) {
  return systemMessages(h, threadId).filter((message) => message.text.includes(requestId));
}

describe("question routing without a wait", () => {
  it("wakes an idle parent with a notice naming the request; the owner answers it and the child completes", async () => {
    // The child asks only after the parent's turn has ended.
    const parent = await launchParent(h, [delegateStep([{ sleep: 300 }, ...CHILD], {}, "t"), { say: "delegated" }]);
    await h.waitForEnd(parent.runId);
    const task = onlyTask(h, parent.threadId);
    expect([...h.state.runtimeRequests.values()].filter((request) => request.threadId === task.childThreadId)).toEqual([]);
    const request = await pendingQuestion(task.childThreadId);

    await h.until(() => questionNotices(parent.threadId, request.id).length === 1, "the question notice");
    const [notice] = questionNotices(parent.threadId, request.id);
    expect(notice!.text).toContain("t3_pending_request_respond");
    expect(notice!.text).toContain(task.childThreadId);
    expect(notice!.text).toContain("which color?");
    const noticeRun = h.run(notice!.runId!);
    expect(noticeRun.kind).toBe("system_follow_up");
    expect(h.state.tasks.get(task.taskId)!.notices).toEqual([{ kind: "question", requestId: request.id, runId: noticeRun.id, delivery: "queued" }]);

    const answered = await h.owner.ok("t3_pending_request_respond", { threadId: task.childThreadId, requestId: request.id, answer: "green" });
    expect(answered).toMatchObject({ requestId: request.id, status: "resolved" });
    const settled = await waitForResult(h, task.taskId);
    expect(settled).toMatchObject({ status: "completed", summary: "color is green" });
    // The result follows as its own notice; the question was routed once.
    await h.until(() => h.state.tasks.get(task.taskId)!.completionDelivery === "delivered", "the completion notice");
    expect(questionNotices(parent.threadId, request.id)).toHaveLength(1);
    expect(systemMessages(h, parent.threadId).filter((message) => message.text.includes("color is green"))).toHaveLength(1);
  });

  it("steers the notice into the parent's running turn, whose script answers it", async () => {
    const parent = await launchParent(h, [
      delegateStep(CHILD, {}, "t"),
      { sleep: 800 },
      { call: "t3_pending_request_list", args: { threadId: "{{t.childThreadId}}" }, as: "l" },
      { call: "t3_pending_request_respond", args: { threadId: "{{t.childThreadId}}", requestId: "{{l.requests.0.requestId}}", answer: "red" }, as: "r" },
      { say: "answered {{r.requestId}}" },
    ]);
    await h.waitForEnd(parent.runId);
    const task = onlyTask(h, parent.threadId);
    const request = [...h.state.runtimeRequests.values()].find((candidate) => candidate.threadId === task.childThreadId)!;
    expect(h.assistantTexts(parent.threadId, parent.runId)).toContain(`answered ${request.id}`);
    const notices = questionNotices(parent.threadId, request.id);
    expect(notices).toEqual([expect.objectContaining({ runId: parent.runId })]);
    // The scripted agent acknowledges a steer with an assistant message.
    expect(h.assistantTexts(parent.threadId, parent.runId).some((text) => text.startsWith("Steered: ") && text.includes(request.id))).toBe(true);
    expect(h.state.tasks.get(task.taskId)!.notices[0]).toMatchObject({ kind: "question", requestId: request.id, runId: parent.runId, delivery: "steered" });
    expect(await waitForResult(h, task.taskId)).toMatchObject({ status: "completed", summary: "color is red" });
  });

  it("cancels a queued notice when the question is answered before it starts", async () => {
    // `rigid` cannot steer, so the notice queues behind the parent's running turn.
    const parent = await launchParent(h, [delegateStep(CHILD, {}, "t"), { sleep: 1_500 }, { say: "parent done" }], "rigid");
    const [task] = await waitForTasks(h, parent.threadId);
    const request = await pendingQuestion(task!.childThreadId);
    await h.until(() => questionNotices(parent.threadId, request.id).length === 1, "the queued question notice");
    const noticeRun = h.run(questionNotices(parent.threadId, request.id)[0]!.runId!);
    expect(noticeRun).toMatchObject({ kind: "system_follow_up", status: "queued" });
    expect(h.run(parent.runId).status).toBe("running");

    await h.owner.ok("t3_pending_request_respond", { threadId: task!.childThreadId, requestId: request.id, answer: "blue" });
    expect(h.run(noticeRun.id)).toMatchObject({ status: "cancelled", endReason: "question_resolved" });
    expect(await waitForResult(h, task!.taskId)).toMatchObject({ status: "completed", summary: "color is blue" });
    // The result still reaches the parent after its turn: exactly one completion notice.
    await h.until(() => h.state.tasks.get(task!.taskId)!.completionDelivery === "delivered", "the completion notice");
    const completion = systemMessages(h, parent.threadId).filter((message) => message.text.includes("color is blue"));
    expect(completion).toHaveLength(1);
    await h.waitForEnd(completion[0]!.runId!);
    expect(h.runs(parent.threadId).map((run) => [run.kind, run.status])).toEqual([
      ["user_turn", "completed"],
      ["system_follow_up", "cancelled"],
      ["system_follow_up", "completed"],
    ]);
  });

  it("dismissing the question lets the child go on with an empty answer", async () => {
    const parent = await launchParent(h, [delegateStep(CHILD, {}, "t"), { say: "delegated" }]);
    const [task] = await waitForTasks(h, parent.threadId);
    const request = await pendingQuestion(task!.childThreadId);
    expect(await h.owner.ok("t3_pending_request_respond", { threadId: task!.childThreadId, requestId: request.id, dismiss: true })).toMatchObject({ status: "cancelled" });
    expect(await waitForResult(h, task!.taskId)).toMatchObject({ status: "completed", summary: "color is " });
  });
});
