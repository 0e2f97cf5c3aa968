import { basename } from "node:path";
import { DEFAULT_WORKSPACES } from "../../config/config.js";
import type { AppThread } from "../../contracts/thread.js";
import { WorkspaceError } from "../../workspaces/errors.js";
import type { WorkspaceSettings } from "./paths.js";

/**
 * Isolation beyond files: what a worktree thread's setup command and agent
 * get in their environment, so parallel children can run dev servers and
 * test databases side by side. The port block comes from the log (the
 * thread's `workspace.portBlock`); the names from the worktree's folder,
 * which is unique among the project's worktrees.
 */
export const WorktreeVariable = {
  portBase: "LOOM_PORT_BASE",
  portCount: "LOOM_PORT_COUNT",
  port: "PORT",
  worktreeName: "LOOM_WORKTREE_NAME",
  databaseName: "LOOM_DB_NAME",
} as const;
export type WorktreeVariable = (typeof WorktreeVariable)[keyof typeof WorktreeVariable];

/** PostgreSQL's identifier limit; MySQL's is 64. */
const MAX_DATABASE_NAME = 63;
const HIGHEST_PORT = 65_535;

/** The first port of block `index` and how many it holds; a block past the last port is an error. */
export function portsOf(settings: WorkspaceSettings, index: number): { readonly base: number; readonly count: number } {
  const start = settings.ports?.start ?? DEFAULT_WORKSPACES.portRangeStart;
  const count = settings.ports?.blockSize ?? DEFAULT_WORKSPACES.portBlockSize;
  const base = start + index * count;
  if (base + count - 1 > HIGHEST_PORT) {
    throw new WorkspaceError("workspace_ports_exhausted", `port block ${index} (${base}-${base + count - 1}) lies past port ${HIGHEST_PORT}: lower workspaces.portRangeStart or workspaces.portBlockSize, or delete finished worktree threads`);
  }
  return { base, count };
}

/** A database name from the worktree's folder name: lower case letters, digits and `_`, at most 63 characters. */
export function databaseNameOf(worktreeName: string): string {
  const name = `loom_${worktreeName.toLowerCase().replace(/[^a-z0-9_]+/g, "_")}`;
  return name.length <= MAX_DATABASE_NAME ? name : name.slice(0, MAX_DATABASE_NAME);
}

/** The variables of a worktree thread; none for a thread without a recorded worktree and block. */
export function worktreeEnvironment(settings: WorkspaceSettings, thread: AppThread): Readonly<Record<WorktreeVariable, string>> | Record<string, never> {
  const block = thread.workspace?.portBlock;
  if (thread.worktreePath === null || block === undefined) return {};
  const ports = portsOf(settings, block);
  const name = basename(thread.worktreePath);
  return {
    [WorktreeVariable.portBase]: String(ports.base),
    [WorktreeVariable.portCount]: String(ports.count),
    [WorktreeVariable.port]: String(ports.base),
    [WorktreeVariable.worktreeName]: name,
    [WorktreeVariable.databaseName]: databaseNameOf(name),
  };
}

/** The variables for a worktree thread's agent: none when its block lies past the last port (its preparation failed on that already). */
export function agentWorktreeEnvironment(settings: WorkspaceSettings, thread: AppThread): Readonly<Record<string, string>> {
  try {
    return worktreeEnvironment(settings, thread);
  } catch {
    return {};
  }
}
