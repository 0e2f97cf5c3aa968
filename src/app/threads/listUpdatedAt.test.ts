import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/** The thread list's `updatedAt` moves when a run ends, not only when the thread record changes. */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({});
});
afterAll(async () => {
  await h.close();
});

describe("t3_thread_list updatedAt", () => {
  it("is the end of the thread's latest run once that run finishes", async () => {
    const launched = await h.launch({ message: script({ sleep: 100 }, { say: "done" }) });
    const run = await h.waitForEnd(launched.runId!);
    expect(run.status).toBe("completed");
    const thread = h.state.threads.get(launched.threadId)!;
    expect(run.updatedAt > thread.updatedAt).toBe(true);
    const listed = await h.owner.ok<{ threads: { threadId: string; updatedAt: string }[] }>("t3_thread_list", {});
    expect(listed.threads.find((t) => t.threadId === launched.threadId)!.updatedAt).toBe(run.updatedAt);
  });
});
