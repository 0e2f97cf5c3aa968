import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackgroundWaitOutput } from "../../contracts/tools/backgroundTools.js";
import { delegateStep, launchParent, startDelegationHarness, systemMessages, tasksOf, toolResults } from "../../testkit/delegationHarness.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * t3_background_wait over real MCP: a scripted parent delegates, then waits
 * until its background work settles, with t3_thread_wait's cap, progress and
 * timeout semantics.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness({ waits: { maxWaitMs: 30_000 } });
});
afterAll(async () => {
  await h.close();
});

describe("t3_background_wait", () => {
  it("returns once every delegated task has its result, hands over the results and suppresses their notices", async () => {
    // Each child waits for an approval the test gives once the parent's wait holds both tasks.
    const child = (name: string) => [{ approve: { kind: "command", detail: name } }, { say: `${name} done` }];
    const parent = await launchParent(h, [
      delegateStep(child("first"), { title: "First" }),
      delegateStep(child("second"), { title: "Second" }),
      { call: "t3_background_wait", args: { timeoutMs: 30_000 }, as: "w" },
      { say: "settled={{w.settled}} timedOut={{w.waitTimedOut}} {{w.tasks.0.title}}: {{w.tasks.0.summary}}; {{w.tasks.1.title}}: {{w.tasks.1.summary}}" },
    ]);
    const tasks = await h.until(() => {
      const found = tasksOf(h, parent.threadId);
      return found.length === 2 && found.every((task) => (task.heldBy?.length ?? 0) > 0) ? found : null;
    }, "the background wait to hold both tasks");
    for (const task of tasks) {
      const approval = await h.until(() => [...h.state.runtimeRequests.values()].find((request) => request.threadId === task.childThreadId && request.status === "pending"), "the child's approval");
      expect((await h.dispatch("runtime-request.respond", { threadId: task.childThreadId, requestId: approval.id, response: { decision: "accept" } })).status).toBe(200);
    }
    await h.waitForEnd(parent.runId);
    expect(h.assistantTexts(parent.threadId)).toEqual(["settled=true timedOut=false First: first done; Second: second done"]);
    const [waited] = toolResults<BackgroundWaitOutput>(h, parent.threadId, "t3_background_wait");
    expect(waited!.result).toMatchObject({ threadId: parent.threadId, settled: true, hasPendingQuestion: false, backgroundTasks: [] });
    expect(waited!.result.tasks.map((task) => [task.status, task.workState])).toEqual([
      ["completed", "result_available"],
      ["completed", "result_available"],
    ]);
    // The wait took both results: they are acknowledged and never wake the parent.
    expect(tasksOf(h, parent.threadId).map((task) => task.completionDelivery)).toEqual(["acknowledged", "acknowledged"]);
    expect(systemMessages(h, parent.threadId)).toEqual([]);
    expect(h.runs(parent.threadId)).toHaveLength(1);
  });

  it("an idle thread with nothing in the background returns at once, settled", async () => {
    const idle = await h.createThread({ title: "Idle" });
    expect(await h.owner.ok("t3_background_wait", { threadId: idle.threadId })).toEqual({
      threadId: idle.threadId,
      settled: true,
      waitTimedOut: false,
      hasPendingQuestion: false,
      tasks: [],
      backgroundTasks: [],
    });
  });

  it("times out with progress, cancelling nothing; the owner's wait takes no result", async () => {
    const parent = await launchParent(h, [delegateStep([{ sleep: 4_000 }, { say: "slow but done" }], { title: "Slow" }), { say: "delegated" }]);
    await h.waitForEnd(parent.runId);
    const progress: string[] = [];
    const timedOut = await h.owner.ok<BackgroundWaitOutput>("t3_background_wait", { threadId: parent.threadId, timeoutMs: 1_000 }, { onprogress: (update) => progress.push(update.message ?? "") });
    expect(timedOut).toMatchObject({ settled: false, waitTimedOut: true, tasks: [{ title: "Slow", status: "running", workState: "working", summary: null }] });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toMatch(/^1 background item of thread .* still running \(\d+ s\)$/);
    // The child kept running; its result reaches the parent as a notice, since the owner's wait took nothing.
    const [task] = tasksOf(h, parent.threadId);
    await h.until(() => h.state.tasks.get(task!.taskId)?.completionDelivery === "delivered", "the completion notice", 15_000);
    const settled = await h.owner.ok<BackgroundWaitOutput>("t3_background_wait", { threadId: parent.threadId });
    expect(settled).toMatchObject({ settled: true, waitTimedOut: false, tasks: [] });
  });

  it("returns early when a child is blocked on a question, which then reaches the parent through the wait alone", async () => {
    const parent = await launchParent(h, [
      delegateStep([{ approve: { kind: "command", detail: "go" } }, { ask: "which branch?" }, { say: "on {{answer}}" }], { title: "Asker" }),
      { call: "t3_background_wait", args: {}, as: "w" },
      { say: "settled={{w.settled}} question={{w.hasPendingQuestion}} timedOut={{w.waitTimedOut}} {{w.tasks.0.status}}" },
    ]);
    const [task] = await h.until(() => {
      const found = tasksOf(h, parent.threadId);
      return found.length === 1 && (found[0]!.heldBy?.length ?? 0) > 0 ? found : null;
    }, "the background wait to hold the task");
    const approval = await h.until(() => [...h.state.runtimeRequests.values()].find((request) => request.threadId === task!.childThreadId && request.status === "pending"), "the approval");
    await h.dispatch("runtime-request.respond", { threadId: task!.childThreadId, requestId: approval.id, response: { decision: "accept" } });
    await h.waitForEnd(parent.runId);
    expect(h.assistantTexts(parent.threadId)).toEqual(["settled=false question=true timedOut=false waiting"]);
    expect(systemMessages(h, parent.threadId)).toEqual([]);
  });

  it("answers typed failures: no thread for an outside caller, an unknown thread", async () => {
    expect((await h.owner.call("t3_background_wait", {})).errorCode).toBe("invalid_request");
    expect((await h.owner.call("t3_background_wait", { threadId: "thread:nope" })).errorCode).toBe("thread_not_found");
    expect((await h.owner.call("t3_background_wait", { threadId: "thread:nope", timeoutMs: -1 })).errorCode).toBe("invalid_request");
  });
});
