import { existsSync, lstatSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { agentHomeName } from "../../server/agentHomes.js";
import { LoomHarness } from "../../testkit/loomHarness.js";
import { DELEGATING_RULES, delegatingThread, sessionList, untilWarm } from "../../testkit/warmPoolChecks.js";

/**
 * A warm pool on the real codex 0.171.0 (docs/warm-pools.md): `codex
 * app-server` processes started ahead of need, each handed to one thread at
 * its first session. The thread's credential reaches codex only then, in
 * thread/start: each thread's model calls delegate_task through Loom's MCP
 * server, and the task Loom records names the caller's own thread as its
 * parent, which only that thread's token can do.
 */

const TURN_MS = 60_000;
const MODEL = "loom-test-model";

let model: ModelServer;
let harness: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  harness = await LoomHarness.start({
    config: {
      providers: [
        {
          id: "codex",
          driver: "codex",
          models: [MODEL],
          pool: { size: 1 },
          options: { modelProvider: { id: "loomtest", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } },
        },
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

describe("codex warm pool", () => {
  it("hands each thread a started app-server that acts with that thread's credential only, and refills", async () => {
    const warm = await untilWarm(harness, 1, TURN_MS);
    const warmId = warm.warm[0]!.warmSessionId;
    const agents = join(harness.dir, ".loom", "agents", "codex");
    const warmHome = join(agents, `.warm-${warmId.split(":").at(-1)!}`);
    expect(existsSync(warmHome)).toBe(true);

    const first = await delegatingThread(harness, "codex", "first", TURN_MS);
    const afterFirst = await untilWarm(harness, 1, TURN_MS);
    expect(afterFirst.sessions.find((s) => s.threadId === first)?.fromPool).toBe(true);
    expect(afterFirst.warm[0]!.warmSessionId).not.toBe(warmId);

    const second = await delegatingThread(harness, "codex", "second", TURN_MS);
    const afterSecond = await sessionList(harness);
    expect(afterSecond.sessions.find((s) => s.threadId === second)?.fromPool).toBe(true);

    // Each delegation was made with its own thread's token: the task's parent is the caller.
    const parents = [...harness.state.tasks.values()].map((task) => task.parentThreadId).sort();
    expect(parents).toEqual([first, second].sort());

    // The warm home became the first thread's home (its codex conversation is there to resume); the old path is a link to it.
    const home = join(agents, agentHomeName(first));
    expect(readdirSync(home)).toContain("sessions");
    expect(lstatSync(warmHome).isSymbolicLink()).toBe(true);
    expect(readlinkSync(warmHome)).toBe(home);
  });

  it("drains the pool at shutdown; the next start fills a new one and no old warm home is left", async () => {
    await untilWarm(harness, 1, TURN_MS);
    harness = await harness.restart();
    const agents = join(harness.dir, ".loom", "agents", "codex");
    // A configured pool fills at start; nothing of the old one is left.
    const list = await untilWarm(harness, 1, TURN_MS);
    const warmFolders = readdirSync(agents).filter((name) => name.startsWith(".warm-") && !lstatSync(join(agents, name)).isSymbolicLink());
    expect(warmFolders).toEqual([`.warm-${list.warm[0]!.warmSessionId.split(":").at(-1)!}`]);
  });
});
