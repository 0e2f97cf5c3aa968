import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomMcpClient } from "../../client/loomMcpClient.js";
import type { ThreadMetadataOutput } from "../../contracts/tools/threadTools.js";
import { startLoomServer } from "../../server/loomServer.js";
import { connectAsThread, toolResults } from "../../testkit/delegationHarness.js";
import { LoomHarness, TEST_PROVIDERS, script } from "../../testkit/loomHarness.js";
import { titleFromReply } from "./titleRegeneration.js";

/**
 * t3_thread_update regenerate_title: the first-line title at once with
 * titleRegenerating true, then a short titling turn on a provider instance
 * replaces it (the scripted agent echoes its prompt, so the title it writes
 * starts with "Echo: Write a title"). Without a provider the first line is
 * the title.
 */

const FIRST = "Plan the release of version 2\nwith the checklist from last time";

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({ config: { providers: [...TEST_PROVIDERS, { id: "slow", driver: "scripted", options: { turnDelayMs: 2_000 } }, { id: "off", driver: "scripted", enabled: false }] } });
});
afterAll(async () => {
  await h.close();
});

async function finishedThread(prompt = FIRST, providerInstanceId = "scripted"): Promise<string> {
  const thread = await h.createThread({ prompt, title: "Untitled", target: { providerInstanceId } });
  await h.waitForEnd(thread.runId!, 15_000);
  return thread.threadId;
}

const regenerate = (threadId: string, extra: Record<string, unknown> = {}) => h.owner.ok<ThreadMetadataOutput>("t3_thread_update", { threadId, action: "regenerate_title", ...extra });

describe("regenerate_title", () => {
  it("shows the first line while a titling turn on the thread's provider writes the title", async () => {
    const threadId = await finishedThread();
    const started = await regenerate(threadId, { clientRequestId: "title-1" });
    expect(started).toMatchObject({ threadId, title: "Plan the release of version 2", titleRegenerating: true });
    const done = await h.until(() => (h.state.threads.get(threadId)!.titleRegenerating ? null : h.state.threads.get(threadId)!), "the regeneration to complete");
    expect(done.title).toBe(titleFromReply(`Echo: Write a title of at most eight words for a conversation that starts with the message below.`));
    expect(done.title.startsWith("Echo: Write a title")).toBe(true);
    // The titling turn is no thread work: the thread's runs are untouched.
    expect(h.runs(threadId)).toHaveLength(1);
    // A retry with the same clientRequestId answers the same command and starts nothing.
    const retried = await regenerate(threadId, { clientRequestId: "title-1" });
    expect([retried.commandId, retried.sequence]).toEqual([started.commandId, started.sequence]);
    await h.server.titles.settled();
    expect(h.state.threads.get(threadId)!.title).toBe(done.title);
  });

  it("a rename while the titling turn runs wins", async () => {
    const threadId = await finishedThread(FIRST, "slow");
    expect(await regenerate(threadId)).toMatchObject({ titleRegenerating: true });
    expect(await h.owner.ok("t3_thread_update", { threadId, action: "rename", title: "Mine" })).toMatchObject({ title: "Mine", titleRegenerating: false });
    await h.server.titles.settled();
    expect(h.state.threads.get(threadId)).toMatchObject({ title: "Mine", titleRegenerating: false });
  });

  it("answers typed failures: a title given, no message to title, an unknown thread, one already running", async () => {
    const threadId = await finishedThread(FIRST, "slow");
    expect((await h.owner.call("t3_thread_update", { threadId, action: "regenerate_title", title: "x" })).errorCode).toBe("invalid_request");
    const empty = await h.createThread({ title: "Empty" });
    expect((await h.owner.call("t3_thread_update", { threadId: empty.threadId, action: "regenerate_title" })).errorCode).toBe("invalid_request");
    expect((await h.owner.call("t3_thread_update", { threadId: "thread:nope", action: "regenerate_title" })).errorCode).toBe("thread_not_found");
    await regenerate(threadId);
    expect((await h.owner.call("t3_thread_update", { threadId, action: "regenerate_title" })).errorMessage).toMatch(/title_regeneration_running/);
    await h.server.titles.settled();
  });

  it("keeps the privilege ceiling and the live-run rule for another thread", async () => {
    const target = await finishedThread();
    const narrow = await h.createThread({
      runtimeMode: "approval-required",
      prompt: script({ call: "t3_thread_update", args: { threadId: target, action: "regenerate_title" }, as: "u" }, { say: "{{u.error.code}}" }),
    });
    await h.waitForEnd(narrow.runId!);
    expect(h.assistantTexts(narrow.threadId)).toEqual(["runtime_mode_escalation_denied"]);
    expect(toolResults(h, narrow.threadId, "t3_thread_update")[0]!.status).toBe("failed");
    const idle = await connectAsThread(h, narrow.threadId, "scripted");
    expect((await idle.call("t3_thread_update", { threadId: target, action: "regenerate_title" })).errorCode).toBe("parent_not_active");
    expect(h.state.threads.get(target)!.titleRegenerating).toBe(false);
  });
});

describe("regenerate_title without a provider", () => {
  it("uses the first line of the first message at once", async () => {
    const other = await LoomHarness.start({ config: { providers: [...TEST_PROVIDERS, { id: "off", driver: "scripted", enabled: false }], titles: { providerInstanceId: "off" } } });
    try {
      const thread = await other.createThread({ prompt: FIRST, title: "Untitled" });
      await other.waitForEnd(thread.runId!);
      const result = await other.owner.ok<ThreadMetadataOutput>("t3_thread_update", { threadId: thread.threadId, action: "regenerate_title" });
      expect(result).toMatchObject({ title: "Plan the release of version 2", titleRegenerating: false });
    } finally {
      await other.close();
    }
  });
});

describe("title regeneration after a restart", () => {
  it("a regeneration no titling turn will finish is completed with the first-line title", async () => {
    const threadId = await finishedThread("Migrate the invoices table");
    expect((await h.dispatch("thread.metadata.update", { threadId, title: "Interim", titleRegenerating: true })).status).toBe(200);
    expect(h.state.threads.get(threadId)!.titleRegenerating).toBe(true);
    const stateDir = h.server.stateDir.root;
    await h.server.close();
    const logs: string[] = [];
    const server = await startLoomServer({ stateDir, cwd: h.dir, configPath: join(h.dir, "loom-config.json"), log: (line) => logs.push(line) });
    try {
      expect(server.orchestrator.state.threads.get(threadId)).toMatchObject({ title: "Migrate the invoices table", titleRegenerating: false });
      expect(logs.some((line) => line.includes("1 title regeneration(s) completed"))).toBe(true);
      const client = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim());
      expect(await client.ok("t3_thread_read", { threadId })).toMatchObject({ thread: { title: "Migrate the invoices table", titleRegenerating: false } });
      await client.close();
    } finally {
      await server.close();
    }
  });
});
