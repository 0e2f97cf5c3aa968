import { execFile } from "node:child_process";
import type { Checkpoint, CheckpointTrigger } from "../contracts/entities/checkpoints.js";
import { type FileContents, initRepo, tempDir, writeFiles } from "./gitRepo.js";
import { LoomHarness } from "./loomHarness.js";
import { CLI_PATH } from "./loomProcess.js";

/**
 * The real server on a real git repository (or a plain folder), with per-turn
 * checkpoints on: the workspace integration tests. The project is `repo`; the
 * state dir (and the Loom-managed worktrees under it) lives outside it.
 */
export interface RepoHarness {
  readonly h: LoomHarness;
  readonly repo: string;
  close(): Promise<void>;
}

export interface RepoHarnessOptions {
  /** The first commit's files; default a README. */
  readonly files?: FileContents;
  /** A plain folder instead of a git repository. */
  readonly plain?: boolean;
  /** The project's setup command. */
  readonly setup?: string;
  readonly setupTimeoutMs?: number;
  /** The project's checkCommand (test-gated merges). */
  readonly checkCommand?: string;
  /** More `workspaces` config (checkpoints stay on). */
  readonly workspaces?: Readonly<Record<string, unknown>>;
  /** More fields of the project's entry (e.g. its merge `resolver`). */
  readonly project?: Readonly<Record<string, unknown>>;
}

export async function startRepoHarness(options: RepoHarnessOptions = {}): Promise<RepoHarness> {
  const folder = tempDir("ws-repo");
  const files = options.files ?? { "README.md": "hello\n" };
  if (options.plain === true) writeFiles(folder.path, files);
  else initRepo(folder.path, files);
  const project = {
    id: "repo",
    root: folder.path,
    ...(options.setup === undefined ? {} : { setup: options.setup }),
    ...(options.setupTimeoutMs === undefined ? {} : { setupTimeoutMs: options.setupTimeoutMs }),
    ...(options.checkCommand === undefined ? {} : { checkCommand: options.checkCommand }),
    ...options.project,
  };
  try {
    const h = await LoomHarness.start({ config: { projects: [project], workspaces: { ...options.workspaces, checkpoints: true } } });
    return {
      h,
      repo: folder.path,
      async close() {
        await h.close();
        folder.remove();
      },
    };
  } catch (error) {
    folder.remove();
    throw error;
  }
}

/** A thread's checkpoints as the state records them, in recording order per scope. */
export function checkpointsOf(h: LoomHarness, threadId: string): Checkpoint[] {
  const found: Checkpoint[] = [];
  for (const scope of h.state.checkpointScopes.values()) {
    if (scope.threadId !== threadId) continue;
    for (const id of h.state.scopeCheckpoints.get(scope.id) ?? []) found.push(h.state.checkpoints.get(id)!);
  }
  return found;
}

/** Wait until the run's checkpoint of this trigger is recorded. */
export function waitForCheckpoint(h: LoomHarness, threadId: string, runId: string, trigger: CheckpointTrigger, timeoutMs = 15_000): Promise<Checkpoint> {
  return h.until(() => checkpointsOf(h, threadId).find((c) => c.runId === runId && c.trigger === trigger), `the ${trigger} checkpoint of run ${runId}`, timeoutMs);
}

/** Call the HTTP API as the owner; the parsed body and status. */
export async function ownerApi<T = Record<string, unknown>>(h: LoomHarness, path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${h.server.url}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${h.ownerToken}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** Run the built `loom` CLI (it finds the harness's server through <state-dir>/server.json). */
export function loomCli(args: readonly string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI_PATH, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr });
    });
  });
}
