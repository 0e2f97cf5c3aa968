import { existsSync, lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionListResult } from "../../app/sessions.js";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { agentHomeName } from "../../server/agentHomes.js";
import { LoomHarness } from "../../testkit/loomHarness.js";
import { pollUntil } from "../../testkit/poll.js";

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
  model.setRules([
    { when: { toolAvailable: "delegate_task", lastIsToolResult: false, lastUserIncludes: "Delegate the greeting." }, reply: { toolCall: { tool: "delegate_task", arguments: { task: "say hello", mode: "async", target: { providerInstanceId: "scripted" } } } } },
    // Every other request (the tool's result, the notice of the child's end) gets a plain answer.
    { reply: { text: "noted" } },
  ]);
});

afterEach(async () => {
  await harness.close();
  await model.close();
});

async function sessions(): Promise<SessionListResult> {
  const res = await fetch(`${harness.server.url}/api/sessions`, { headers: { authorization: `Bearer ${harness.ownerToken}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as SessionListResult;
}

function fullPool(): Promise<SessionListResult> {
  return pollUntil(() => sessions(), (list) => list.warm.length === 1, "the Claude pool to fill", TURN_MS);
}

/** Launch a codex thread; its run delegates once and ends. Returns the thread id. */
async function delegatingThread(title: string): Promise<string> {
  const launched = await harness.launch({ message: "Delegate the greeting.", title, target: { providerInstanceId: "claude" } });
  const run = await harness.waitForEnd(launched.runId!, TURN_MS);
  expect(run.status, JSON.stringify(harness.items(launched.threadId), null, 2)).toBe("completed");
  return launched.threadId;
}

/** A first session on the instance: the pool warms like it from then on. */
async function primer(): Promise<void> {
  const launched = await harness.launch({ message: "Say hello.", title: "primer", target: { providerInstanceId: "claude" } });
  expect((await harness.waitForEnd(launched.runId!, TURN_MS)).status).toBe("completed");
}

describe("Claude warm pool", () => {
  it("hands each thread a started Claude Code that acts with that thread's credential only, and refills", async () => {
    expect((await sessions()).warm).toEqual([]); // nothing to start it like yet
    await primer();
    const warm = await fullPool();
    const warmId = warm.warm[0]!.warmSessionId;
    const agents = join(harness.dir, ".loom", "agents", "claude");
    const warmHome = join(agents, `.warm-${warmId.split(":").at(-1)!}`);
    expect(existsSync(warmHome)).toBe(true);

    const first = await delegatingThread("first");
    const afterFirst = await fullPool();
    expect(afterFirst.sessions.find((s) => s.threadId === first)?.fromPool).toBe(true);
    expect(afterFirst.warm[0]!.warmSessionId).not.toBe(warmId);

    const second = await delegatingThread("second");
    const afterSecond = await sessions();
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
