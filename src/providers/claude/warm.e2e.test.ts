import { existsSync, lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { agentHomeName } from "../../server/agentHomes.js";
import { LoomHarness } from "../../testkit/loomHarness.js";
import { DELEGATING_RULES, delegatingThread, sessionList, untilWarm } from "../../testkit/warmPoolChecks.js";

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
    const warm = await untilWarm(harness, 1, TURN_MS);
    const warmId = warm.warm[0]!.warmSessionId;
    const agents = join(harness.dir, ".loom", "agents", "claude");
    const warmHome = join(agents, `.warm-${warmId.split(":").at(-1)!}`);
    expect(existsSync(warmHome)).toBe(true);

    const first = await delegatingThread(harness, "claude", "first", TURN_MS);
    const afterFirst = await untilWarm(harness, 1, TURN_MS);
    expect(afterFirst.sessions.find((s) => s.threadId === first)?.fromPool).toBe(true);
    expect(afterFirst.warm[0]!.warmSessionId).not.toBe(warmId);

    const second = await delegatingThread(harness, "claude", "second", TURN_MS);
    const afterSecond = await sessionList(harness);
    expect(afterSecond.sessions.find((s) => s.threadId === second)?.fromPool).toBe(true);

    // Each delegation was made with its own thread's token: the task's parent is the caller.
    const parents = [...harness.state.tasks.values()].map((task) => task.parentThreadId).sort();
    expect(parents).toEqual([first, second].sort());

    // The warm home became the first thread's home (its saved Claude session is there to resume); the old path is a link to it.
    const home = join(agents, agentHomeName(first));
    expect(readdirSync(home)).toContain("projects");
    expect(lstatSync(warmHome).isSymbolicLink()).toBe(true);
    expect(readlinkSync(warmHome)).toBe(home);
  });
});
