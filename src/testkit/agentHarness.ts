import type { AppThread } from "../contracts/thread.js";
import type { TurnItem } from "../contracts/turnItems.js";
import { LoomHarness } from "./loomHarness.js";
import { type ModelServer, startModelServer } from "../modelServer/server.js";

/**
 * End-to-end setup with real agent CLIs: one scripted model server and an
 * in-process Loom whose `codex` and `claude` instances both talk to it. Rules
 * tell the two apart by API (`responses` for codex, `anthropic` for claude).
 * A missing CLI makes `requireAgents` fail the test, never skip it.
 */

/** Codex does not know this model, so it offers plain namespaced function tools the model server reads. */
export const CODEX_MODEL = "loom-test-model";
/** Generous per-turn budget; a scripted turn takes a few seconds. */
export const TURN_MS = 60_000;

export interface AgentHarness {
  readonly model: ModelServer;
  readonly loom: LoomHarness;
  close(): Promise<void>;
}

export async function startAgentHarness(): Promise<AgentHarness> {
  const model = await startModelServer();
  try {
    const loom = await LoomHarness.start({
      config: {
        providers: [
          {
            id: "codex",
            driver: "codex",
            models: [CODEX_MODEL],
            options: { modelProvider: { id: "loomtest", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } },
          },
          { id: "claude", driver: "claude", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } },
        ],
      },
    });
    return {
      model,
      loom,
      async close() {
        await loom.close();
        await model.close();
      },
    };
  } catch (error) {
    await model.close();
    throw error;
  }
}

interface ProviderView {
  readonly providerInstanceId: string;
  readonly available: boolean;
  readonly reason: string | null;
}

/** Fails (with the probe's reason) unless every named instance is installed and usable. */
export async function requireAgents(loom: LoomHarness, ids: readonly string[]): Promise<void> {
  const caps = await loom.owner.ok<{ providers: ProviderView[] }>("orchestrator_capabilities");
  for (const id of ids) {
    const provider = caps.providers.find((p) => p.providerInstanceId === id);
    if (provider?.available !== true) throw new Error(`provider ${id} is not available: ${provider?.reason ?? "not configured"}`);
  }
}

export function itemsOfRun(loom: LoomHarness, threadId: string, runId: string): TurnItem[] {
  return loom.items(threadId).filter((item) => item.runId === runId);
}

export function threads(loom: LoomHarness): AppThread[] {
  return [...loom.state.threads.values()];
}

/** Everything Loom recorded for a thread, for failure messages. */
export function dump(loom: LoomHarness, threadId: string): string {
  return JSON.stringify({ runs: loom.runs(threadId), items: loom.items(threadId) }, null, 2);
}
