import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type {
  ManagedWorktreeView,
  WorktreeListOutput,
  WorktreePruneOutput,
  WorktreeThreadIdsInput,
  WorktreeThreadIdsOutput,
} from "../../contracts/workspaceQueries.js";
import { git } from "../../workspaces/git.js";
import { pruneWorktrees as pruneGitWorktrees } from "../../workspaces/worktrees.js";
import { type ManagedWorktree, listManagedWorktrees } from "../../workspaces/worktreeList.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { removeDeletedThreadWorktree, threadsWorkingIn } from "./cleanup.js";
import { asAppFailure } from "./failures.js";
import { canonical, managedDirOf, mergeScratchDir, mergeScratchName } from "./paths.js";

/** getWorktreeThreadIds: the live threads working in this folder (a shared checkout, or one thread's own worktree). */
export function getWorktreeThreadIds(ctx: AppContext, _caller: Caller, input: WorktreeThreadIdsInput): WorktreeThreadIdsOutput {
  return { worktreePath: canonical(input.worktreePath), threadIds: threadsWorkingIn(ctx, ctx.orchestrator.state, input.worktreePath) };
}

interface Listed {
  readonly projectId: string;
  readonly repoPath: string;
  readonly managedDir: string;
  readonly worktree: ManagedWorktree;
}

/** Every Loom-managed worktree of the configured projects (and of repositories worktree threads were made in). */
async function managedWorktrees(ctx: AppContext): Promise<Listed[]> {
  const places = new Map<string, { projectId: string; repoPath: string }>();
  for (const project of ctx.projects) places.set(`${project.id}\0${project.root}`, { projectId: project.id, repoPath: project.root });
  for (const thread of ctx.orchestrator.state.threads.values()) {
    if (thread.workspace?.strategy === "worktree") places.set(`${thread.projectId}\0${thread.workspace.repoPath}`, { projectId: thread.projectId, repoPath: thread.workspace.repoPath });
  }
  const seen = new Set<string>();
  const listed: Listed[] = [];
  for (const { projectId, repoPath } of places.values()) {
    const managedDir = managedDirOf(ctx, projectId);
    // A project that is not a git repository has no worktrees.
    for (const worktree of await listManagedWorktrees(repoPath, managedDir).catch(() => [])) {
      if (seen.has(worktree.path)) continue;
      seen.add(worktree.path);
      listed.push({ projectId, repoPath, managedDir, worktree });
    }
  }
  return listed;
}

function stateOf(ctx: AppContext, worktree: ManagedWorktree): ManagedWorktreeView["state"] {
  if (worktree.prunable) return "missing";
  const thread = worktree.threadId === null ? undefined : ctx.orchestrator.state.threads.get(worktree.threadId);
  if (thread === undefined) return "unknown";
  return thread.deletedAt === null ? "live" : "deleted";
}

/** `loom worktrees list`: the Loom-managed worktrees and the state of their threads. */
export async function listWorktrees(ctx: AppContext, caller: Caller): Promise<WorktreeListOutput> {
  requireOwner(caller, "listing worktrees");
  const listed = await managedWorktrees(ctx);
  return {
    worktrees: listed.map(({ projectId, worktree }) => ({
      projectId,
      path: worktree.path,
      branch: worktree.branch?.replace(/^refs\/heads\//, "") ?? null,
      head: worktree.head,
      threadId: worktree.threadId,
      state: stateOf(ctx, worktree),
    })),
  };
}

/**
 * `loom worktrees prune`: remove the worktrees of deleted threads (each keeps
 * its last state as a checkpoint first) and the merge scratch worktrees of
 * deleted parents, and forget worktrees whose folder is gone. Worktrees of
 * live threads and of threads this state dir does not know are left alone.
 */
export async function pruneWorktrees(ctx: AppContext, caller: Caller): Promise<WorktreePruneOutput> {
  requireOwner(caller, "pruning worktrees");
  const listed = await managedWorktrees(ctx);
  const result: WorktreePruneOutput = { removed: [], forgotten: [], kept: [] };
  const repos = new Map<string, { repoPath: string; managedDir: string }>();
  for (const { repoPath, managedDir, worktree } of listed) {
    const state = stateOf(ctx, worktree);
    if (state === "missing") {
      repos.set(`${repoPath}\0${managedDir}`, { repoPath, managedDir });
      continue;
    }
    if (state !== "deleted") continue;
    const thread = ctx.orchestrator.state.threads.get(worktree.threadId!)!;
    const outcome = await asAppFailure(() => removeDeletedThreadWorktree(ctx, thread));
    if (outcome.removed) result.removed.push({ threadId: thread.id, path: worktree.path, checkpointId: outcome.checkpointId });
    else result.kept.push({ threadId: thread.id, path: worktree.path, reason: outcome.keptBecause ?? "kept" });
  }
  for (const { repoPath, managedDir } of repos.values()) {
    for (const gone of await asAppFailure(() => pruneGitWorktrees({ repoPath, managedDir }))) result.forgotten.push({ path: gone.path, threadId: gone.threadId });
  }
  for (const removed of await pruneMergeScratches(ctx)) result.removed.push(removed);
  return result;
}

/** The scratch worktrees test-gated merges left for parents since deleted (`<worktreesRoot>/.merge/<project>/<parent slug>`). */
async function pruneMergeScratches(ctx: AppContext): Promise<WorktreePruneOutput["removed"]> {
  const deleted = new Map<string, string>();
  for (const thread of ctx.orchestrator.state.threads.values()) {
    if (thread.deletedAt !== null) deleted.set(`${thread.projectId}/${mergeScratchName(thread.id)}`, thread.id);
  }
  const removed: WorktreePruneOutput["removed"] = [];
  for (const project of ctx.projects) {
    const dir = mergeScratchDir(ctx, project.id);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const threadId = deleted.get(`${project.id}/${name}`);
      if (threadId === undefined) continue;
      const path = join(dir, name);
      await asAppFailure(() => git(["worktree", "remove", "--force", path], { cwd: project.root }));
      removed.push({ threadId, path, checkpointId: null });
    }
  }
  return removed;
}

export function requireOwner(caller: Caller, what: string): void {
  if (caller.kind !== "owner") fail("capability_denied", `only the owner may do this: ${what}`);
}
