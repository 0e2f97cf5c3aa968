import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { LoomHarness } from "../../testkit/loomHarness.js";
import { DELEGATING_RULES, expectPooledThreads, untilWarm } from "../../testkit/warmPoolChecks.js";

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
    await expectPooledThreads(harness, "codex", "sessions", TURN_MS);
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
