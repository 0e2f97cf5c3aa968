import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { OpenSessionInput, ProviderDriver, ProviderProbe, ProviderSessionRuntime } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { appServerArgs, appServerEnv } from "./codexConfig.js";
import type { CodexOptions } from "./options.js";
import { CODEX_DRIVER, CodexOptionsError, codexCapabilities, parseCodexOptions } from "./options.js";
import { installedLauncher, probeCodex, resolveExecutable } from "./probe.js";
import { CodexSession } from "./session.js";

/**
 * The `codex` driver: OpenAI Codex through `codex app-server` (JSON-RPC over
 * stdio; docs/providers/codex.md). Each Loom provider session is one
 * app-server process with one codex thread; Loom's MCP endpoint is injected
 * into the thread as `t3-code` and `t3-code-direct` with the session's
 * bearer token (spec 000, "Codex V2").
 */

export interface CodexDriverDeps {
  readonly probe?: (options: CodexOptions) => Promise<ProviderProbe>;
  /** The installed package's launcher; tests may point elsewhere. */
  readonly packageLauncher?: () => string | null;
  /** How long an interrupted turn may take to report itself. */
  readonly interruptGraceMs?: number;
}

export function createCodexDriver(deps: CodexDriverDeps = {}): ProviderDriver {
  const probe = deps.probe ?? ((options: CodexOptions) => probeCodex(options));
  const packageLauncher = deps.packageLauncher ?? installedLauncher;

  return {
    driver: CODEX_DRIVER,

    /** Bad options still give the default record; probe() reports them. */
    capabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
      return codexCapabilities(instance);
    },

    probe(instance: ProviderInstanceConfig): Promise<ProviderProbe> {
      try {
        return probe(parseCodexOptions(instance));
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },

    async openSession(input: OpenSessionInput): Promise<ProviderSessionRuntime> {
      let options: CodexOptions;
      try {
        options = parseCodexOptions(input.instance);
      } catch (error) {
        const code = error instanceof CodexOptionsError ? ProviderErrorCode.startFailed : ProviderErrorCode.protocol;
        throw new ProviderError(code, error instanceof Error ? error.message : String(error), { cause: error });
      }
      const executable = resolveExecutable(options, packageLauncher);
      const tempHome = options.codexHome === null ? await mkdtemp(join(tmpdir(), "loom-codex-")) : null;
      const codexHome = options.codexHome ?? tempHome ?? "";
      const cleanup = async (): Promise<void> => {
        if (tempHome !== null) await rm(tempHome, { recursive: true, force: true });
      };
      const session = new CodexSession({
        spawn: {
          command: executable.command,
          args: [...executable.prefixArgs, ...appServerArgs(options)],
          env: appServerEnv(options, process.env, codexHome),
          cwd: input.cwd,
          requestTimeoutMs: options.requestTimeoutMs,
          secrets: [...(input.mcp === null ? [] : [input.mcp.token]), ...Object.values(options.env).filter((value) => value.length >= 8)],
        },
        thread: { cwd: input.cwd, model: input.model, runtimeMode: input.runtimeMode, mcp: input.mcp },
        onEvent: input.onEvent,
        cleanup,
        ...(deps.interruptGraceMs === undefined ? {} : { interruptGraceMs: deps.interruptGraceMs }),
      });
      try {
        await session.open(input.signal);
      } catch (error) {
        await cleanup();
        throw error;
      }
      return session;
    },
  };
}

export const codexDriver: ProviderDriver = createCodexDriver();
