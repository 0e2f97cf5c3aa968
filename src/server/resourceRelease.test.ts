import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness, script } from "../testkit/loomHarness.js";

/**
 * Resources are released with the run: an agent session that made MCP calls
 * during its run holds no MCP session, stream or socket once the run ended
 * with nothing queued (docs/mcp.md, Sessions). Open file descriptors of this
 * process (server and scripted agents alike) and the endpoint's live MCP
 * sessions return to their baseline after a burst of runs.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await LoomHarness.start();
});
afterAll(async () => {
  await h.close();
});

function openFds(): number {
  return readdirSync("/proc/self/fd").length;
}

/** Poll until `probe` holds; keep-alive sockets close a few seconds after their last request. */
async function eventually(probe: () => boolean, what: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const CALLING_RUN = script({ call: "t3_thread_list", args: { limit: 1 }, as: "l" }, { call: "orchestrator_capabilities", args: {} }, { say: "listed {{l.total}}" });

async function burst(count: number): Promise<void> {
  const created = await Promise.all(Array.from({ length: count }, (_, i) => h.createThread({ title: `Burst ${i}`, prompt: CALLING_RUN })));
  const ended = await Promise.all(created.map((thread) => h.waitForEnd(thread.runId!, 30_000)));
  expect(ended.map((run) => run.status)).toEqual(created.map(() => "completed"));
}

describe("resources released with the run", () => {
  it("MCP sessions and file descriptors return to their baseline after a burst of runs", async () => {
    // Warm up: one run, so lazily opened files (logs, WAL) are part of the baseline.
    await burst(1);
    await eventually(() => h.server.mcpSessionCount === 1, () => `only the owner's MCP session (now ${h.server.mcpSessionCount})`);
    const settledFds = openFds();
    await eventually(() => openFds() <= settledFds, () => "fds to settle");
    const baselineFds = openFds();
    const baselineSessions = h.server.mcpSessionCount;

    await burst(30);
    // Every agent's provider session stays open for its next turn...
    expect([...h.state.providerSessions.values()].filter((s) => s.releasedAt === null).length).toBeGreaterThanOrEqual(30);
    // ...but none keeps an MCP session or a socket.
    await eventually(() => h.server.mcpSessionCount === baselineSessions, () => `MCP sessions back to ${baselineSessions} (now ${h.server.mcpSessionCount})`);
    await eventually(() => openFds() <= baselineFds, () => `open fds back to ${baselineFds} (now ${openFds()})`);

    // The agents still work: a second turn on a burst thread reconnects on its first call.
    const thread = [...h.state.threads.values()].find((t) => t.title === "Burst 0")!;
    const sent = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: thread.id, message: CALLING_RUN });
    expect((await h.waitForEnd(sent.runId)).status).toBe("completed");
    expect(h.assistantTexts(thread.id).at(-1)).toMatch(/^listed \d+$/);
    await eventually(() => h.server.mcpSessionCount === baselineSessions, () => `MCP sessions back to ${baselineSessions} after the second turn`);
  }, 120_000);
});
