import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * The idle reaper (config `sessions.idleMs`): a provider session quiet for
 * that long is released and its credential revoked; a run still on it ends
 * interrupted with endReason session_reaped and a notice, never as completed.
 */
let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({ config: { sessions: { idleMs: 400, stalledMs: 400 } } });
});
afterAll(async () => {
  await h.close();
});

describe("idle reaper", () => {
  it("releases a session blocked on an unanswered question and reports the run as reaped", async () => {
    const thread = await h.createThread({ title: "Asker", prompt: script({ ask: "anyone there?" }, { say: "got {{answer}}" }) });
    await h.waitForRun(thread.runId!, "waiting_on_user_input");
    const ended = await h.waitForEnd(thread.runId!);
    expect(ended).toMatchObject({ status: "interrupted", endReason: "session_reaped" });
    const notice = h.items(thread.threadId).find((item) => item.type === "system_notice");
    expect(notice?.type === "system_notice" && notice.text).toBe("The provider session was released after 400 ms without activity; a run still on it was interrupted.");
    const sessions = [...h.server.orchestrator.state.providerSessions.values()].filter((s) => s.threadId === thread.threadId);
    expect(sessions.map((s) => [s.status, s.releaseReason])).toEqual([["released", "idle_reaped"]]);
    expect(h.server.sessions.hasSession(thread.threadId)).toBe(false);
  });

  it("releases an idle session after a completed run without touching the run, and the thread takes new work", async () => {
    const thread = await h.createThread({ title: "Quick", prompt: script({ say: "done" }) });
    expect(await h.waitForEnd(thread.runId!)).toMatchObject({ status: "completed", endReason: "completed" });
    await h.until(() => !h.server.sessions.hasSession(thread.threadId), "the idle session to be reaped", 5_000);
    expect(h.run(thread.runId!)).toMatchObject({ status: "completed", endReason: "completed" });
    const sent = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: thread.threadId, message: "again" });
    expect(await h.waitForEnd(sent.runId)).toMatchObject({ status: "completed" });
    expect(h.assistantTexts(thread.threadId, sent.runId)).toEqual(["Echo: again"]);
  });
});

describe("idle and stalled sessions", () => {
  it("releases a session with no work after idleMs while a session whose run waits is kept until stalledMs", async () => {
    const r = await LoomHarness.start({ config: { sessions: { idleMs: 400, stalledMs: 600_000 } } });
    try {
      const waiting = await r.createThread({ title: "Waiting", prompt: script({ ask: "still there?" }, { say: "got {{answer}}" }) });
      await r.waitForRun(waiting.runId!, "waiting_on_user_input");
      const quick = await r.createThread({ title: "Done", prompt: script({ say: "done" }) });
      expect(await r.waitForEnd(quick.runId!)).toMatchObject({ status: "completed" });
      await r.until(() => !r.server.sessions.hasSession(quick.threadId), "the idle session to be released", 5_000);
      const notice = r.items(quick.threadId).filter((item) => item.type === "system_notice");
      expect(notice).toEqual([]);
      // The waiting run's session has been quiet longer than idleMs by now, yet it stays: its run is not stalled.
      expect(r.server.sessions.hasSession(waiting.threadId)).toBe(true);
      expect(r.run(waiting.runId!).status).toBe("waiting_on_user_input");
      expect(r.server.sessions.held().map((s) => s.threadId)).toEqual([waiting.threadId]);
    } finally {
      await r.close();
    }
  });
});

describe("idle reaper racing a new send", () => {
  it("does not end a run that started on a new session while the reaped one was still stopping", async () => {
    const r = await LoomHarness.start({ config: { sessions: { idleMs: 1_500 } } });
    try {
      const thread = await r.createThread({ title: "Slow stop", prompt: script({ say: "first" }) });
      expect(await r.waitForEnd(thread.runId!)).toMatchObject({ status: "completed" });
      // The reaped session takes a second to stop, as a real agent process may.
      const live = (r.server.sessions as unknown as { sessions: Map<string, { runtime: { stop(): Promise<void> } }> }).sessions.get(thread.threadId)!;
      const stop = live.runtime.stop.bind(live.runtime);
      live.runtime.stop = async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await stop();
      };
      await r.until(() => !r.server.sessions.hasSession(thread.threadId), "the idle session to be reaped", 5_000);
      const sent = await r.owner.ok<{ runId: string }>("t3_thread_send", { threadId: thread.threadId, message: script({ sleep: 1_200 }, { say: "second" }) });
      expect(await r.waitForEnd(sent.runId)).toMatchObject({ status: "completed", endReason: "completed" });
      expect(r.assistantTexts(thread.threadId, sent.runId)).toEqual(["second"]);
    } finally {
      await r.close();
    }
  });
});
