import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Step, connectAsThread, delegateStep, onlyTask, startDelegationHarness, systemMessages, toolResults, waitForResult, waitForTasks } from "../../testkit/delegationHarness.js";
import { type LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * A delegated child's approval requests (docs/delegation.md, Approvals): by
 * default they are the owner's alone, as spec 000 has it; a delegation with
 * approvalRouting "parent" tells the parent of each one, and the parent may
 * accept what its own runtime mode allows without asking, decline anything,
 * or leave it to the owner.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

function launchParent(steps: readonly Step[], runtimeMode: string, providerInstanceId = "a") {
  return h.launch({ title: "Parent", message: script(...steps), target: { providerInstanceId }, runtimeMode }) as Promise<{ threadId: string; runId: string }>;
}

function pendingApproval(childThreadId: string) {
  return h.until(
    () => [...h.state.runtimeRequests.values()].find((request) => request.threadId === childThreadId && request.kind !== "user_input" && request.status === "pending"),
    `an approval in ${childThreadId}`,
  );
}

/** What the parent's agent said itself (a steered notice is acknowledged with a "Steered: " message). */
function ownTexts(threadId: string, runId: string): string[] {
  return h.assistantTexts(threadId, runId).filter((text) => !text.startsWith("Steered: "));
}

function approvalNotices(threadId: string, requestId: string) {
  return systemMessages(h, threadId).filter((message) => message.text.includes(requestId));
}

type Failure = { error: { code: string; message: string } };

describe("approvals of a delegated child", () => {
  it("stay with the owner by default: the parent is not told and may not decide them", async () => {
    const child = [{ approve: { kind: "command", title: "Clean", detail: "rm -rf build" } }, { say: "approval was {{approval.decision}}" }];
    const parent = await launchParent(
      [
        delegateStep(child, { mode: "wait" }, "t"),
        { call: "t3_pending_request_respond", args: { threadId: "{{t.childThreadId}}", requestId: "{{t.pendingApproval.requestId}}", decision: "accept" }, as: "r" },
        { say: "{{r.error.code}}" },
      ],
      "full-access",
    );
    await h.waitForEnd(parent.runId);
    const task = onlyTask(h, parent.threadId);
    expect(task.approvalRouting).toBeUndefined();
    expect(ownTexts(parent.threadId, parent.runId)).toEqual(["capability_denied"]);
    const [refused] = toolResults<Failure>(h, parent.threadId, "t3_pending_request_respond");
    expect(refused!.result.error.message).toContain('approvalRouting "parent"');
    const request = await pendingApproval(task.childThreadId);

    // The owner decides it; the child goes on.
    await h.owner.ok("t3_pending_request_respond", { threadId: task.childThreadId, requestId: request.id, decision: "decline" });
    expect(await waitForResult(h, task.taskId)).toMatchObject({ status: "completed", summary: "approval was decline" });
    await h.until(() => h.state.tasks.get(task.taskId)!.completionDelivery === "delivered", "the completion notice");
    expect(h.state.tasks.get(task.taskId)!.notices.map((notice) => notice.kind)).toEqual(["completion"]);
    expect(approvalNotices(parent.threadId, request.id)).toEqual([]);
  });

  it("with approvalRouting parent, a wait hands the approval to the parent, which accepts it within full access", async () => {
    const child = [{ approve: { kind: "command", title: "Clean", detail: "rm -rf build" } }, { say: "approval was {{approval.decision}}" }];
    const parent = await launchParent(
      [
        delegateStep(child, { mode: "wait", approvalRouting: "parent", runtimeMode: "approval-required" }, "t"),
        { call: "t3_pending_request_respond", args: { threadId: "{{t.childThreadId}}", requestId: "{{t.pendingApproval.requestId}}", decision: "accept" }, as: "r" },
        { say: "{{r.status}}" },
      ],
      "full-access",
    );
    await h.waitForEnd(parent.runId);
    const task = onlyTask(h, parent.threadId);
    expect(task).toMatchObject({ approvalRouting: "parent", runtimeMode: "approval-required" });
    expect(ownTexts(parent.threadId, parent.runId)).toEqual(["resolved"]);
    expect(await waitForResult(h, task.taskId)).toMatchObject({ status: "completed", summary: "approval was accept" });
    // The wait carried the approval, so no notice was routed for it.
    expect(h.state.tasks.get(task.taskId)!.notices.filter((notice) => notice.kind === "approval")).toEqual([]);
  });

  it("within auto-accept-edits the parent may accept a file change, not a command, and may decline it", async () => {
    const child = [
      { approve: { kind: "file-change", title: "Edit", detail: "src/a.ts" } },
      { approve: { kind: "command", title: "Clean", detail: "rm -rf build" } },
      { say: "command was {{approval.decision}}" },
    ];
    const respond = (as: string, decision: string) => ({ call: "t3_pending_request_respond", args: { threadId: "{{t.childThreadId}}", requestId: "{{t.pendingApproval.requestId}}", decision }, as });
    const parent = await launchParent(
      [
        delegateStep(child, { mode: "wait", approvalRouting: "parent", clientRequestId: "edits" }, "t"),
        respond("edit", "accept"),
        // The same delegation round again: the wait resumes on the same task, now at its command approval.
        delegateStep(child, { mode: "wait", approvalRouting: "parent", clientRequestId: "edits" }, "t"),
        respond("granted", "accept"),
        respond("declined", "decline"),
        { say: "{{edit.status}}|{{granted.error.code}}|{{declined.status}}" },
      ],
      "auto-accept-edits",
    );
    await h.waitForEnd(parent.runId);
    const task = onlyTask(h, parent.threadId);
    expect(ownTexts(parent.threadId, parent.runId)).toEqual(["resolved|capability_denied|resolved"]);
    const [, granted] = toolResults<Failure>(h, parent.threadId, "t3_pending_request_respond");
    expect(granted!.result.error.message).toBe("your runtime mode auto-accept-edits does not cover a command approval: decline it, or leave it to the user");
    expect(await waitForResult(h, task.taskId)).toMatchObject({ status: "completed", summary: "command was decline" });
  });

  it("outside a wait, the approval is steered into the parent's running turn as a notice naming what it may decide", async () => {
    const child = [{ approve: { kind: "command", title: "Clean", detail: "rm -rf build" } }, { say: "approval was {{approval.decision}}" }];
    // The parent's turn stays open (its agent sleeps) while the test answers as that agent.
    const parent = await launchParent([delegateStep(child, { approvalRouting: "parent" }, "t"), { sleep: 60_000 }], "auto-accept-edits");
    const [task] = await waitForTasks(h, parent.threadId);
    const request = await pendingApproval(task!.childThreadId);
    await h.until(() => approvalNotices(parent.threadId, request.id).length === 1, "the approval notice");
    const [notice] = approvalNotices(parent.threadId, request.id);
    expect(notice!.runId).toBe(parent.runId);
    expect(notice!.text).toContain(`Delegated task "${task!.title}" (taskId ${task!.taskId}) asks for approval (command)`);
    expect(notice!.text).toContain("rm -rf build");
    expect(notice!.text).toContain("Your runtime mode (auto-accept-edits) does not cover a command approval: you may decline it, or leave it to the user");
    expect(h.state.tasks.get(task!.taskId)!.notices).toEqual([{ kind: "approval", requestId: request.id, runId: parent.runId, delivery: "steered" }]);

    const agent = await connectAsThread(h, parent.threadId);
    try {
      const refused = await agent.call("t3_pending_request_respond", { threadId: task!.childThreadId, requestId: request.id, decision: "accept" });
      expect(refused).toMatchObject({ isError: true, errorCode: "capability_denied" });
      await agent.ok("t3_pending_request_respond", { threadId: task!.childThreadId, requestId: request.id, decision: "decline" });
    } finally {
      await agent.close();
    }
    expect(await waitForResult(h, task!.taskId)).toMatchObject({ status: "completed", summary: "approval was decline" });
    await h.owner.ok("t3_thread_interrupt", { threadId: parent.threadId });
    await h.waitForEnd(parent.runId);
  });

  it("a notice queued behind a parent that cannot steer is cancelled once the owner decides first", async () => {
    const child = [{ approve: { kind: "command", title: "Clean", detail: "rm -rf build" } }, { say: "approval was {{approval.decision}}" }];
    const parent = await launchParent([delegateStep(child, { approvalRouting: "parent" }, "t"), { sleep: 60_000 }], "full-access", "rigid");
    const [task] = await waitForTasks(h, parent.threadId);
    const request = await pendingApproval(task!.childThreadId);
    const queued = await h.until(() => h.state.tasks.get(task!.taskId)!.notices.find((notice) => notice.kind === "approval"), "the queued approval notice");
    expect(queued).toMatchObject({ requestId: request.id, delivery: "queued" });
    expect(h.run(queued.runId!).status).toBe("queued");

    await h.owner.ok("t3_pending_request_respond", { threadId: task!.childThreadId, requestId: request.id, decision: "accept" });
    expect(h.run(queued.runId!)).toMatchObject({ status: "cancelled", endReason: "question_resolved" });
    expect(await waitForResult(h, task!.taskId)).toMatchObject({ status: "completed", summary: "approval was accept" });
    await h.owner.ok("t3_thread_interrupt", { threadId: parent.threadId });
    await h.waitForEnd(parent.runId);
  });
});
