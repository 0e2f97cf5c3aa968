import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * t3_thread_send's modes (spec 000; docs/runs.md "Send modes") against the
 * real server: `scripted` can steer, `plain` cannot.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

interface SendResult {
  threadId: string;
  messageId: string | null;
  runId: string | null;
  delivery: "started" | "steered" | "queued" | "restarted";
  runStatus: string | null;
}
interface ReadRuns {
  runs: { runId: string; ordinal: number; status: string; endReason: string | null }[];
}

function send(threadId: string, message: string, mode?: string) {
  return h.owner.call("t3_thread_send", { threadId, message, ...(mode === undefined ? {} : { mode }) });
}

async function sendOk(threadId: string, message: string, mode?: string): Promise<SendResult> {
  const outcome = await send(threadId, message, mode);
  if (outcome.isError) throw new Error(`send failed: ${JSON.stringify(outcome.structured)}`);
  return outcome.structured as unknown as SendResult;
}

async function readRuns(threadId: string): Promise<ReadRuns["runs"]> {
  return (await h.owner.ok<ReadRuns>("t3_thread_read", { threadId })).runs;
}

/** A thread whose first run is running `steps` on the given instance. */
async function running(provider: "scripted" | "plain", ...steps: Record<string, unknown>[]) {
  const thread = await h.createThread({ title: `On ${provider}`, target: { providerInstanceId: provider }, prompt: script(...steps) });
  await h.waitForRun(thread.runId!, "running");
  return { threadId: thread.threadId, runId: thread.runId! };
}

function userMessages(threadId: string) {
  return h.items(threadId).filter((item) => item.type === "user_message");
}

describe("t3_thread_send", () => {
  it("auto starts an idle thread", async () => {
    const { threadId } = await h.createThread({ title: "Idle" });
    const sent = await sendOk(threadId, "hello");
    expect(sent).toMatchObject({ threadId, delivery: "started", runStatus: "starting" });
    expect(sent.messageId).not.toBeNull();
    expect(await h.waitViaMcp(threadId, sent.runId!)).toMatchObject({ status: "completed", result: "Echo: hello", waitTimedOut: false });
    expect(h.assistantTexts(threadId, sent.runId!)).toEqual(["Echo: hello"]);
    expect(h.run(sent.runId!).messageId).toBe(sent.messageId);
  });

  it("auto steers a running turn on a provider that can steer", async () => {
    const { threadId, runId } = await running("scripted", { sleep: 800 }, { say: "done" });
    const sent = await sendOk(threadId, "turn left");
    expect(sent).toMatchObject({ delivery: "steered", runId, runStatus: "running" });
    expect((await h.waitForEnd(runId)).status).toBe("completed");
    expect(h.assistantTexts(threadId, runId)).toEqual(["Steered: turn left", "done"]);
    expect(h.runs(threadId)).toHaveLength(1);
    expect(userMessages(threadId).map((item) => [item.text, item.runId])).toEqual([
      [script({ sleep: 800 }, { say: "done" }), runId],
      ["turn left", runId],
    ]);
  });

  it("auto queues behind a turn that cannot be steered, and the queued run starts after it", async () => {
    const { threadId, runId } = await running("plain", { sleep: 400 }, { say: "first done" });
    const sent = await sendOk(threadId, "second");
    expect(sent).toMatchObject({ delivery: "queued", runStatus: "queued" });
    expect(sent.runId).not.toBe(runId);
    const second = await h.waitForEnd(sent.runId!);
    expect(second.status).toBe("completed");
    const first = h.run(runId);
    expect(first.status).toBe("completed");
    expect(first.endedAt! <= second.startedAt!).toBe(true);
    expect(h.assistantTexts(threadId)).toEqual(["first done", "Echo: second"]);
    expect((await readRuns(threadId)).map((r) => [r.ordinal, r.runId, r.status])).toEqual([
      [1, runId, "completed"],
      [2, sent.runId, "completed"],
    ]);
  });

  it("queue mode queues even behind a steerable turn", async () => {
    const { threadId, runId } = await running("scripted", { sleep: 500 }, { say: "one" });
    const sent = await sendOk(threadId, "two", "queue");
    expect(sent).toMatchObject({ delivery: "queued", runStatus: "queued" });
    expect(h.state.threads.get(threadId)!.queuedRuns).toEqual([{ runId: sent.runId, held: false }]);
    expect((await h.waitForEnd(sent.runId!)).status).toBe("completed");
    expect(h.assistantTexts(threadId, runId)).toEqual(["one"]);
    expect(h.assistantTexts(threadId, sent.runId!)).toEqual(["Echo: two"]);
    // On an idle thread, queue mode starts at once.
    const again = await sendOk(threadId, "three", "queue");
    expect(again.delivery).toBe("started");
    await h.waitForEnd(again.runId!);
  });

  it("steer mode needs a steerable running turn", async () => {
    const idle = await h.createThread({ title: "Idle steer" });
    const onIdle = await send(idle.threadId, "nobody listens", "steer");
    expect(onIdle).toMatchObject({ isError: true, errorCode: "thread_not_sendable" });
    expect(h.items(idle.threadId)).toEqual([]);
    expect(h.runs(idle.threadId)).toEqual([]);

    const plain = await running("plain", { sleep: 10_000 });
    const onPlain = await send(plain.threadId, "cannot steer", "steer");
    expect(onPlain).toMatchObject({ isError: true, errorCode: "thread_not_sendable" });
    expect(userMessages(plain.threadId)).toHaveLength(1);
    expect(h.runs(plain.threadId)).toHaveLength(1);

    const steerable = await running("scripted", { sleep: 10_000 });
    const steered = await sendOk(steerable.threadId, "go", "steer");
    expect(steered).toMatchObject({ delivery: "steered", runId: steerable.runId });
    await h.until(() => h.assistantTexts(steerable.threadId).includes("Steered: go"), "the steer to reach the agent");

    for (const thread of [plain, steerable]) {
      await h.owner.ok("t3_thread_interrupt", { threadId: thread.threadId });
      expect((await h.waitForEnd(thread.runId)).status).toBe("interrupted");
    }
  });

  it("restart interrupts the running turn and runs the new message next", async () => {
    const { threadId, runId } = await running("scripted", { sleep: 10_000 });
    const started = Date.now();
    const sent = await sendOk(threadId, "after", "restart");
    expect(sent).toMatchObject({ delivery: "restarted", runStatus: "queued" });
    const first = await h.waitForEnd(runId);
    expect(first).toMatchObject({ status: "interrupted", endReason: "interrupted_by_user" });
    const next = await h.waitForEnd(sent.runId!);
    expect(next.status).toBe("completed");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(h.assistantTexts(threadId, next.id)).toEqual(["Echo: after"]);
    expect((await readRuns(threadId)).map((r) => [r.runId, r.status, r.endReason])).toEqual([
      [runId, "interrupted", "interrupted_by_user"],
      [next.id, "completed", "completed"],
    ]);
    const interruptItem = h.items(threadId).find((item) => item.type === "run_interrupt_request");
    expect(interruptItem).toMatchObject({ runId, reason: "restarted with a new message" });

    // Nothing to restart on an idle thread.
    const idle = await send(threadId, "again", "restart");
    expect(idle).toMatchObject({ isError: true, errorCode: "thread_not_sendable" });
  });
});
