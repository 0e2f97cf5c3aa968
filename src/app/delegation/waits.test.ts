import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delegateStep, launchParent, onlyTask, startDelegationHarness, systemMessages, toolResults, waitForResult } from "../../testkit/delegationHarness.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";
import type { DelegateTaskResult } from "../../contracts/tools/toolOutputs.js";

/**
 * delegate_task mode wait (spec 000): it returns on the result, a blocking
 * question, a live approval of the task's own work, or the timeout, which
 * cancels nothing.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

describe("delegate_task mode wait", () => {
  it("ends on a blocking question, which the parent answers through the pending-request tools", async () => {
    // The child works a moment after the answer, so the parent is back in its wait when the result lands.
    const child = [{ ask: "which color?" }, { sleep: 300 }, { say: "color is {{answer}}" }];
    const wait = { mode: "wait", clientRequestId: "question" };
    const parent = await launchParent(h, [
      delegateStep(child, wait, "t"),
      { say: "pending={{t.hasPendingQuestion}} timedOut={{t.waitTimedOut}} status={{t.status}} approval={{t.pendingApproval}}" },
      { call: "t3_pending_request_list", args: { threadId: "{{t.childThreadId}}" }, as: "l" },
      { call: "t3_pending_request_read", args: { threadId: "{{t.childThreadId}}", requestId: "{{l.requests.0.requestId}}" }, as: "r" },
      { call: "t3_pending_request_respond", args: { threadId: "{{t.childThreadId}}", requestId: "{{r.requestId}}", answer: "blue" }, as: "answered" },
      delegateStep(child, wait, "t2"),
      { call: "task_status", args: { taskId: "{{t.taskId}}" }, as: "s" },
      { say: "{{r.payload.questions.0.question}} {{answered.status}} -> {{t2.status}}: {{t2.summary}} / {{s.status}}: {{s.summary}}" },
    ]);
    const waited = await h.waitViaMcp(parent.threadId, parent.runId);
    expect(waited).toMatchObject({ status: "completed" });
    const texts = h.assistantTexts(parent.threadId, parent.runId);
    expect(texts[0]).toBe("pending=true timedOut=false status=waiting approval=null");
    expect(texts[1]).toBe("which color? resolved -> completed: color is blue / completed: color is blue");

    const task = onlyTask(h, parent.threadId);
    const [listed] = toolResults<{ requests: { requestId: string; kind: string; runId: string }[] }>(h, parent.threadId, "t3_pending_request_list");
    expect(listed!.result.requests).toEqual([expect.objectContaining({ kind: "user_input", runId: task.childRunId, status: "pending" })]);
    const request = h.state.runtimeRequests.get(listed!.result.requests[0]!.requestId)!;
    expect(request).toMatchObject({ threadId: task.childThreadId, status: "resolved", resolution: { answers: { q1: ["blue"] } } });
    // The child completed with the answer, in its original run.
    expect(h.run(task.childRunId!).status).toBe("completed");
    expect(h.assistantTexts(task.childThreadId)).toEqual(["color is blue"]);
    expect(await h.owner.ok("t3_thread_wait", { threadId: task.childThreadId })).toMatchObject({ status: "completed", result: "color is blue" });
    // The wait took the question and the result: no notice reached the parent for either.
    expect(systemMessages(h, parent.threadId)).toEqual([]);
    expect(task).toMatchObject({ status: "completed", completionDelivery: "acknowledged", notices: [] });
    expect(h.runs(parent.threadId)).toHaveLength(1);
  });

  it("ends on a pending approval of the task's own work; the owner answers it over HTTP", async () => {
    const child = [{ approve: { kind: "command", title: "Clean", detail: "rm -rf build" } }, { say: "approval was {{approval.decision}}" }];
    const parent = await launchParent(h, [
      delegateStep(child, { mode: "wait" }, "t"),
      { say: "{{t.pendingApproval.requestId}}|{{t.pendingApproval.kind}}|{{t.pendingApproval.runId}}|{{t.hasPendingQuestion}}|{{t.waitTimedOut}}|{{t.status}}" },
      // Approvals carry no authority for the parent: the pending-request tools refuse them.
      { call: "t3_pending_request_respond", args: { threadId: "{{t.childThreadId}}", requestId: "{{t.pendingApproval.requestId}}", answer: "yes" }, as: "refused" },
      { say: "{{refused.error.code}}" },
    ]);
    await h.waitForEnd(parent.runId);
    const task = onlyTask(h, parent.threadId);
    const [requestId, kind, runId, question, timedOut, status] = h.assistantTexts(parent.threadId, parent.runId)[0]!.split("|");
    expect({ kind, runId, question, timedOut, status }).toEqual({ kind: "command", runId: task.childRunId, question: "false", timedOut: "false", status: "waiting" });
    expect(h.assistantTexts(parent.threadId, parent.runId)[1]).toBe("invalid_request");
    expect(h.state.runtimeRequests.get(requestId!)).toMatchObject({ threadId: task.childThreadId, kind: "command", status: "pending" });
    expect(h.run(task.childRunId!).status).toBe("waiting_on_approval");

    const response = await h.dispatch("runtime-request.respond", { threadId: task.childThreadId, requestId, response: { decision: "accept" } });
    expect(response.status).toBe(200);
    const settled = await waitForResult(h, task.taskId);
    expect(settled).toMatchObject({ status: "completed", summary: "approval was accept" });
    // The parent's turn had ended, so the result comes as a follow-up run.
    const followUp = await h.until(() => h.runs(parent.threadId).find((run) => run.kind === "system_follow_up"), "the completion notice");
    expect(systemMessages(h, parent.threadId)).toEqual([expect.objectContaining({ runId: followUp.id, text: expect.stringContaining("approval was accept") })]);
  });

  it("times out without cancelling the child, which completes later", async () => {
    const parent = await launchParent(h, [
      delegateStep([{ sleep: 800 }, { say: "late but done" }], { mode: "wait", timeoutMs: 100 }, "t"),
      { say: "{{t.waitTimedOut}}|{{t.status}}|{{t.workState}}|{{t.summary}}|{{t.hasPendingQuestion}}" },
    ]);
    const ended = await h.waitForEnd(parent.runId);
    const task = onlyTask(h, parent.threadId);
    expect(h.assistantTexts(parent.threadId, parent.runId)).toEqual(["true|running|working|null|false"]);
    expect(Date.parse(ended.endedAt!) - Date.parse(ended.startedAt!)).toBeLessThan(700);
    const childRun = h.run(task.childRunId!);
    expect(["starting", "running"]).toContain(childRun.status);
    expect(childRun.interruptRequestedAt).toBeNull();

    const settled = await waitForResult(h, task.taskId);
    expect(settled).toMatchObject({ status: "completed", summary: "late but done" });
    expect(h.run(task.childRunId!)).toMatchObject({ status: "completed", interruptRequestedAt: null });
    // The wait ended without the result, so it is delivered to the parent.
    await h.until(() => systemMessages(h, parent.threadId).length === 1, "the completion notice");
    expect(systemMessages(h, parent.threadId)[0]!.text).toContain("late but done");
  });

  it("returns a failed child's error before its progress text", async () => {
    const parent = await launchParent(h, [delegateStep([{ say: "halfway there" }, { fail: "disk full" }], { mode: "wait" }, "t"), { say: "{{t.status}}" }]);
    await h.waitForEnd(parent.runId);
    const [call] = toolResults<DelegateTaskResult>(h, parent.threadId, "delegate_task");
    expect(call!.result).toMatchObject({ status: "failed", workState: "result_available", summary: "Error: disk full\n\nhalfway there", latestTerminalStatus: "failed" });
    expect(h.assistantTexts(parent.threadId, parent.runId)).toEqual(["failed"]);
  });
});
