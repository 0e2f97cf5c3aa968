import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { OpenSessionInput, ProviderDriver, ProviderProbe, ProviderSessionRuntime, WarmOpenInput, WarmProviderSession } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { appServerArgs, appServerEnv, otelTraceFlags } from "./codexConfig.js";
import type { CodexOptions } from "./options.js";
import { optionsForSession } from "../kit/driverOptions.js";
import { CODEX_DRIVER, CodexOptionsSchema, codexCapabilities, codexOptions } from "./options.js";
import type { CodexExecutable } from "./probe.js";
import { codexVersion, installedLauncher, probeCodex, resolveExecutable } from "./probe.js";
import { CodexSession, type CodexSessionSpawn } from "./session.js";
import { openCodexWarm } from "./warm.js";

/**
 * The `codex` driver: OpenAI Codex through `codex app-server` (JSON-RPC over
 * stdio; docs/providers/codex.md). Each Loom provider session is one
 * app-server process with one codex thread; Loom's MCP endpoint is injected
 * into the thread as `t3-code` and `t3-code-direct` with the session's
 * bearer token (spec 000, "Codex V2"). CODEX_HOME is kept per thread
 * (OpenSessionInput.home), so a later session resumes the codex thread
 * (thread/resume) after a restart or a released session.
 */

export interface CodexDriverDeps {
  readonly probe?: (options: CodexOptions) => Promise<ProviderProbe>;
  /** The installed package's launcher; tests may point elsewhere. */
  readonly packageLauncher?: () => string | null;
  /** How long an interrupted turn may take to report itself. */
  readonly interruptGraceMs?: number;
  /** Runs `<executable> --version`; rejects when it cannot run. */
  readonly version?: (executable: CodexExecutable) => Promise<string>;
}

/** One app-server kept warm once the instance has been used, for ten idle minutes (docs/warm-pools.md). */
export const CODEX_DEFAULT_POOL = { size: 1, maxIdleMs: 600_000 } as const;

export function createCodexDriver(deps: CodexDriverDeps = {}): ProviderDriver {
  const probe = deps.probe ?? ((options: CodexOptions) => probeCodex(options));
  const packageLauncher = deps.packageLauncher ?? installedLauncher;
  const version = deps.version ?? codexVersion;

  return {
    driver: CODEX_DRIVER,
    optionsSchema: CodexOptionsSchema,
    defaultPool: CODEX_DEFAULT_POOL,

    /** Bad options still give the default record; probe() reports them. */
    capabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
      return codexCapabilities(instance);
    },

    probe(instance: ProviderInstanceConfig): Promise<ProviderProbe> {
      try {
        return probe(codexOptions.parse(instance));
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },

    async openSession(input: OpenSessionInput): Promise<ProviderSessionRuntime> {
      const options: CodexOptions = optionsForSession(codexOptions, input.instance);
      const executable = resolveExecutable(options, packageLauncher);
      // CODEX_HOME: the configured one, else the thread's own folder kept across sessions (so its codex threads can be resumed), else a temp dir.
      const keptHome = options.codexHome === null && input.home != null ? input.home : null;
      if (keptHome !== null) await mkdir(keptHome, { recursive: true, mode: 0o700 });
      const tempHome = options.codexHome === null && keptHome === null ? await mkdtemp(join(tmpdir(), "loom-codex-")) : null;
      const codexHome = options.codexHome ?? keptHome ?? tempHome ?? "";
      const cleanup = async (): Promise<void> => {
        if (tempHome !== null) await rm(tempHome, { recursive: true, force: true });
      };
      const spawn = spawnFor(options, executable, codexHome, input.cwd, input.traceEnvironment ?? {});
      const session = new CodexSession({
        spawn: { ...spawn, secrets: [...spawn.secrets, ...(input.mcp === null ? [] : [input.mcp.token])] },
        thread: { cwd: input.cwd, model: input.model, runtimeMode: input.runtimeMode, mcp: input.mcp },
        onEvent: input.onEvent,
        cleanup,
        ...(deps.interruptGraceMs === undefined ? {} : { interruptGraceMs: deps.interruptGraceMs }),
      });
      try {
        await session.open(input.signal, input.resume?.nativeThreadId ?? null);
      } catch (error) {
        await cleanup();
        throw await notInstalledIfBroken(error, executable, version);
      }
      return session;
    },

    /** An app-server started and initialized ahead of need; the thread and its credential arrive with thread/start at bind (codex/warm.ts). */
    async openWarm(input: WarmOpenInput): Promise<WarmProviderSession> {
      const options: CodexOptions = optionsForSession(codexOptions, input.instance);
      const executable = resolveExecutable(options, packageLauncher);
      try {
        return await openCodexWarm(input, {
          spawnFor: (home, cwd) => spawnFor(options, executable, home, cwd),
          codexHome: options.codexHome,
          ...(deps.interruptGraceMs === undefined ? {} : { interruptGraceMs: deps.interruptGraceMs }),
        });
      } catch (error) {
        throw await notInstalledIfBroken(error, executable, version);
      }
    },
  };
}

/** How a codex process of this instance is started; the session's MCP token is added by the caller. */
function spawnFor(options: CodexOptions, executable: CodexExecutable, codexHome: string, cwd: string, trace: Readonly<Record<string, string>> = {}): CodexSessionSpawn {
  return {
    command: executable.command,
    args: [...executable.prefixArgs, ...appServerArgs(options), ...otelTraceFlags(trace)],
    env: appServerEnv(options, process.env, codexHome, trace),
    cwd,
    requestTimeoutMs: options.requestTimeoutMs,
    secrets: [...Object.values(options.env), ...Object.values(trace)].filter((value) => value.length >= 8),
  };
}

/**
 * A start that failed because the executable cannot run at all (the npm
 * launcher without its platform binary, a file that is not a program) is
 * `not_installed`, which is not retryable: `--version` tells it apart from a
 * codex that runs but failed to start this once (`start_failed`). A missing
 * file is already `not_installed` (the spawn fails).
 */
async function notInstalledIfBroken(error: unknown, executable: CodexExecutable, version: (executable: CodexExecutable) => Promise<string>): Promise<unknown> {
  if (!(error instanceof ProviderError) || error.code !== ProviderErrorCode.startFailed) return error;
  try {
    await version(executable);
    return error;
  } catch (versionError) {
    const detail = versionError instanceof Error ? (versionError.message.split("\n")[0] ?? versionError.message) : String(versionError);
    return new ProviderError(ProviderErrorCode.notInstalled, `codex at ${executable.display} does not run (${detail}); ${error.message}`, { cause: error });
  }
}

export const codexDriver: ProviderDriver = createCodexDriver();
