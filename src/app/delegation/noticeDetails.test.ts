import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TurnItemOf } from "../../contracts/turnItems.js";
import type { DelegateTaskResult } from "../../contracts/tools/toolOutputs.js";
import { delegateStep, launchParent, onlyTask, startDelegationHarness, toolResults, waitForResult, waitForTasks } from "../../testkit/delegationHarness.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * Parent notices as spec 004's `notification` items, over the real server:
 * an asynchronous question says the child is still working and never ends a
 * delegate_task wait; a queued notice can be accepted (notification.delivery.accept).
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

type Notification = TurnItemOf<"notification">;
const notifications = (threadId: string): Notification[] => h.items(threadId).filter((item): item is Notification => item.type === "notification");

describe("asynchronous questions", () => {
  it("reach a waiting parent as a notice that says the child is still working, and do not end the wait", async () => {
    const child = [{ ask: "Which style guide?", async: true }, { sleep: 200 }, { say: "written without an answer" }];
    const parent = await launchParent(h, [delegateStep(child, { mode: "wait" }, "t"), { say: "{{t.status}} question={{t.hasPendingQuestion}}: {{t.summary}}" }]);
    await h.waitForEnd(parent.runId);
    const texts = h.assistantTexts(parent.threadId);
    expect(texts[texts.length - 1]).toBe("completed question=false: written without an answer");
    const task = onlyTask(h, parent.threadId);
    const [notice] = notifications(parent.threadId);
    expect(notice).toMatchObject({ title: `Task "${task.title}" asks a question`, sourceThreadId: task.childThreadId, taskId: task.taskId, delivery: "steered", runId: parent.runId });
    expect(notice!.text).toContain("asks a question and is still working while it waits for the answer");
    const request = [...h.state.runtimeRequests.values()].find((candidate) => candidate.threadId === task.childThreadId)!;
    expect(request.blocking).toBe(false);
    // The child never stopped for it: its only run went straight through.
    expect(h.runs(task.childThreadId).map((run) => run.status)).toEqual(["completed"]);
  });
});

describe("notification.delivery.accept", () => {
  it("cancels a queued notice's run and acknowledges the task's result; a second accept is refused", async () => {
    // `rigid` cannot steer, so the completion notice queues behind the parent's long turn.
    const parent = await launchParent(h, [delegateStep([{ say: "quick result" }]), { sleep: 60_000 }], "rigid");
    const [task] = await waitForTasks(h, parent.threadId);
    await waitForResult(h, task!.taskId);
    const notice = await h.until(() => notifications(parent.threadId)[0], "the queued notice");
    expect(notice).toMatchObject({ delivery: "queued", taskId: task!.taskId });
    expect(h.run(notice.runId!).status).toBe("queued");

    const accepted = await h.dispatch("notification.delivery.accept", { threadId: parent.threadId, itemId: notice.id });
    expect(accepted.status).toBe(200);
    expect(h.run(notice.runId!)).toMatchObject({ status: "cancelled", endReason: "notification_accepted" });
    expect(notifications(parent.threadId)[0]!.delivery).toBe("accepted");
    expect(h.state.tasks.get(task!.taskId)!.completionDelivery).toBe("acknowledged");
    const again = await h.dispatch("notification.delivery.accept", { threadId: parent.threadId, itemId: notice.id });
    expect(again).toMatchObject({ status: 409, body: { status: "rejected", rejection: { code: "delivery_not_pending" } } });
    expect((await h.dispatch("notification.delivery.accept", { threadId: parent.threadId, itemId: "turn-item:nope" })).body).toMatchObject({ rejection: { code: "notification_not_found" } });
    await h.owner.ok("t3_thread_interrupt", { threadId: parent.threadId });
  });
});

describe("follow-ups on a finished task", () => {
  it("show on the parent while they run; the published result never changes; task_cancel reports what it cancelled", async () => {
    const parent = await launchParent(h, [
      delegateStep([{ say: "first answer" }], { mode: "wait" }, "t"),
      { call: "t3_thread_send", args: { threadId: "{{t.childThreadId}}", message: '{"script":[{"sleep":60000}]}' }, as: "f" },
      { call: "task_status", args: { taskId: "{{t.taskId}}" }, as: "running" },
      { call: "task_cancel", args: { taskId: "{{t.taskId}}", reason: "enough" }, as: "c" },
      { say: "{{running.hasPendingChildRuns}} {{running.summary}} | {{c.status}} {{c.summary}} {{c.cancelReason}}" },
    ]);
    await h.waitForEnd(parent.runId);
    expect(h.assistantTexts(parent.threadId)).toContain("true first answer | completed first answer enough");
    const task = onlyTask(h, parent.threadId);
    const [cancelled] = toolResults<DelegateTaskResult & { cancelledFollowUps: string[] }>(h, parent.threadId, "task_cancel");
    // The follow-up still had its child run (being interrupted): nothing was lost, so nothing was cancelled on the parent.
    expect(cancelled!.result.cancelledFollowUps).toEqual([]);
    const followUpRun = task.followUps![0]!.runId;
    await h.waitForEnd(followUpRun);
    await h.until(() => h.state.tasks.get(task.taskId)!.followUps![0]!.status === "interrupted", "the follow-up to end with its run");
    expect(h.state.tasks.get(task.taskId)).toMatchObject({ status: "completed", summary: "first answer" });
    expect(await h.owner.ok("task_status", { taskId: task.taskId })).toMatchObject({ hasPendingChildRuns: false, summary: "first answer" });
  });
});

describe("system reminders", () => {
  it("are left out of a task's summary, its status and the parent's notices", async () => {
    const reminder = "<system-reminder>\nThe user opened notes.md in the IDE.\n</system-reminder>";
    const child = [{ ask: `Which file?\n${reminder}`, async: true }, { say: `Summary: all tests pass.\n\n${reminder}` }];
    const parent = await launchParent(h, [delegateStep(child, { mode: "wait" }, "t"), { say: "{{t.summary}}" }]);
    await h.waitForEnd(parent.runId);
    const task = onlyTask(h, parent.threadId);
    expect(h.assistantTexts(task.childThreadId).at(-1)).toContain("<system-reminder>");
    expect(task.summary).toBe("Summary: all tests pass.");
    expect(h.assistantTexts(parent.threadId).at(-1)).toBe("Summary: all tests pass.");
    expect(await h.owner.ok("task_status", { taskId: task.taskId })).toMatchObject({ summary: "Summary: all tests pass.", latestTerminalSummary: "Summary: all tests pass." });
    const [question] = notifications(parent.threadId);
    expect(question!.text).toContain("- Which file?\n");
    expect(question!.text).not.toContain("system-reminder");
  });
});
