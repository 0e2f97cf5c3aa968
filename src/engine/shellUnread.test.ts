import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { shellRowOf } from "./projections.js";

/**
 * A shell row's `unread` against the real server: a thread is unread when
 * something happened after its last visit, including its run ending or
 * waiting on a person, and a visit reads it.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

function unread(threadId: string): boolean | undefined {
  return shellRowOf(h.state, h.state.threads.get(threadId)!, {})?.unread;
}

async function visit(threadId: string): Promise<void> {
  expect((await h.dispatch("thread.visit", { threadId })).status).toBe(200);
}

describe("unread shell rows", () => {
  it("marks a thread unread when its run ends or asks after the last visit, and a visit reads it", async () => {
    const { threadId } = await h.createThread({ title: "Watched" });
    expect(unread(threadId)).toBe(false); // never visited
    await visit(threadId);
    expect(unread(threadId)).toBe(false);

    expect((await h.dispatch("message.dispatch", { threadId, text: script({ ask: "Which colour?" }, { say: "done" }), mode: "auto" })).status).toBe(200);
    const run = await h.until(() => h.runs(threadId)[0], "a run");
    await h.waitForRun(run.id, "waiting_on_user_input");
    expect(unread(threadId)).toBe(true);
    await visit(threadId);
    expect(unread(threadId)).toBe(false);
  });

  it("marks a thread whose run ended after the last visit unread, and not one visited after it ended", async () => {
    const { threadId } = await h.createThread({ title: "Finished" });
    await visit(threadId);
    expect((await h.dispatch("message.dispatch", { threadId, text: "hello", mode: "auto" })).status).toBe(200);
    const run = await h.until(() => h.runs(threadId)[0], "a run");
    expect((await h.waitForEnd(run.id)).status).toBe("completed");
    expect(unread(threadId)).toBe(true);
    await visit(threadId);
    expect(unread(threadId)).toBe(false);
    // Organizing it is no news.
    expect((await h.dispatch("thread.pin", { threadId })).status).toBe(200);
    expect((await h.dispatch("thread.metadata.update", { threadId, title: "Finished, renamed" })).status).toBe(200);
    expect(h.state.threads.get(threadId)!.updatedAt > h.state.threads.get(threadId)!.lastVisitedAt!).toBe(true);
    expect(unread(threadId)).toBe(false);
  });
});
