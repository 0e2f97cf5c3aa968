import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutboxRow } from "../contracts/envelopes.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";

/** Session-manager effects that find no live session. */
let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

describe("ProviderSessionManager", () => {
  it("re-sends a steer whose session is gone as a follow-up run, so the message is not lost", async () => {
    const thread = await h.createThread({ title: "Steered too late", prompt: "first" });
    await h.waitForEnd(thread.runId!);
    await h.dispatch("provider-session.detach", { threadId: thread.threadId });
    await h.until(() => !h.server.sessions.hasSession(thread.threadId), "the session to be released", 5_000);

    const steer = h.server.sessions.handlers()["provider.turn.steer"];
    await steer({ threadId: thread.threadId, runId: thread.runId!, messageId: "message:late", text: "late steer" }, { effectId: "outbox:test-steer", attempt: 1, threadId: thread.threadId });

    const followUp = await h.until(() => h.runs(thread.threadId).find((run) => run.kind === "system_follow_up"), "a follow-up run");
    expect(await h.waitForEnd(followUp.id)).toMatchObject({ status: "completed" });
    expect(h.assistantTexts(thread.threadId, followUp.id)).toEqual(["Echo: late steer"]);
  });

  it("an answer that failed for good is not left resolved: the request records the reason and expires once its run has ended", async () => {
    const thread = await h.createThread({ title: "Asked", prompt: script({ ask: "which branch?" }, { say: "ok" }) });
    const request = await h.until(() => [...h.state.runtimeRequests.values()].find((r) => r.threadId === thread.threadId && r.status === "pending"), "the question");
    await h.dispatch("runtime-request.respond", { threadId: thread.threadId, requestId: request.id, response: { answers: { q1: ["main"] } } });
    await h.waitForEnd(thread.runId!);
    const payload = { threadId: thread.threadId, runId: thread.runId!, requestId: request.id, nativeRequestId: request.nativeRequestId, response: { answers: { q1: ["main"] } } };
    const row: OutboxRow = {
      id: "outbox:test-respond", commandId: "cmd:test", kind: "provider.request.respond", streamId: thread.threadId, payload, replaySafe: false,
      status: "failed", attempts: 1, leaseOwner: null, leaseExpiresAt: null, availableAt: 0, lastError: "callback closed", createdAt: new Date(0).toISOString(),
    };
    h.server.sessions.onEffectFailed(row, new Error("callback closed"));
    const expired = await h.until(() => (h.state.runtimeRequests.get(request.id)?.status === "expired" ? h.state.runtimeRequests.get(request.id) : undefined), "the request to expire");
    expect(expired?.resolution).toEqual({ deliveryFailed: "callback closed" });
  });
});
