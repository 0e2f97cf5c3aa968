import { EffectKind } from "../../contracts/effects.js";
import { joinId } from "../../core/ids.js";
import type { EventStore } from "../../store/eventStore.js";
import { removeWorktree } from "../../workspaces/worktrees.js";
import { listManagedWorktrees } from "../../workspaces/worktreeList.js";
import type { CaptureContext } from "./capture.js";
import { managedDirOf } from "./paths.js";
import { stopLeftoverSetups } from "./setupNotes.js";

export interface WorkspaceBootReport {
  /** Setup and merge check commands a killed predecessor left running, now stopped. */
  readonly stoppedSetups: number;
  /** Worktrees made by a preparation that was cut short, now recorded on their thread. */
  readonly adopted: number;
  /** Worktrees whose creation was cut short (no Loom metadata), now removed. */
  readonly removedHalfMade: number;
}

/**
 * Before boot reconciliation ends the runs the previous process left active:
 * stop the setup commands it left running, record on its thread every
 * worktree a cut-short preparation made but did not record yet, and remove
 * worktrees whose creation itself was cut short. So a restart never leaves a
 * worktree nobody knows about; the interrupted run can be retried
 * (prepared-run.retry) and then only runs the setup again.
 */
export async function reconcileWorkspacesOnBoot(ctx: CaptureContext, bootId: string, log: (line: string) => void = () => undefined): Promise<WorkspaceBootReport> {
  const stoppedSetups = stopLeftoverSetups(ctx.workspaces.setupRunDir);
  const state = ctx.orchestrator.state;
  const places = new Map<string, { repoPath: string; managedDir: string }>();
  for (const thread of state.threads.values()) {
    if (thread.workspace?.strategy !== "worktree") continue;
    const managedDir = managedDirOf(ctx, thread.projectId);
    places.set(`${thread.workspace.repoPath}\0${managedDir}`, { repoPath: thread.workspace.repoPath, managedDir });
  }
  let adopted = 0;
  let removedHalfMade = 0;
  for (const { repoPath, managedDir } of places.values()) {
    const worktrees = await listManagedWorktrees(repoPath, managedDir).catch((error: unknown) => {
      log(`loom: cannot list the worktrees of ${repoPath}: ${String(error)}`);
      return [];
    });
    for (const worktree of worktrees) {
      if (worktree.threadId === null) {
        if (worktree.branch?.startsWith(`refs/heads/${ctx.workspaces.branchPrefix}`) !== true) continue;
        await removeWorktree({ repoPath, managedDir, worktreePath: worktree.path, force: true }).then(
          () => (removedHalfMade += 1),
          (error: unknown) => log(`loom: cannot remove the half-made worktree ${worktree.path}: ${String(error)}`),
        );
        continue;
      }
      const thread = state.threads.get(worktree.threadId);
      if (thread === undefined || thread.worktreePath !== null || worktree.prunable || worktree.branch === null || worktree.head === null) continue;
      const run = (state.threadRuns.get(thread.id) ?? []).map((id) => state.runs.get(id)!).find((r) => r.status === "starting" && r.preparation?.status === "preparing");
      if (run === undefined) continue;
      const receipt = await ctx.orchestrator.dispatch({
        type: "prepared-run.progress",
        commandId: joinId("cmd", "boot", bootId, "adopt", run.id),
        data: {
          threadId: thread.id,
          runId: run.id,
          step: "worktree",
          worktree: { path: worktree.path, branch: worktree.branch.replace(/^refs\/heads\//, ""), baseCommit: worktree.head },
        },
      });
      if (receipt.status === "accepted") adopted += 1;
    }
  }
  return { stoppedSetups, adopted, removedHalfMade };
}

/**
 * A single node's restart (not on a shared database, where another live
 * node may hold them): merge queue effects the previous process had leased
 * are made claimable at once instead of when their lease lapses, so a merge
 * cut short is begun again as the server starts. Their entries stay
 * `merging`; the replayed effect begins attempt 2 (src/app/workspaces/mergeQueueEffect.ts).
 */
export async function releaseLeftMergeLeases(store: Pick<EventStore, "listOutbox" | "failOutbox">, now: number): Promise<number> {
  let released = 0;
  for (const row of await store.listOutbox("leased")) {
    if (row.kind !== EffectKind.mergeQueueEntry || row.leaseOwner === null) continue;
    if (await store.failOutbox(row.id, row.leaseOwner, "cut short by a server restart", now)) released += 1;
  }
  return released;
}
