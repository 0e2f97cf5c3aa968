import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { OpenSessionInput, ProviderDriver, ProviderProbe, ProviderSessionRuntime } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import { optionsForSession } from "../kit/driverOptions.js";
import { ORCHESTRATION_INSTRUCTIONS } from "../kit/orchestrationInstructions.js";
import { agentFor, sessionConfig, sessionEnv, splitModel } from "./opencodeConfig.js";
import type { OpencodeOptions } from "./options.js";
import { OPENCODE_DRIVER, OpencodeOptionsSchema, opencodeCapabilities, opencodeOptions } from "./options.js";
import { installedBinary, probeOpencode, resolveExecutable } from "./probe.js";
import type { LaunchOpencodeServer } from "./serverProcess.js";
import { launchOpencodeServer, serveArgs } from "./serverProcess.js";
import { OpencodeSession } from "./session.js";

/**
 * The `opencode` driver: OpenCode through `opencode serve` and
 * @opencode-ai/sdk (docs/providers/opencode.md). Each Loom provider session
 * is its own server process with its own HOME, config and OpenCode session:
 * OpenCode's MCP servers are per process, so this is what keeps one
 * thread's bearer token away from every other thread. Loom's MCP endpoint is
 * the remote MCP server `t3-code`.
 */

export interface OpencodeDriverDeps {
  readonly probe?: (options: OpencodeOptions) => Promise<ProviderProbe>;
  /** Starts `opencode serve`; tests pass a fake server. */
  readonly launch?: LaunchOpencodeServer;
  /** The installed package's binary; tests may point elsewhere. */
  readonly packageBinary?: () => string | null;
  readonly interruptGraceMs?: number;
}

export function createOpencodeDriver(deps: OpencodeDriverDeps = {}): ProviderDriver {
  const probe = deps.probe ?? ((options: OpencodeOptions) => probeOpencode(options));
  const launch = deps.launch ?? launchOpencodeServer;
  const packageBinary = deps.packageBinary ?? installedBinary;

  return {
    driver: OPENCODE_DRIVER,
    optionsSchema: OpencodeOptionsSchema,

    capabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
      return opencodeCapabilities(instance);
    },

    probe(instance: ProviderInstanceConfig): Promise<ProviderProbe> {
      try {
        return probe(opencodeOptions.parse(instance));
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },

    async openSession(input: OpenSessionInput): Promise<ProviderSessionRuntime> {
      const options = optionsForSession(opencodeOptions, input.instance);
      const model = input.model === null ? null : splitModel(input.model);
      if (input.model !== null && model === null) {
        throw new ProviderError(ProviderErrorCode.startFailed, `opencode models are "provider/model"; got ${JSON.stringify(input.model)}`);
      }
      // The session's own dir: the config file, and HOME unless the instance names one.
      const dir = await mkdtemp(join(tmpdir(), "loom-opencode-"));
      const cleanup = (): Promise<void> => rm(dir, { recursive: true, force: true });
      try {
        const configPath = join(dir, "opencode.json");
        const config = sessionConfig({ options, runtimeMode: input.runtimeMode, model: input.model, mcp: input.mcp });
        await writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
        const password = randomBytes(24).toString("base64url");
        const session = new OpencodeSession({
          launch,
          spec: {
            command: resolveExecutable(options, packageBinary),
            args: serveArgs(),
            env: sessionEnv({ options, baseEnv: process.env, home: options.home ?? join(dir, "home"), configPath, password, mcpToken: input.mcp?.token ?? null }),
            cwd: input.cwd,
            startupTimeoutMs: options.startupTimeoutMs,
            secrets: [...(input.mcp === null ? [] : [input.mcp.token]), password, ...Object.values(options.env).filter((value) => value.length >= 8)],
          },
          password,
          cwd: input.cwd,
          model,
          agent: agentFor(input.interactionMode),
          firstTurnSystem: input.mcp === null ? null : ORCHESTRATION_INSTRUCTIONS,
          onEvent: input.onEvent,
          cleanup,
          ...(deps.interruptGraceMs === undefined ? {} : { interruptGraceMs: deps.interruptGraceMs }),
        });
        await session.open(input.signal);
        return session;
      } catch (error) {
        await cleanup();
        throw error;
      }
    },
  };
}

export const opencodeDriver: ProviderDriver = createOpencodeDriver();
