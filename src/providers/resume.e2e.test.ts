import { afterEach, describe, expect, it } from "vitest";
import type { LoomConfigFile } from "../config/config.js";
import { LoomHarness } from "../testkit/loomHarness.js";
import { pollUntil } from "../testkit/poll.js";
import { type ModelServer, startModelServer } from "../modelServer/server.js";

/**
 * Memory across a Loom restart with the real agents against the scripted
 * model server. Codex 0.171.0: the turn after the restart runs in a new
 * app-server process that resumes the codex thread (thread/resume) from the
 * CODEX_HOME Loom keeps for the thread under its state dir. Claude Code
 * (bundled with the Agent SDK): it saves its session in the config dir Loom
 * keeps for the thread, and the turn after the restart resumes it
 * (`resume`). Either way the model request of that turn carries the first
 * turn's message and answer, and Loom hands the agent no recap: the
 * conversation is the agent's own.
 */

const TURN_MS = 90_000;

type Provider = NonNullable<LoomConfigFile["providers"]>[number];

const codex = (model: ModelServer): Provider => ({
  id: "codex",
  driver: "codex",
  models: ["loom-test-model"],
  options: { modelProvider: { id: "loomtest", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } },
});

const claude = (model: ModelServer): Provider => ({ id: "claude", driver: "claude", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } });

/** `pooled`: the first session is a warm one from the instance's pool, whose home became the thread's (docs/warm-pools.md). */
const AGENTS: readonly { readonly driver: "codex" | "claude"; readonly pooled?: boolean; readonly provider: (model: ModelServer) => Provider }[] = [
  { driver: "codex", provider: codex },
  { driver: "codex", pooled: true, provider: (model) => ({ ...codex(model), pool: { size: 1 } }) },
  { driver: "claude", provider: claude },
  { driver: "claude", pooled: true, provider: (model) => ({ ...claude(model), pool: { size: 1 } }) },
];

let model: ModelServer | null = null;
let harness: LoomHarness | null = null;

afterEach(async () => {
  await harness?.close();
  await model?.close();
  harness = null;
  model = null;
});

async function warmCount(loom: LoomHarness): Promise<number> {
  const res = await fetch(`${loom.server.url}/api/sessions`, { headers: { authorization: `Bearer ${loom.ownerToken}` } });
  return ((await res.json()) as { warm: unknown[] }).warm.length;
}

describe.each(AGENTS)("$driver (pooled: $pooled) memory across restarts", ({ driver, pooled, provider }) => {
  it(
    "the turn after a Loom restart resumes the agent's own conversation and its model request carries the first turn",
    async () => {
      const server = await startModelServer();
      model = server;
      server.setRules([{ reply: { text: "noted: {{lastUser}}" } }]);
      let loom = await LoomHarness.start({ config: { providers: [provider(server)] } });
      harness = loom;
      if (pooled === true) {
        // A first thread on the instance: a Claude pool warms like it from then on.
        const primer = await loom.launch({ message: "Say hello.", title: "primer", target: { providerInstanceId: driver } });
        await loom.waitForEnd(primer.runId!, TURN_MS);
        await pollUntil(() => warmCount(loom), (n) => n === 1, "a warm session", TURN_MS);
      }
      const launched = await loom.launch({ message: "The code word is PLUM-42.", title: `${driver} memory`, target: { providerInstanceId: driver } });
      const first = await loom.waitForEnd(launched.runId!, TURN_MS);
      expect(first.status, JSON.stringify(loom.items(launched.threadId))).toBe("completed");
      expect(loom.assistantTexts(launched.threadId, launched.runId!).at(-1)).toContain("PLUM-42");
      expect(loom.server.sessions.held().find((s) => s.threadId === launched.threadId)?.fromPool ?? false).toBe(pooled === true);
      const requestsBefore = server.requests.length;

      loom = await loom.restart();
      harness = loom;
      const sent = await loom.owner.ok<{ runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "What was the code word?" });
      const second = await loom.waitForEnd(sent.runId, TURN_MS);
      expect(second.status, JSON.stringify(loom.items(launched.threadId))).toBe("completed");
      expect(loom.server.sessions.held()).toMatchObject([{ threadId: launched.threadId, driver, resumed: true }]);

      const after = server.requests.slice(requestsBefore).filter((request) => request.normalized !== undefined);
      const asked = after.find((request) => JSON.stringify(request.body).includes("What was the code word?"));
      expect(asked, "a model request of the second turn").toBeDefined();
      const body = JSON.stringify(asked!.body);
      // The first turn's message and the model's answer to it, from the agent's own record.
      expect(body).toContain("The code word is PLUM-42.");
      expect(body).toContain("noted: The code word is PLUM-42.");
      expect(body).not.toContain("<loom_context>");
    },
    TURN_MS * 3,
  );
});
