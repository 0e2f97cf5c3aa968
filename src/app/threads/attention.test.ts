import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ThreadListOutput, ThreadReadOutput } from "../../contracts/tools/threadTools.js";
import { childScript } from "../../testkit/delegationHarness.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * What thread summaries say about attention, from durable state: the
 * effective snooze (spec 000: a snoozed thread wakes early only on a pending
 * request or a failure after snoozing), blockedOnThreadWait and
 * pendingBackgroundTasks.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

const HOUR_LATER = () => new Date(Date.now() + 3_600_000).toISOString();

async function summary(threadId: string): Promise<ThreadReadOutput["thread"]> {
  return (await h.owner.ok<ThreadReadOutput>("t3_thread_read", { threadId })).thread;
}

async function snoozedIds(snoozed: boolean): Promise<string[]> {
  return (await h.owner.ok<ThreadListOutput>("t3_thread_list", { snoozed, limit: 100 })).threads.map((thread) => thread.threadId);
}

describe("the effective snooze", () => {
  it("stays snoozed through a completed run and wakes on a failure after snoozing", async () => {
    const t = await h.createThread({ title: "Snoozer" });
    await h.owner.ok("t3_thread_organize", { threadId: t.threadId, action: "snooze", until: HOUR_LATER() });
    expect(await snoozedIds(true)).toContain(t.threadId);
    const done = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: t.threadId, message: "all good" });
    expect((await h.waitForEnd(done.runId)).status).toBe("completed");
    expect(await summary(t.threadId)).toMatchObject({ snoozed: true });
    const failed = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: t.threadId, message: script({ fail: "it broke" }) });
    expect((await h.waitForEnd(failed.runId)).status).toBe("failed");
    expect(await summary(t.threadId)).toMatchObject({ snoozed: false, snoozedUntil: h.state.threads.get(t.threadId)!.snoozedUntil });
    expect(await snoozedIds(false)).toContain(t.threadId);
    expect(await snoozedIds(true)).not.toContain(t.threadId);
  });

  it("ignores a failure from before the snooze, and wakes while a request is pending", async () => {
    const t = await h.createThread({ title: "Asker", prompt: script({ fail: "early failure" }) });
    await h.waitForEnd(t.runId!);
    await h.owner.ok("t3_thread_organize", { threadId: t.threadId, action: "snooze", until: HOUR_LATER() });
    expect(await summary(t.threadId)).toMatchObject({ snoozed: true });
    const asking = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: t.threadId, message: script({ ask: "Which one?" }, { say: "ok {{answer}}" }) });
    await h.waitForRun(asking.runId, "waiting_on_user_input");
    expect(await summary(t.threadId)).toMatchObject({ snoozed: false, pendingRequests: 1 });
    const request = [...h.state.runtimeRequests.values()].find((r) => r.threadId === t.threadId && r.status === "pending")!;
    await h.owner.ok("t3_pending_request_respond", { threadId: t.threadId, requestId: request.id, answer: "that one" });
    expect((await h.waitForEnd(asking.runId)).status).toBe("completed");
    expect(await summary(t.threadId)).toMatchObject({ snoozed: true, pendingRequests: 0 });
  });
});

describe("blockedOnThreadWait and pendingBackgroundTasks", () => {
  it("is true while the thread's agent is inside a t3_thread_wait, and false once the wait returns", async () => {
    const other = await h.createThread({ title: "Slow", prompt: script({ sleep: 60_000 }) });
    await h.waitForRun(other.runId!, "running");
    const waiter = await h.createThread({ title: "Waiter", prompt: script({ call: "t3_thread_wait", args: { threadId: other.threadId, timeoutMs: 60_000 }, as: "w" }, { say: "wait ended: {{w.status}}" }) });
    await h.until(() => (h.state.openWaits.get(waiter.threadId)?.size ?? 0) > 0, "the wait to be recorded");
    expect(await summary(waiter.threadId)).toMatchObject({ status: "running", blockedOnThreadWait: true });
    expect(await summary(other.threadId)).toMatchObject({ blockedOnThreadWait: false });
    const node = h.state.nodes.get([...h.state.openWaits.get(waiter.threadId)!][0]!)!;
    expect(node).toMatchObject({ kind: "tool_call", status: "waiting", runId: waiter.runId, label: `t3_thread_wait ${other.threadId}` });

    await h.owner.ok("t3_thread_interrupt", { threadId: other.threadId });
    expect((await h.waitForEnd(waiter.runId!)).status).toBe("completed");
    expect(h.assistantTexts(waiter.threadId)).toEqual(["wait ended: interrupted"]);
    expect(h.state.nodes.get(node.id)).toMatchObject({ status: "completed" });
    expect(await summary(waiter.threadId)).toMatchObject({ blockedOnThreadWait: false });
  });

  it("is true while a delegate_task wait blocks, then while the finished turn awaits an async child; pendingBackgroundTasks counts the child", async () => {
    const parent = await h.createThread({
      title: "Delegator",
      prompt: script(
        { call: "delegate_task", args: { task: childScript({ sleep: 60_000 }), target: { providerInstanceId: "scripted" }, mode: "wait", timeoutMs: 60_000, clientRequestId: "blocking" }, as: "d" },
        { say: "after the wait: {{d.status}}" },
      ),
    });
    const [blocking] = await h.until(() => {
      const tasks = [...h.state.tasks.values()].filter((task) => task.parentThreadId === parent.threadId);
      return tasks.length > 0 && (h.state.openWaits.get(parent.threadId)?.size ?? 0) > 0 ? tasks : null;
    }, "the delegate wait to be recorded");
    expect(await summary(parent.threadId)).toMatchObject({ blockedOnThreadWait: true, pendingBackgroundTasks: 1 });
    await h.owner.ok("task_cancel", { taskId: blocking!.taskId });
    await h.waitForEnd(parent.runId!);
    expect(await summary(parent.threadId)).toMatchObject({ blockedOnThreadWait: false, pendingBackgroundTasks: 0 });

    const asyncParent = await h.createThread({
      title: "Async delegator",
      prompt: script({ call: "delegate_task", args: { task: childScript({ sleep: 60_000 }), target: { providerInstanceId: "scripted" } }, as: "d" }, { say: "delegated {{d.taskId}}" }),
    });
    expect((await h.waitForEnd(asyncParent.runId!)).status).toBe("completed");
    const task = [...h.state.tasks.values()].find((t) => t.parentThreadId === asyncParent.threadId)!;
    // The turn is over and nothing is queued, but the child's result will wake it.
    expect(await summary(asyncParent.threadId)).toMatchObject({ status: "completed", blockedOnThreadWait: true, pendingBackgroundTasks: 1 });
    await h.waitForRun(task.childRunId!, "running");
    await h.owner.ok("t3_thread_interrupt", { threadId: task.childThreadId });
    await h.until(() => h.state.tasks.get(task.taskId)!.resultContextTransferId !== null, "the child to finish");
    await h.until(() => h.runs(asyncParent.threadId).every((run) => ["completed", "failed", "interrupted", "cancelled"].includes(run.status)) && h.runs(asyncParent.threadId).length === 2, "the completion notice run to end");
    expect(await summary(asyncParent.threadId)).toMatchObject({ blockedOnThreadWait: false, pendingBackgroundTasks: 0 });
  });
});
