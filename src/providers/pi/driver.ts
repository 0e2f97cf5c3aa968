import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { OpenSessionInput, ProviderDriver, ProviderProbe, ProviderSessionRuntime } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import { optionsForSession } from "../kit/driverOptions.js";
import { ORCHESTRATION_INSTRUCTIONS } from "../kit/orchestrationInstructions.js";
import { installExtension } from "./extensionFile.js";
import type { PiOptions } from "./options.js";
import { PI_DRIVER, PiOptionsSchema, piCapabilities, piOptions } from "./options.js";
import { modelsJson, piEnv, rpcArgs } from "./piConfig.js";
import { installedCli, probePi, resolveExecutable } from "./probe.js";
import { PiSession } from "./session.js";

/**
 * The `pi` driver: Pi (@mariozechner/pi-coding-agent) in RPC mode
 * (docs/providers/pi.md). Each Loom provider session is one
 * `pi --mode rpc` process with Loom's extension (bridge/piMcpBridge.ts),
 * written into `<state dir>/cache/pi/`, which registers Loom's MCP tools
 * as `mcp__t3-code__*` and asks for approvals through Pi's RPC dialogs.
 */

export interface PiDriverDeps {
  /** Loom's state dir: the extension goes to `<stateDir>/cache/pi`. Null: each session's temp dir. */
  readonly stateDir?: string | null;
  readonly probe?: (options: PiOptions) => Promise<ProviderProbe>;
  readonly packageCli?: () => string | null;
  readonly interruptGraceMs?: number;
}

export function createPiDriver(deps: PiDriverDeps = {}): ProviderDriver {
  const probe = deps.probe ?? ((options: PiOptions) => probePi(options));
  const packageCli = deps.packageCli ?? installedCli;
  const cacheDir = deps.stateDir === undefined || deps.stateDir === null ? null : join(deps.stateDir, "cache", "pi");

  return {
    driver: PI_DRIVER,
    optionsSchema: PiOptionsSchema,

    capabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
      return piCapabilities(instance);
    },

    probe(instance: ProviderInstanceConfig): Promise<ProviderProbe> {
      try {
        return probe(piOptions.parse(instance));
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },

    async openSession(input: OpenSessionInput): Promise<ProviderSessionRuntime> {
      const options = optionsForSession(piOptions, input.instance);
      const dir = await mkdtemp(join(tmpdir(), "loom-pi-"));
      const cleanup = (): Promise<void> => rm(dir, { recursive: true, force: true });
      try {
        let extensionPath: string;
        try {
          extensionPath = await installExtension(cacheDir ?? join(dir, "cache"));
        } catch (error) {
          throw new ProviderError(ProviderErrorCode.startFailed, `could not write Loom's Pi extension: ${(error as Error).message}`, { cause: error });
        }
        const agentDir = options.agentDir ?? join(dir, "agent");
        const models = modelsJson(options);
        if (options.agentDir === null && models !== null) {
          await mkdir(agentDir, { recursive: true, mode: 0o700 });
          await writeFile(join(agentDir, "models.json"), `${JSON.stringify(models, null, 2)}\n`, { mode: 0o600 });
        }
        const executable = resolveExecutable(options, packageCli);
        const session = new PiSession({
          spec: {
            command: executable.command,
            args: [...executable.prefixArgs, ...rpcArgs({ extensionPath, model: input.model })],
            env: piEnv({ options, baseEnv: process.env, agentDir, mcp: input.mcp, instructions: ORCHESTRATION_INSTRUCTIONS, runtimeMode: input.runtimeMode, interactionMode: input.interactionMode }),
            cwd: input.cwd,
            secrets: [...(input.mcp === null ? [] : [input.mcp.token]), ...Object.values(options.env).filter((value) => value.length >= 8)],
          },
          startupTimeoutMs: options.startupTimeoutMs,
          cwd: input.cwd,
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
