import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * Run control against the real server: t3_thread_interrupt, a user Stop with
 * queued turns and queue.resume, and approval and question round trips
 * answered through the HTTP dispatch API.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

interface InterruptResult {
  threadId: string;
  runId: string | null;
  outcome: "interrupt_requested" | "already_terminal" | "no_active_run";
  status: string | null;
}
interface ReadResult {
  thread: { status: string; activeRunId: string | null; pendingRequests: number; queuedRuns: number };
  items: { type: string; requestId?: string; status?: string; decision?: string | null; text: string }[];
}

async function sleeping(ms = 10_000) {
  const thread = await h.createThread({ title: "Sleeper", prompt: script({ sleep: ms }, { say: "woke up" }) });
  await h.waitForRun(thread.runId!, "running");
  return { threadId: thread.threadId, runId: thread.runId! };
}

function read(threadId: string, view: "messages" | "activity" = "messages"): Promise<ReadResult> {
  return h.owner.ok<ReadResult>("t3_thread_read", { threadId, view });
}

/** Poll t3_thread_read until the thread shows `status`. */
async function readUntil(threadId: string, status: string): Promise<ReadResult> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const result = await read(threadId, "activity");
    if (result.thread.status === status) return result;
    if (Date.now() > deadline) throw new Error(`thread ${threadId} never became ${status} (last ${result.thread.status})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("t3_thread_interrupt", () => {
  it("interrupts a sleeping turn at once", async () => {
    const { threadId, runId } = await sleeping();
    const started = Date.now();
    const result = await h.owner.ok<InterruptResult>("t3_thread_interrupt", { threadId });
    expect(result).toMatchObject({ threadId, runId, outcome: "interrupt_requested" });
    const run = await h.waitForEnd(runId);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(run).toMatchObject({ status: "interrupted", endReason: "interrupted_by_user" });
    expect(h.assistantTexts(threadId)).toEqual([]);

    const again = await h.owner.ok<InterruptResult>("t3_thread_interrupt", { threadId, runId });
    expect(again).toMatchObject({ runId, outcome: "already_terminal", status: "interrupted" });
    const idleNow = await h.owner.ok<InterruptResult>("t3_thread_interrupt", { threadId });
    expect(idleNow).toMatchObject({ runId: null, outcome: "no_active_run" });
  });

  it("answers no_active_run on an idle thread and run_not_found for another thread's run", async () => {
    const idle = await h.createThread({ title: "Never ran" });
    const other = await h.createThread({ title: "Other", prompt: "hi" });
    await h.waitForEnd(other.runId!);
    const seq = h.state.lastSequence;
    expect(await h.owner.ok<InterruptResult>("t3_thread_interrupt", { threadId: idle.threadId })).toMatchObject({ outcome: "no_active_run", runId: null });
    const wrong = await h.owner.call("t3_thread_interrupt", { threadId: idle.threadId, runId: other.runId });
    expect(wrong).toMatchObject({ isError: true, errorCode: "run_not_found" });
    expect(h.state.lastSequence).toBe(seq);
  });
});

describe("thread.stop and queue.resume", () => {
  it("interrupts the running turn, holds the queued ones, and resume starts them in order", async () => {
    const { threadId, runId } = await sleeping();
    const q1 = await h.owner.ok<{ runId: string; delivery: string }>("t3_thread_send", { threadId, message: "q1", mode: "queue" });
    const q2 = await h.owner.ok<{ runId: string; delivery: string }>("t3_thread_send", { threadId, message: "q2", mode: "queue" });
    expect([q1.delivery, q2.delivery]).toEqual(["queued", "queued"]);

    const stop = await h.dispatch("thread.stop", { threadId });
    expect(stop).toMatchObject({ status: 200, body: { status: "accepted" } });
    // The commit that ends the run is the one that would start the next queued run: after it, held runs stay queued.
    expect(await h.waitForEnd(runId)).toMatchObject({ status: "interrupted", endReason: "interrupted_by_user" });
    for (const id of [q1.runId, q2.runId]) expect(h.run(id)).toMatchObject({ status: "queued", held: true, startedAt: null });
    expect(h.state.threads.get(threadId)!.queuedRuns).toEqual([
      { runId: q1.runId, held: true },
      { runId: q2.runId, held: true },
    ]);
    const shown = await read(threadId);
    expect(shown.thread).toMatchObject({ activeRunId: null, queuedRuns: 2 });

    expect((await h.dispatch("queue.resume", { threadId })).status).toBe(200);
    const first = await h.waitForEnd(q1.runId);
    const second = await h.waitForEnd(q2.runId);
    expect([first.status, second.status]).toEqual(["completed", "completed"]);
    expect(first.endedAt! <= second.startedAt!).toBe(true);
    expect(h.assistantTexts(threadId)).toEqual(["Echo: q1", "Echo: q2"]);
    expect(h.state.threads.get(threadId)!.queuedRuns).toEqual([]);
  });
});

describe("approvals and questions", () => {
  it("waits on an approval until it is answered, then completes with the decision", async () => {
    const thread = await h.createThread({
      title: "Needs approval",
      prompt: script({ approve: { kind: "command", detail: "rm -rf build", title: "Clean the build" } }, { say: "decision: {{approval.decision}}" }),
    });
    const waiting = await readUntil(thread.threadId, "waiting_on_approval");
    expect(waiting.thread.pendingRequests).toBe(1);
    const item = waiting.items.find((i) => i.type === "approval_request")!;
    expect(item).toMatchObject({ status: "pending", text: "Clean the build: rm -rf build" });
    expect(h.run(thread.runId!).status).toBe("waiting_on_approval");

    const respond = await h.dispatch("runtime-request.respond", { threadId: thread.threadId, requestId: item.requestId, response: { decision: "accept" } });
    expect(respond.status).toBe(200);
    expect((await h.waitForEnd(thread.runId!)).status).toBe("completed");
    expect(h.assistantTexts(thread.threadId)).toEqual(["decision: accept"]);
    const done = await read(thread.threadId, "activity");
    expect(done.thread.pendingRequests).toBe(0);
    expect(done.items.find((i) => i.type === "approval_request")).toMatchObject({ status: "resolved", decision: "accept" });
  });

  it("waits on a question until it is answered, then replies with the answer", async () => {
    const thread = await h.createThread({ title: "Asks", prompt: script({ ask: "Which branch?" }, { say: "Using branch {{answer}}" }) });
    const waiting = await readUntil(thread.threadId, "waiting_on_user_input");
    const item = waiting.items.find((i) => i.type === "user_input_request")!;
    expect(item).toMatchObject({ status: "pending", text: "Which branch?" });

    const respond = await h.dispatch("runtime-request.respond", { threadId: thread.threadId, requestId: item.requestId, response: { answers: { q1: ["main"] } } });
    expect(respond.status).toBe(200);
    expect((await h.waitForEnd(thread.runId!)).status).toBe("completed");
    expect(h.assistantTexts(thread.threadId)).toEqual(["Using branch main"]);
    expect((await read(thread.threadId, "activity")).items.find((i) => i.type === "user_input_request")).toMatchObject({ status: "answered", answers: { q1: ["main"] } });
    // A second answer to the same request is refused and changes nothing.
    const seq = h.state.lastSequence;
    const late = await h.dispatch("runtime-request.respond", { threadId: thread.threadId, requestId: item.requestId, response: { answers: { q1: ["dev"] } } });
    expect(late.status).toBe(409);
    expect(h.state.lastSequence).toBe(seq);
  });
});
