import { afterEach, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../testkit/loomHarness.js";

/**
 * Shutdown releases every provider session. Releasing a session ends its
 * run, which starts the thread's next queued run: that start must not open a
 * new provider session (a process nobody would ever stop) while the server
 * is closing.
 */
let h: LoomHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

describe("server shutdown", () => {
  it("opens no provider session for a queued run that the shutdown itself starts", async () => {
    h = await LoomHarness.start();
    const thread = await h.createThread({ title: "Busy", prompt: script({ sleep: 10_000 }) });
    await h.waitForRun(thread.runId!, "running");
    const queued = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: thread.threadId, message: "next", mode: "queue" });
    expect(h.run(queued.runId).status).toBe("queued");
    // close() resolves once the outbox worker and every session have stopped: nothing can open a session after it.
    await h.server.close();
    expect(h.server.sessions.hasSession(thread.threadId)).toBe(false);
    const sessions = [...h.state.providerSessions.values()].filter((s) => s.threadId === thread.threadId);
    expect(sessions.map((s) => s.releaseReason)).toEqual(["shutdown"]);
  });
});
