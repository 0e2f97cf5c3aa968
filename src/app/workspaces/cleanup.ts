import { existsSync } from "node:fs";
import type { AppThread } from "../../contracts/thread.js";
import { joinId } from "../../core/ids.js";
import type { OrchestrationState } from "../../core/state.js";
import { activeRunOf } from "../../engine/queries.js";
import { removePrivateIndex } from "../../workspaces/privateIndex.js";
import { probeWorkingTree } from "../../workspaces/repository.js";
import { removeWorktree } from "../../workspaces/worktrees.js";
import { listManagedWorktrees } from "../../workspaces/worktreeList.js";
import { type CaptureContext, captureAndRecord } from "./capture.js";
import { canonical, managedDirOf, privateIndexDir, workspacePathOf } from "./paths.js";

/** What became of a deleted thread's worktree. */
export interface WorktreeRemoval {
  readonly threadId: string;
  readonly path: string | null;
  readonly removed: boolean;
  /** The last checkpoint kept before removal (its ref stays in the repository), if one was taken. */
  readonly checkpointId: string | null;
  /** Why it was kept, when it was. */
  readonly keptBecause: string | null;
}

/** The id of the checkpoint a deleted thread's worktree leaves behind. */
export function finalCheckpointId(threadId: string): string {
  return joinId("checkpoint", "thread", threadId, "deleted");
}

/**
 * Remove the worktree a deleted thread owned, after keeping its last state as
 * a checkpoint (uncommitted work included; the ref survives the worktree).
 * Kept instead, with the reason, while another live thread works in it, while
 * the thread still has a run, or when no checkpoint could be taken of it. The
 * branch stays: commits on it are the user's to keep or delete.
 */
export async function removeDeletedThreadWorktree(ctx: CaptureContext, thread: AppThread): Promise<WorktreeRemoval> {
  const keep = (path: string | null, keptBecause: string, checkpointId: string | null = null): WorktreeRemoval => ({ threadId: thread.id, path, removed: false, checkpointId, keptBecause });
  const workspace = thread.workspace;
  if (thread.deletedAt === null || workspace === undefined || workspace === null) return keep(thread.worktreePath, "the thread is not a deleted worktree thread");
  const managedDir = managedDirOf(ctx, thread.projectId);
  const path = thread.worktreePath ?? (await unrecordedWorktreeOf(workspace.repoPath, managedDir, thread.id));
  if (path === null) return keep(null, "the thread has no worktree");
  const state = ctx.orchestrator.state;
  const sharers = threadsWorkingIn(ctx, state, path).filter((id) => id !== thread.id);
  if (sharers.length > 0) return keep(path, `live threads still work in it: ${sharers.join(", ")}`);
  if (activeRunOf(state, thread.id) !== null) return keep(path, "the thread still has an active run");

  let checkpointId: string | null = null;
  if (thread.worktreePath !== null && existsSync(path)) {
    checkpointId = finalCheckpointId(thread.id);
    await captureAndRecord(ctx, { threadId: thread.id, checkpointId, runId: null, trigger: "thread_deleted", forRunId: null });
    const kept = ctx.orchestrator.state.checkpoints.get(checkpointId);
    if (kept?.status !== "ready") return keep(path, `its last checkpoint could not be taken (${kept?.status ?? "not recorded"}: ${kept?.reason ?? "?"})`, checkpointId);
  }
  const probe = await probeWorkingTree(workspace.repoPath);
  await removeWorktree({ repoPath: workspace.repoPath, managedDir, worktreePath: path, force: true }).catch((error: unknown) => {
    // Removed meanwhile (by hand, or a prune that also dropped git's record): nothing is left to remove.
    if (existsSync(path)) throw error;
  });
  if (probe.tree !== null) {
    for (const scope of state.checkpointScopes.values()) {
      if (scope.threadId === thread.id) await removePrivateIndex(privateIndexDir(probe.tree.commonDir), scope.id);
    }
  }
  return { threadId: thread.id, path, removed: true, checkpointId, keptBecause: null };
}

/** A worktree made for the thread that the thread never recorded (creation in flight when it was deleted). */
async function unrecordedWorktreeOf(repoPath: string, managedDir: string, threadId: string): Promise<string | null> {
  const worktrees = await listManagedWorktrees(repoPath, managedDir).catch(() => []);
  return worktrees.find((worktree) => worktree.threadId === threadId)?.path ?? null;
}

/** Live threads whose workspace is `path` (getWorktreeThreadIds). */
export function threadsWorkingIn(ctx: CaptureContext, state: OrchestrationState, path: string): string[] {
  const target = canonical(path);
  const ids: string[] = [];
  const seen = new Map<string, string>();
  for (const thread of state.threads.values()) {
    // A thread whose worktree is still being made works nowhere yet.
    if (thread.deletedAt !== null || (thread.workspace?.strategy === "worktree" && thread.worktreePath === null)) continue;
    const own = workspacePathOf(ctx, thread);
    let real = seen.get(own);
    if (real === undefined) {
      real = canonical(own);
      seen.set(own, real);
    }
    if (real === target) ids.push(thread.id);
  }
  return ids;
}
