import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELEGATION_PROVIDERS, delegateStep, launchParent, tasksOf, toolResults } from "../../testkit/delegationHarness.js";
import { LoomHarness, TEST_PROVIDERS, script } from "../../testkit/loomHarness.js";
import { LoomMcpClient } from "../../testkit/mcpClient.js";
import { startLoomServer } from "../../server/loomServer.js";

/**
 * A reused clientRequestId returns the original work only for the same
 * request; a different request under the same key is refused with
 * invalid_request naming the key, and writes nothing (docs/mcp.md, Idempotency).
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start({ config: { providers: [...TEST_PROVIDERS, ...DELEGATION_PROVIDERS] } });
});
afterAll(async () => {
  await h.close();
});

interface Created {
  threads: { threadId: string; providerInstanceId: string; runtimeMode: string; title: string }[];
}

/** Call `tool` with `args` and expect the reused-key refusal with nothing written. */
async function expectRefused(tool: string, args: Record<string, unknown>): Promise<void> {
  const before = h.state.lastSequence;
  const threads = h.state.threads.size;
  const outcome = await h.owner.call(tool, args);
  expect({ tool, isError: outcome.isError, code: outcome.errorCode }).toEqual({ tool, isError: true, code: "invalid_request" });
  expect(outcome.errorMessage).toContain(JSON.stringify(args.clientRequestId));
  expect(outcome.errorMessage).toContain("already used for a different");
  expect(h.state.lastSequence).toBe(before);
  expect(h.state.threads.size).toBe(threads);
}

describe("clientRequestId reuse with a different request", () => {
  it("create_threads: another provider, a broader runtime mode or more entries is refused and creates nothing", async () => {
    const original = { clientRequestId: "reuse-batch", threads: [{ title: "Reuse A", target: { providerInstanceId: "scripted" }, runtimeMode: "approval-required" }] };
    const first = await h.owner.ok<Created>("create_threads", original);
    expect(first.threads[0]).toMatchObject({ providerInstanceId: "scripted", runtimeMode: "approval-required" });

    await expectRefused("create_threads", { ...original, threads: [{ ...original.threads[0], target: { providerInstanceId: "plain" } }] });
    await expectRefused("create_threads", { ...original, threads: [{ ...original.threads[0], runtimeMode: "full-access" }] });
    await expectRefused("create_threads", { ...original, threads: [original.threads[0], { title: "Reuse extra" }] });
    expect([...h.state.threads.values()].filter((t) => t.title === "Reuse extra")).toEqual([]);

    // The same request still answers with the original work, unchanged.
    const again = await h.owner.ok<Created>("create_threads", original);
    expect(again).toEqual(first);
  });

  it("t3_thread_send: a different message under the same key is refused", async () => {
    const { threadId } = await h.createThread({ title: "Reuse send" });
    const first = await h.owner.ok<{ runId: string; messageId: string }>("t3_thread_send", { threadId, message: script({ say: "one" }), clientRequestId: "reuse-send" });
    await expectRefused("t3_thread_send", { threadId, message: script({ say: "two" }), clientRequestId: "reuse-send" });
    await expectRefused("t3_thread_send", { threadId, message: script({ say: "one" }), mode: "queue", clientRequestId: "reuse-send" });
    const again = await h.owner.ok<{ runId: string; messageId: string }>("t3_thread_send", { threadId, message: script({ say: "one" }), clientRequestId: "reuse-send" });
    expect(again).toMatchObject({ runId: first.runId, messageId: first.messageId });
    await h.waitForEnd(first.runId);
    expect(h.runs(threadId)).toHaveLength(1);
  });

  it("t3_thread_update: another title or another thread under the same key is refused", async () => {
    const { threadId } = await h.createThread({ title: "Reuse named" });
    const { threadId: other } = await h.createThread({ title: "Reuse other" });
    const first = await h.owner.ok<{ title: string; sequence: number }>("t3_thread_update", { threadId, action: "rename", title: "One", clientRequestId: "reuse-rename" });
    await expectRefused("t3_thread_update", { threadId, action: "rename", title: "Two", clientRequestId: "reuse-rename" });
    await expectRefused("t3_thread_update", { threadId: other, action: "rename", title: "One", clientRequestId: "reuse-rename" });
    const again = await h.owner.ok<{ title: string; sequence: number }>("t3_thread_update", { threadId, action: "rename", title: "One", clientRequestId: "reuse-rename" });
    expect(again).toMatchObject({ title: "One", sequence: first.sequence });
    expect(h.state.threads.get(other)!.title).toBe("Reuse other");
  });

  it("link_pull_request and unlink_pull_request: another url under the same key is refused", async () => {
    const { threadId } = await h.createThread({ title: "Reuse PR" });
    await h.owner.ok("link_pull_request", { threadId, url: "https://example.com/pr/1", clientRequestId: "reuse-link" });
    await expectRefused("link_pull_request", { threadId, url: "https://example.com/pr/2", clientRequestId: "reuse-link" });
    await h.owner.ok("unlink_pull_request", { threadId, url: "https://example.com/pr/1", clientRequestId: "reuse-unlink" });
    await expectRefused("unlink_pull_request", { threadId, url: "https://example.com/pr/3", clientRequestId: "reuse-unlink" });
  });

  it("delegate_task: another brief under the same key is refused and spawns no second child", async () => {
    const parent = await launchParent(h, [
      delegateStep([{ say: "first brief" }], { clientRequestId: "reuse-round" }, "a"),
      delegateStep([{ say: "second brief" }], { clientRequestId: "reuse-round" }, "b"),
      delegateStep([{ say: "first brief" }], { clientRequestId: "reuse-round" }, "c"),
      { say: "{{b.error.code}} {{a.taskId}} {{c.taskId}}" },
    ]);
    expect((await h.waitForEnd(parent.runId)).status).toBe("completed");
    const tasks = tasksOf(h, parent.threadId);
    expect(tasks).toHaveLength(1);
    const results = toolResults<{ error?: { code: string; message: string } }>(h, parent.threadId, "delegate_task");
    expect(results.map((r) => r.status)).toEqual(["completed", "failed", "completed"]);
    expect(results[1]!.result.error!.message).toContain('"reuse-round"');
    // (The child's completion may also steer a notice into the parent's turn.)
    expect(h.assistantTexts(parent.threadId, parent.runId)).toContain(`invalid_request ${tasks[0]!.taskId} ${tasks[0]!.taskId}`);
  });
});

describe("request fingerprints are durable", () => {
  it("a restart keeps the first request of a key: a different one is still refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "loom-reuse-"));
    const stateDir = join(dir, ".loom");
    mkdirSync(stateDir);
    const configPath = join(dir, "config.json");
    writeFileSync(configPath, JSON.stringify({ providers: TEST_PROVIDERS }));
    const start = () => startLoomServer({ stateDir, cwd: dir, configPath });
    try {
      const args = { clientRequestId: "durable", threads: [{ title: "Durable A" }] };
      let server = await start();
      const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
      let client = await LoomMcpClient.connect(server.mcpUrl, token);
      const first = await client.ok<Created>("create_threads", args);
      await client.close();
      await server.close();

      server = await start();
      client = await LoomMcpClient.connect(server.mcpUrl, token);
      const before = server.orchestrator.state.lastSequence;
      const refused = await client.call("create_threads", { ...args, threads: [{ title: "Durable B" }] });
      expect({ isError: refused.isError, code: refused.errorCode }).toEqual({ isError: true, code: "invalid_request" });
      expect(server.orchestrator.state.lastSequence).toBe(before);
      expect(await client.ok<Created>("create_threads", args)).toEqual(first);
      await client.close();
      await server.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
