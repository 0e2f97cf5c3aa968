import { realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ProjectConfig } from "../../config/config.js";
import type { AppThread } from "../../contracts/thread.js";
import { worktreeSlug } from "../../workspaces/refNames.js";

/** Where Loom keeps what it makes in repositories, and where a thread works. */
export interface WorkspaceSettings {
  /** Loom-managed worktrees of project P go in `<worktreesRoot>/<P>/<slug of the title>-<short id>` (worktreeSlug). */
  readonly worktreesRoot: string;
  /** Prefix of their branches (`loom/` by default). */
  readonly branchPrefix: string;
  /** The folder a thread works in when it has no worktree and its project is unknown (the server's cwd). */
  readonly fallbackRoot: string;
  /** Running setup commands are noted here, so a restarted Loom can stop one its predecessor left behind. */
  readonly setupRunDir: string;
  /** Where worktree port blocks lie (workspaces.portRangeStart, portBlockSize); absent: the defaults. */
  readonly ports?: { readonly start: number; readonly blockSize: number };
}

/** What the path helpers read: the settings and the configured projects. */
export interface WorkspaceLayout {
  readonly workspaces: WorkspaceSettings;
  readonly projects: readonly ProjectConfig[];
}

/** The folder a thread's agent works in: its worktree, else its project's root (the session manager's rule). */
export function workspacePathOf(layout: WorkspaceLayout, thread: AppThread): string {
  return thread.worktreePath ?? projectOf(layout, thread.projectId)?.root ?? layout.workspaces.fallbackRoot;
}

export function projectOf(layout: WorkspaceLayout, projectId: string): ProjectConfig | undefined {
  return layout.projects.find((project) => project.id === projectId);
}

/** The Loom-managed folder of a project's worktrees. */
export function managedDirOf(layout: WorkspaceLayout, projectId: string): string {
  return join(layout.workspaces.worktreesRoot, projectId);
}

/** Where test-gated merges into a project's threads keep their scratch worktrees: one per parent, outside every project's managed folder. */
export function mergeScratchDir(layout: WorkspaceLayout, projectId: string): string {
  return join(layout.workspaces.worktreesRoot, ".merge", projectId);
}

/** The scratch worktree's folder name of a parent thread: its id's slug, which a title change does not move. */
export function mergeScratchName(threadId: string): string {
  return worktreeSlug(undefined, threadId);
}

/** Where a repository's checkpoint scopes keep their private indexes: inside its common git dir, never in a checkout. */
export function privateIndexDir(commonDir: string): string {
  return join(commonDir, "loom", "index");
}

/** The real path when the folder exists, else the absolute path: what worktree lookups compare. */
export function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
