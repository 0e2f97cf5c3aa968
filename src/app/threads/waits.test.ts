import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/** t3_thread_wait against the real server: results, timeouts, progress and the server cap. */

interface WaitResult {
  threadId: string;
  runId: string | null;
  status: string;
  terminal: boolean;
  waitTimedOut: boolean;
  result: string | null;
  error: string | null;
  endReason: string | null;
}

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({ progressIntervalMs: 100 });
});
afterAll(async () => {
  await h.close();
});

function wait(args: Record<string, unknown>): Promise<WaitResult> {
  return h.owner.ok<WaitResult>("t3_thread_wait", args);
}

describe("t3_thread_wait", () => {
  it("waits for a run to complete and returns its result", async () => {
    const thread = await h.createThread({ title: "Worker", prompt: script({ sleep: 1_000 }, { say: "all done" }) });
    // The run is still working when the wait starts, so the wait itself must carry it to the end.
    expect(h.server.orchestrator.state.runs.get(thread.runId!)?.status).not.toBe("completed");
    const result = await wait({ threadId: thread.threadId, timeoutMs: 10_000 });
    expect(result).toMatchObject({ runId: thread.runId, status: "completed", terminal: true, waitTimedOut: false, result: "all done", error: null, endReason: "completed" });
  });

  it("reports a failed run's error", async () => {
    const thread = await h.createThread({ title: "Failing", prompt: script({ say: "trying" }, { fail: "could not find the file" }) });
    const result = await wait({ threadId: thread.threadId, runId: thread.runId, timeoutMs: 10_000 });
    expect(result).toMatchObject({ status: "failed", terminal: true, waitTimedOut: false, error: "could not find the file", result: "trying" });
  });

  it("returns at once for an idle thread", async () => {
    const { threadId } = await h.createThread({ title: "Idle" });
    expect(await wait({ threadId })).toMatchObject({ runId: null, status: "idle", waitTimedOut: false });
  });

  it("times out without cancelling the run, which completes later", async () => {
    const thread = await h.createThread({ title: "Slow", prompt: script({ sleep: 700 }, { say: "late" }) });
    const started = Date.now();
    const result = await wait({ threadId: thread.threadId, timeoutMs: 100 });
    expect(Date.now() - started).toBeLessThan(600);
    expect(result).toMatchObject({ runId: thread.runId, terminal: false, waitTimedOut: true, result: null });
    expect(["starting", "running"]).toContain(result.status);
    expect(h.run(thread.runId!).interruptRequestedAt).toBeNull();
    const finished = await wait({ threadId: thread.threadId, runId: thread.runId, timeoutMs: 10_000 });
    expect(finished).toMatchObject({ status: "completed", waitTimedOut: false, result: "late" });
  });

  it("pins the latest run at call time", async () => {
    const { threadId } = await h.createThread({ title: "Pinned" });
    const first = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId, message: script({ sleep: 200 }, { say: "first" }) });
    const second = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId, message: "second", mode: "queue" });
    const result = await wait({ threadId, timeoutMs: 10_000 });
    expect(result).toMatchObject({ runId: second.runId, status: "completed", result: "Echo: second" });
    expect(h.run(first.runId).status).toBe("completed");
  });

  it("sends progress notifications while it waits", async () => {
    const thread = await h.createThread({ title: "Progress", prompt: script({ sleep: 700 }, { say: "ok" }) });
    const updates: { progress: number; message?: string }[] = [];
    const outcome = await h.owner.call("t3_thread_wait", { threadId: thread.threadId, timeoutMs: 10_000 }, { onprogress: (p) => updates.push(p) });
    expect(outcome.structured).toMatchObject({ status: "completed", result: "ok" });
    expect(updates.length).toBeGreaterThanOrEqual(3);
    expect(updates.map((u) => u.progress)).toEqual(updates.map((_, i) => i + 1));
    expect(updates[0]!.message).toContain(thread.runId!);
  });
});

describe("the server's wait cap", () => {
  let capped: LoomHarness;
  beforeAll(async () => {
    capped = await LoomHarness.start({ config: { waits: { maxWaitMs: 300 } } });
  });
  afterAll(async () => {
    await capped.close();
  });

  it("bounds a longer requested timeout", async () => {
    const thread = await capped.createThread({ title: "Long", prompt: script({ sleep: 5_000 }) });
    await capped.waitForRun(thread.runId!, "running");
    for (const timeoutMs of [60_000, undefined]) {
      const started = Date.now();
      const result = await capped.owner.ok<WaitResult>("t3_thread_wait", { threadId: thread.threadId, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
      const elapsed = Date.now() - started;
      expect(result).toMatchObject({ waitTimedOut: true, status: "running" });
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(2_000);
    }
    await capped.owner.ok("t3_thread_interrupt", { threadId: thread.threadId });
    expect((await capped.waitForEnd(thread.runId!)).status).toBe("interrupted");
  });
});
