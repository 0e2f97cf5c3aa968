import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness } from "../testkit/loomHarness.js";

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
});
