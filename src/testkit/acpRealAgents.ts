import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LoomConfigFile } from "../config/config.js";
import type { ModelApi } from "../modelServer/normalized.js";
import { type ModelServer, startModelServer } from "../modelServer/server.js";
import { LoomHarness } from "./loomHarness.js";

/**
 * The real ACP agents Loom's e2e tests drive (pinned devDependencies), each
 * pointed at the scripted model server with the settings each needs to run
 * offline (below): Gemini CLI in ACP mode (--acp),
 * Claude Code ACP and Codex ACP. Each runs as a provider instance of the
 * generic `acp` driver, beside a `scripted` instance.
 */

export const RealAcpAgent = {
  gemini: "gemini",
  claude: "claude-code-acp",
  codex: "codex-acp",
} as const;
export type RealAcpAgent = (typeof RealAcpAgent)[keyof typeof RealAcpAgent];

/** Which model API each agent speaks. */
export const AGENT_API: { readonly [K in RealAcpAgent]: ModelApi } = {
  gemini: "gemini",
  "claude-code-acp": "anthropic",
  "codex-acp": "responses",
};

const BIN = fileURLToPath(new URL("../../node_modules/.bin/", import.meta.url));

/** The provider instance for `agent`, with its private config dir under `home`. */
export function acpAgentInstance(agent: RealAcpAgent, modelUrl: string, home: string): NonNullable<LoomConfigFile["providers"]>[number] {
  mkdirSync(home, { recursive: true });
  switch (agent) {
    case "gemini": {
      mkdirSync(join(home, ".gemini"), { recursive: true });
      writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }));
      return {
        id: agent,
        driver: "acp",
        // A fixed model Gemini CLI advertises: its first, "auto", routes every prompt through classifier requests first.
        models: ["gemini-2.5-pro"],
        options: {
          command: join(BIN, "gemini"),
          args: ["--acp"],
          env: { GEMINI_CLI_HOME: home, GOOGLE_GEMINI_BASE_URL: modelUrl, GEMINI_API_KEY: "dummy", GEMINI_CLI_TRUST_WORKSPACE: "true" },
        },
      };
    }
    case "claude-code-acp":
      return {
        id: agent,
        driver: "acp",
        options: {
          command: join(BIN, "claude-code-acp"),
          env: {
            ANTHROPIC_BASE_URL: modelUrl,
            ANTHROPIC_API_KEY: "dummy",
            CLAUDE_CONFIG_DIR: home,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
            ENABLE_TOOL_SEARCH: "false",
            IS_SANDBOX: "1",
          },
        },
      };
    case "codex-acp":
      return {
        id: agent,
        driver: "acp",
        // A model codex knows (advertised as a "model" config option): an unknown one makes codex print a warning into the reply.
        models: ["gpt-5.5"],
        options: {
          command: join(BIN, "codex-acp"),
          args: [
            "-c",
            'model_provider="loom"',
            "-c",
            'model="gpt-5.5"',
            "-c",
            `model_providers.loom={name="loom",base_url="${modelUrl}/v1",env_key="LOOM_MODEL_KEY",wire_api="responses",supports_websockets=false,request_max_retries=0,stream_max_retries=0}`,
          ],
          env: { CODEX_HOME: home, LOOM_MODEL_KEY: "dummy" },
        },
      };
    default: {
      const unexpected: never = agent;
      throw new Error(`unknown agent ${String(unexpected)}`);
    }
  }
}

export interface AcpAgentHarness {
  readonly model: ModelServer;
  readonly loom: LoomHarness;
  close(): Promise<void>;
}

/** A model server and an in-process Loom with `scripted` and `agent` instances. */
export async function startAcpAgentHarness(agent: RealAcpAgent): Promise<AcpAgentHarness> {
  const model = await startModelServer();
  const home = mkdtempSync(join(tmpdir(), `loom-${agent}-home-`));
  try {
    const loom = await LoomHarness.start({ config: { providers: [{ id: "scripted", driver: "scripted" }, acpAgentInstance(agent, model.url, home)] } });
    return {
      model,
      loom,
      async close() {
        await loom.close();
        await model.close();
        rmSync(home, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await model.close();
    rmSync(home, { recursive: true, force: true });
    throw error;
  }
}
