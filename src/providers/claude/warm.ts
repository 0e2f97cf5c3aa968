import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderSessionRuntime, WarmBinding, WarmOpenInput, WarmProviderSession, WarmSettings } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import { moveWarmHome } from "../kit/warmHome.js";
import type { ClaudeOptions } from "./options.js";
import { type ClaudeSessionSettings, LOOM_MCP_TOOLS, buildQueryOptions, loomMcpServer } from "./queryOptions.js";
import { ClaudeSession, type QueryFunction } from "./session.js";

/**
 * A warm Claude session (docs/warm-pools.md): Claude Code started ahead of
 * need through the SDK, with no Loom MCP server and no credential. Claude
 * Code fixes its working directory, permission mode and model at start, so a
 * warm session is started like the instance's most recent session
 * (WarmOpenInput.like) and fits only a thread with the same ones. Binding
 * adds Loom's MCP server with the thread's own token to the running Claude
 * Code (setMcpServers), so the child's first turn pays no process start.
 *
 * CLAUDE_CONFIG_DIR: the configured one when set; else the pool's warm
 * folder, which becomes the thread's home at bind (kit/warmHome.ts).
 */

export interface ClaudeWarmDeps {
  readonly options: ClaudeOptions;
  readonly query: QueryFunction;
  readonly isRoot: boolean;
  readonly log: (line: string) => void;
}

export async function openClaudeWarm(input: WarmOpenInput, deps: ClaudeWarmDeps): Promise<WarmProviderSession> {
  const like = input.like;
  if (like == null) throw new ProviderError(ProviderErrorCode.unsupported, "a warm Claude session is started like the instance's most recent session, and none has opened yet");
  const { options } = deps;
  const own = options.configDir === null;
  const temp = own && input.home == null;
  const configDir = options.configDir ?? input.home ?? (await mkdtemp(join(tmpdir(), "loom-claude-")));
  if (own) await mkdir(configDir, { recursive: true, mode: 0o700 });
  const removeDir = async (): Promise<void> => {
    if (own) await rm(configDir, { recursive: true, force: true });
  };
  const settings = (mcp: ClaudeSessionSettings["mcp"], dir: string, traceEnvironment?: Readonly<Record<string, string>>): ClaudeSessionSettings => ({
    cwd: like.cwd,
    model: like.model,
    runtimeMode: like.runtimeMode,
    interactionMode: like.interactionMode,
    mcp,
    configDir: dir,
    persist: !temp,
    options,
    baseEnv: process.env,
    ...(traceEnvironment === undefined ? {} : { traceEnvironment }),
    isRoot: deps.isRoot,
  });
  const session = new ClaudeSession({
    providerSessionId: "warm",
    cwd: like.cwd,
    query: deps.query,
    // Loom's tools run without asking once the server is added at bind, as in a session started with it.
    buildOptions: (hooks) => ({ ...buildQueryOptions(settings(null, configDir), hooks), allowedTools: [LOOM_MCP_TOOLS] }),
    secret: null,
    nativeSchema: !temp,
    startupTimeoutMs: options.startupTimeoutMs,
    onEvent: () => undefined,
    log: deps.log,
    cleanup: removeDir,
  });
  await session.open(input.signal);

  let state: "warm" | "bound" | "stopped" = "warm";
  return {
    // A thread owing a structured result starts Claude Code with its schema (outputFormat), which a running process cannot take.
    fits: (b: WarmSettings) =>
      b.cwd === like.cwd && b.runtimeMode === like.runtimeMode && b.interactionMode === like.interactionMode && b.model === like.model && (b.outputSchema ?? null) === null,

    async bind(binding: WarmBinding): Promise<ProviderSessionRuntime> {
      if (state !== "warm") throw new ProviderError(ProviderErrorCode.sessionClosed, `this warm session was already ${state}`);
      state = "bound";
      let dir = configDir;
      let cleanup = removeDir;
      try {
        if (own && input.home != null && binding.home != null) {
          await moveWarmHome(configDir, binding.home);
          dir = binding.home;
          cleanup = () => Promise.resolve(); // the thread keeps its home
        }
        await session.bind(
          { providerSessionId: binding.providerSessionId, buildOptions: (hooks) => buildQueryOptions(settings(binding.mcp, dir, binding.traceEnvironment), hooks), secret: binding.mcp?.token ?? null, onEvent: binding.onEvent, cleanup },
          binding.mcp === null ? null : loomMcpServer(binding.mcp),
        );
      } catch (error) {
        await session.stop();
        throw error;
      }
      return session;
    },

    async stop(): Promise<void> {
      if (state !== "warm") return;
      state = "stopped";
      await session.stop();
    },
  };
}
