import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  delegateStep,
  launchParent,
  onlyTask,
  startDelegationHarness,
  systemMessages,
  waitForResult,
  waitForTasks,
} from "../../testkit/delegationHarness.js";
import { type LoomHarness, script } from "../../testkit/loomHarness.js";
import type { DelegateTaskResult } from "../../contracts/tools/toolOutputs.js";

/**
 * task_cancel (spec 000) in each state of the child: running, waiting on a
 * question, already terminal, and with a grandchild of its own. A cancelled
 * task's delivery is disposed, so its parent is not woken for it.
 *
 * Not covered here: task_not_cancellable. A nonterminal task always has a
 * run, a queued turn or unfinished work until the same decision that ends
 * them settles it, so the rejection cannot be reached over MCP without racing
 * the decider; src/core/delegation's own tests cover it.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

type CancelResult = DelegateTaskResult & { cancelReason: string | null };

/**
 * No notice about the task reaches its parent, ever: once the task has its
 * final result and its delivery is disposed (only a pending delivery ever
 * changes again), no completion notice can be delivered later.
 */
async function expectNoCompletionNotice(parentThreadId: string, taskId: string): Promise<void> {
  const task = await h.until(() => {
    const current = h.state.tasks.get(taskId)!;
    return current.resultContextTransferId !== null && current.completionDelivery !== "not_ready" && current.completionDelivery !== "pending" ? current : null;
  }, `task ${taskId} to settle its delivery`);
  expect(task.completionDelivery).toBe("disposed");
  expect(systemMessages(h, parentThreadId).filter((message) => message.text.includes(taskId) && message.text.includes("finished"))).toEqual([]);
  expect(h.state.tasks.get(taskId)!.notices.filter((notice) => notice.kind === "completion")).toEqual([]);
}

describe("task_cancel", () => {
  it("interrupts a running child; the task settles interrupted and its delivery is disposed", async () => {
    const parent = await launchParent(h, [delegateStep([{ sleep: 30_000 }, { say: "never" }], {}, "t"), { say: "delegated" }]);
    await h.waitForEnd(parent.runId);
    const task = onlyTask(h, parent.threadId);
    await h.waitForRun(task.childRunId!, "running");

    const cancelled = await h.owner.ok<CancelResult>("task_cancel", { taskId: task.taskId, reason: "no longer needed" });
    expect(cancelled).toMatchObject({ taskId: task.taskId, cancelReason: "no longer needed" });
    const childRun = await h.waitForEnd(task.childRunId!);
    expect(childRun).toMatchObject({ status: "interrupted", endReason: "interrupted_by_user" });
    expect(h.assistantTexts(task.childThreadId)).not.toContain("never");
    const settled = await waitForResult(h, task.taskId);
    expect(settled).toMatchObject({ status: "interrupted", completionDelivery: "disposed", cancelReason: "no longer needed" });
    expect(settled.cancelRequestedAt).not.toBeNull();
    expect(h.state.subagents.get(task.taskId)!.status).toBe("interrupted");
    expect(h.state.nodes.get(task.childNodeId)!.status).toBe("interrupted");
    await expectNoCompletionNotice(parent.threadId, task.taskId);
    expect(h.runs(parent.threadId)).toHaveLength(1);
    expect(await h.owner.ok("task_status", { taskId: task.taskId })).toMatchObject({ status: "interrupted", workState: "result_available" });
  });

  it("cancels from the parent's own script", async () => {
    const parent = await launchParent(h, [
      delegateStep([{ sleep: 30_000 }], {}, "t"),
      { sleep: 300 },
      { call: "task_cancel", args: { taskId: "{{t.taskId}}" }, as: "c" },
      { sleep: 500 },
      { call: "task_status", args: { taskId: "{{t.taskId}}" }, as: "s" },
      { say: "{{c.cancelReason}} {{s.status}}" },
    ]);
    const waited = await h.waitViaMcp(parent.threadId, parent.runId);
    expect(waited.result).toBe("null interrupted");
    const task = onlyTask(h, parent.threadId);
    expect(h.run(task.childRunId!)).toMatchObject({ status: "interrupted" });
    await expectNoCompletionNotice(parent.threadId, task.taskId);
  });

  it("interrupts a child waiting on a question; the question expires", async () => {
    const parent = await launchParent(h, [delegateStep([{ ask: "which color?" }, { say: "never" }], {}, "t"), { say: "delegated" }]);
    const [task] = await waitForTasks(h, parent.threadId);
    await h.waitForRun(task!.childRunId!, "waiting_on_user_input");
    const request = [...h.state.runtimeRequests.values()].find((candidate) => candidate.threadId === task!.childThreadId)!;

    await h.owner.ok("task_cancel", { taskId: task!.taskId });
    expect(await h.waitForEnd(task!.childRunId!)).toMatchObject({ status: "interrupted" });
    expect(h.state.runtimeRequests.get(request.id)!.status).toBe("expired");
    expect(await waitForResult(h, task!.taskId)).toMatchObject({ status: "interrupted", completionDelivery: "disposed" });
    expect((await h.owner.call("t3_pending_request_respond", { threadId: task!.childThreadId, requestId: request.id, answer: "late" })).errorCode).toBe("invalid_request");
    await expectNoCompletionNotice(parent.threadId, task!.taskId);
  });

  it("returns a terminal task's status unchanged and still stops the child's later runs", async () => {
    const parent = await launchParent(h, [delegateStep([{ say: "done early" }], { mode: "wait" }, "t")]);
    await h.waitForEnd(parent.runId);
    const task = onlyTask(h, parent.threadId);
    expect(task).toMatchObject({ status: "completed", summary: "done early" });

    // A follow-up to the child after its task finished, and one queued behind it.
    const later = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: task.childThreadId, message: script({ sleep: 30_000 }, { say: "never" }) });
    const queued = await h.owner.ok<{ runId: string; delivery: string }>("t3_thread_send", { threadId: task.childThreadId, message: "queued", mode: "queue" });
    expect(queued.delivery).toBe("queued");
    await h.waitForRun(later.runId, "running");
    expect(await h.owner.ok("task_status", { taskId: task.taskId })).toMatchObject({ status: "completed", hasPendingChildRuns: true });

    const cancelled = await h.owner.ok<CancelResult>("task_cancel", { taskId: task.taskId });
    expect(cancelled).toMatchObject({ status: "completed", summary: "done early", workState: "result_available" });
    expect(await h.waitForEnd(later.runId)).toMatchObject({ status: "interrupted" });
    expect(h.run(queued.runId)).toMatchObject({ status: "queued", held: true });
    // The published result stays.
    expect(h.state.tasks.get(task.taskId)).toMatchObject({ status: "completed", summary: "done early", resultContextTransferId: task.resultContextTransferId });
  });

  it("cascades to a grandchild the child delegated", async () => {
    const grandchild = [{ sleep: 30_000 }, { say: "never" }];
    const child = [delegateStep(grandchild, {}, "g"), { sleep: 30_000 }];
    const parent = await launchParent(h, [delegateStep(child, {}, "t"), { say: "delegated" }]);
    const [task] = await waitForTasks(h, parent.threadId);
    const [nested] = await waitForTasks(h, task!.childThreadId);
    await h.waitForRun(nested!.childRunId!, "running");
    await h.waitForRun(task!.childRunId!, "running");

    await h.owner.ok("task_cancel", { taskId: task!.taskId, reason: "cascade" });
    expect(await h.waitForEnd(nested!.childRunId!)).toMatchObject({ status: "interrupted", endReason: "interrupted_by_user" });
    expect(await h.waitForEnd(task!.childRunId!)).toMatchObject({ status: "interrupted" });
    expect(await waitForResult(h, nested!.taskId)).toMatchObject({ status: "interrupted", cancelReason: "cascade", completionDelivery: "disposed" });
    expect(await waitForResult(h, task!.taskId)).toMatchObject({ status: "interrupted", cancelReason: "cascade", completionDelivery: "disposed" });
    // Neither the child nor the parent is woken for a cancelled task.
    await expectNoCompletionNotice(parent.threadId, task!.taskId);
    expect(systemMessages(h, task!.childThreadId)).toEqual([]);
    expect(h.runs(task!.childThreadId)).toHaveLength(1);
  });
});
