import { afterEach, describe, expect, it } from "vitest";
import { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * Memory across restarts with the scripted driver: a thread's next run after
 * a Loom restart, or after its idle session was released, continues the
 * agent's conversation. A driver that resumes natively gets the native
 * thread id Loom recorded (and reports `resumed`); one that cannot gets a
 * recap of the earlier runs (a `<resume>` transcript in `<loom_context>`),
 * which the scripted echo makes visible.
 */
let h: LoomHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const NO_RESUME = [{ id: "forgetful", driver: "scripted", options: { capabilities: { resume: false } } }];

async function firstTurn(harness: LoomHarness, providerInstanceId: string): Promise<string> {
  const thread = await harness.createThread({ title: "Memory", prompt: "the word is PLUM-42", target: { providerInstanceId } });
  expect((await harness.waitForEnd(thread.runId!)).status).toBe("completed");
  return thread.threadId;
}

async function send(harness: LoomHarness, threadId: string, message: string): Promise<string> {
  const sent = await harness.owner.ok<{ runId: string }>("t3_thread_send", { threadId, message });
  expect((await harness.waitForEnd(sent.runId)).status).toBe("completed");
  return harness.assistantTexts(threadId, sent.runId).join("\n");
}

describe("memory across restarts", () => {
  it("a driver with native resume continues its recorded conversation after a restart, without a recap", async () => {
    h = await LoomHarness.start();
    const threadId = await firstTurn(h, "scripted");
    const native = [...h.state.providerThreads.values()].filter((t) => t.threadId === threadId).map((t) => t.nativeThreadId);
    expect(native).toHaveLength(1);
    h = await h.restart();
    expect(await send(h, threadId, "what was the word?")).toBe("Echo: what was the word?");
    expect(h.server.sessions.held()).toMatchObject([{ threadId, resumed: true }]);
    // The new session reports the same native conversation.
    expect(new Set([...h.state.providerThreads.values()].filter((t) => t.threadId === threadId).map((t) => t.nativeThreadId))).toEqual(new Set(native));
  });

  it("a driver without resume gets a bounded recap of the earlier runs as its first turn's context after a restart", async () => {
    h = await LoomHarness.start({ config: { providers: NO_RESUME } });
    const threadId = await firstTurn(h, "forgetful");
    h = await h.restart();
    const echoed = await send(h, threadId, "what was the word?");
    expect(echoed).toMatch(/^Echo: <loom_context>\n<resume thread="[^"]+" provider="forgetful" runs="1">\n<instructions>You worked on thread "Memory" before/);
    expect(echoed).toContain("the word is PLUM-42");
    expect(echoed).toContain("Echo: the word is PLUM-42");
    expect(echoed).toMatch(/<\/resume>\n<\/loom_context>\n\nwhat was the word\?$/);
    expect(h.server.sessions.held()).toMatchObject([{ threadId, resumed: false }]);
    // Only the first turn of the new session carries it.
    expect(await send(h, threadId, "and now?")).toBe("Echo: and now?");
  });

  it("a released idle session is followed by a recap too, and a brand-new thread gets none", async () => {
    h = await LoomHarness.start({ config: { providers: NO_RESUME, sessions: { idleMs: 300 } } });
    const threadId = await firstTurn(h, "forgetful");
    await h.until(() => !h!.server.sessions.hasSession(threadId), "the idle session to be released", 5_000);
    const echoed = await send(h, threadId, "still there?");
    expect(echoed).toContain('<resume thread="');
    expect(echoed).toContain("the word is PLUM-42");
    const fresh = await h.createThread({ title: "Fresh", prompt: "hello", target: { providerInstanceId: "forgetful" } });
    await h.waitForEnd(fresh.runId!);
    expect(h.assistantTexts(fresh.threadId)).toEqual(["Echo: hello"]);
  });
});
