import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { LoomHarness } from "../../testkit/loomHarness.js";
import { DELEGATING_RULES, expectPooledThreads, sessionList } from "../../testkit/warmPoolChecks.js";

/**
 * A warm pool on the real Claude Code (bundled with the Agent SDK 0.3.332;
 * docs/warm-pools.md): Claude Code started ahead of need like the instance's
 * most recent session, handed to one thread at its first session. Loom's MCP
 * server, with the thread's own token, is added to the running Claude Code
 * only then (setMcpServers): each thread's model calls delegate_task through
 * it, and the task Loom records names the caller's own thread as its parent,
 * which only that thread's token can do.
 */

const TURN_MS = 60_000;

let model: ModelServer;
let harness: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  harness = await LoomHarness.start({
    config: {
      providers: [
        { id: "claude", driver: "claude", pool: { size: 1 }, options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } },
        { id: "scripted", driver: "scripted" },
      ],
    },
  });
  model.setRules([...DELEGATING_RULES]);
});

afterEach(async () => {
  await harness.close();
  await model.close();
});

/** A first session on the instance: the pool warms like it from then on. */
async function primer(): Promise<void> {
  const launched = await harness.launch({ message: "Say hello.", title: "primer", target: { providerInstanceId: "claude" } });
  expect((await harness.waitForEnd(launched.runId!, TURN_MS)).status).toBe("completed");
}

describe("Claude warm pool", () => {
  it("hands each thread a started Claude Code that acts with that thread's credential only, and refills", async () => {
    expect((await sessionList(harness)).warm).toEqual([]); // nothing to start it like yet
    await primer();
    await expectPooledThreads(harness, "claude", "projects", TURN_MS);
  });
});
