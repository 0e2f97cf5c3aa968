import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProviderSessionRuntime, WarmBinding, WarmOpenInput, WarmProviderSession } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";
import { moveWarmHome } from "../kit/warmHome.js";
import { AppServerProcess } from "./appServerProcess.js";
import type { CodexSessionSpawn } from "./session.js";
import { CodexSession, initialize } from "./session.js";
import { METHOD_NOT_FOUND } from "./protocol.js";
import { messageOf } from "../kit/errorMessage.js";

/**
 * A warm codex session (docs/warm-pools.md): a `codex app-server` process
 * started and initialized ahead of need, with no codex thread. Everything a
 * thread brings — its working directory, model, approval policy and sandbox,
 * and Loom's MCP server with the thread's own bearer token — travels in
 * thread/start, so binding starts the thread on the running process and the
 * child's first turn pays no process start.
 *
 * CODEX_HOME: the configured one when set; else the pool's warm folder,
 * which becomes the thread's home at bind (kit/warmHome.ts), so the
 * thread's later sessions resume its codex thread as usual.
 */

export interface CodexWarmSpawn {
  /** The spawn of a session whose CODEX_HOME is `home` and whose process runs in `cwd` (the session's token not yet among its secrets). */
  readonly spawnFor: (home: string, cwd: string) => CodexSessionSpawn;
  /** The configured CODEX_HOME (shared by every session), or null. */
  readonly codexHome: string | null;
  readonly interruptGraceMs?: number;
}

export async function openCodexWarm(input: WarmOpenInput, spawning: CodexWarmSpawn): Promise<WarmProviderSession> {
  const own = spawning.codexHome === null;
  const home = spawning.codexHome ?? input.home ?? (await mkdtemp(join(tmpdir(), "loom-codex-")));
  if (own) await mkdir(home, { recursive: true, mode: 0o700 });
  const removeHome = async (): Promise<void> => {
    if (own) await rm(home, { recursive: true, force: true });
  };
  const spawn = spawning.spawnFor(home, home);
  const server: AppServerProcess = new AppServerProcess({
    ...spawn,
    onNotification: () => undefined,
    // No thread, so nothing can be asked of anyone yet.
    onRequest: (request) => server.respondError(request.id, METHOD_NOT_FOUND, "this codex process has no thread yet"),
    onExit: () => undefined,
  });
  const abort = (): void => void server.close(0);
  input.signal?.addEventListener("abort", abort, { once: true });
  try {
    input.signal?.throwIfAborted();
    await initialize(server);
  } catch (error) {
    await server.close(0);
    await removeHome();
    const detail = server.stderrTail(600);
    throw new ProviderError(input.signal?.aborted === true ? ProviderErrorCode.aborted : ProviderErrorCode.startFailed, `a warm codex app-server did not start: ${messageOf(error)}${detail === "" ? "" : `; stderr: ${detail}`}`, { cause: error });
  } finally {
    input.signal?.removeEventListener("abort", abort);
  }

  let state: "warm" | "bound" | "stopped" = "warm";
  return {
    fits: () => true,

    async bind(binding: WarmBinding): Promise<ProviderSessionRuntime> {
      if (state !== "warm") throw new ProviderError(ProviderErrorCode.sessionClosed, `this warm session was already ${state}`);
      state = "bound";
      let sessionHome = home;
      let cleanup = removeHome;
      if (own && input.home != null && binding.home != null) {
        await moveWarmHome(home, binding.home);
        sessionHome = binding.home;
        cleanup = () => Promise.resolve(); // the thread keeps its home
      }
      const base = spawning.spawnFor(sessionHome, binding.cwd);
      const session = new CodexSession({
        spawn: { ...base, secrets: [...base.secrets, ...(binding.mcp === null ? [] : [binding.mcp.token])] },
        thread: { cwd: binding.cwd, model: binding.model, runtimeMode: binding.runtimeMode, mcp: binding.mcp },
        onEvent: binding.onEvent,
        cleanup,
        warm: server,
        ...(spawning.interruptGraceMs === undefined ? {} : { interruptGraceMs: spawning.interruptGraceMs }),
      });
      try {
        await session.open();
      } catch (error) {
        await cleanup();
        throw error;
      }
      return session;
    },

    async stop(): Promise<void> {
      if (state !== "warm") return;
      state = "stopped";
      await server.close();
      await removeHome();
    },
  };
}
