import { join } from "node:path";
import { DEFAULT_SETUP_TIMEOUT_MS } from "../../config/config.js";
import type { AppThread } from "../../contracts/thread.js";
import type { MergeIntoParentOutput } from "../../contracts/workspaceQueries.js";
import { activeRunOf } from "../../engine/queries.js";
import { mergeWithCheck } from "../../workspaces/checkedMerge.js";
import { commitWorktreeChanges } from "../../workspaces/commitChanges.js";
import { HANDED_ON_REFUSALS, isWorkspaceError } from "../../workspaces/errors.js";
import { mergeChildWorktree } from "../../workspaces/merge.js";
import { openWorkingTree } from "../../workspaces/repository.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { agentWorktreeEnvironment } from "./isolation.js";
import { oneAtATime } from "./mergeTurns.js";
import { type WorkspaceLayout, mergeScratchDir, mergeScratchName, projectOf, workspacePathOf } from "./paths.js";
import { returnToChild } from "./returnToChild.js";
import { forgetSetup, noteSetup } from "./setupNotes.js";

/** What a merge reads: the engine, the projects and where worktrees go (the app's context, or the workspace effects'). */
export type MergeContext = WorkspaceLayout & Pick<AppContext, "orchestrator">;

export interface MergeChildOptions {
  readonly commitChild: boolean;
  readonly message: string | null;
  readonly onRefused: "report" | "child";
}

/** A worktree child and its live parent, or the AppError that says why there are none. */
export function childAndParent(ctx: Pick<AppContext, "orchestrator">, childThreadId: string): { child: AppThread & { worktreePath: string }; parent: AppThread } {
  const state = ctx.orchestrator.state;
  const child = state.threads.get(childThreadId);
  if (child === undefined || child.deletedAt !== null) fail("thread_not_found", `thread ${childThreadId} does not exist`);
  const worktreePath = child.worktreePath;
  if (child.workspace?.strategy !== "worktree" || worktreePath === null) fail("workspace_unavailable", `thread ${child.id} has no worktree of its own to merge`);
  const parentId = child.lineage.parentThreadId;
  const parent = parentId === null ? undefined : state.threads.get(parentId);
  if (parent === undefined || parent.deletedAt !== null) fail("thread_not_found", `thread ${child.id} has no live parent thread to merge into`);
  return { child: { ...child, worktreePath }, parent };
}

/** Neither thread may have a run going: a merge moves the parent's files and takes the child's branch as it is. */
export function requireIdle(ctx: Pick<AppContext, "orchestrator">, threads: readonly AppThread[]): void {
  for (const thread of threads) {
    const run = activeRunOf(ctx.orchestrator.state, thread.id);
    if (run !== null) fail("workspace_busy", `thread ${thread.id} has an active run (${run.id}); merge once it ends`);
  }
}

/**
 * Merge a worktree child's branch into its parent's worktree, now: first,
 * unless told otherwise, commit the child's uncommitted changes on its
 * branch; then fast-forward the parent or make a merge commit. With the
 * project's checkCommand, the merged state must pass it first, in the
 * parent's scratch worktree. A conflict, a failed check or local changes in
 * the way throw the library's WorkspaceError and change nothing; with
 * `onRefused: "child"` a conflict or a failed check goes back to the child as
 * a run instead. Made again after it landed, it answers `up_to_date`.
 */
export async function mergeChild(ctx: MergeContext, childThreadId: string, options: MergeChildOptions): Promise<MergeIntoParentOutput> {
  const { child, parent } = childAndParent(ctx, childThreadId);
  requireIdle(ctx, [child, parent]);
  const childPath = child.worktreePath;
  const project = projectOf(ctx, parent.projectId);
  const parentPath = workspacePathOf(ctx, parent);
  const committed = options.commitChild ? await commitWorktreeChanges({ worktreePath: childPath, message: `loom: changes of thread ${child.id}\n` }) : null;
  const target = { parentWorktreePath: parentPath, childWorktreePath: childPath, ...(options.message === null ? {} : { message: options.message }) };
  const scratchDir = mergeScratchDir(ctx, parent.projectId);
  const scratchName = mergeScratchName(parent.id);
  const merge = async () => {
    if (project?.checkCommand === undefined) return { ...(await mergeChildWorktree(target)), check: null };
    const check = project.checkCommand;
    // The check runs with the child's ports and names: the child is idle, its block is free to use.
    // Noted while it runs, as a setup is, so a restart after a kill stops the check this process left running in the scratch worktree.
    const note = `merge-check:${scratchDir}/${scratchName}`;
    return oneAtATime(join(scratchDir, scratchName), () =>
      mergeWithCheck({
        ...target,
        check,
        ...(project.setup === undefined ? {} : { setup: project.setup }),
        scratchDir,
        scratchName,
        env: agentWorktreeEnvironment(ctx.workspaces, child),
        timeoutMs: project.checkTimeoutMs ?? DEFAULT_SETUP_TIMEOUT_MS,
        onSpawn: (pid, cwd) => noteSetup(ctx.workspaces.setupRunDir, note, { pid, cwd }),
      }).finally(() => forgetSetup(ctx.workspaces.setupRunDir, note)),
    );
  };
  const parentHead = (await openWorkingTree(parentPath)).head;
  const merged = await merge().catch(async (error: unknown) => {
    if (options.onRefused !== "child" || !isWorkspaceError(error) || !HANDED_ON_REFUSALS.has(error.code) || parentHead === null) throw error;
    return { returned: await returnToChild(ctx, child, parent, parentHead, error) };
  });
  const base = { threadId: child.id, parentThreadId: parent.id, childChangesCommit: committed?.commit ?? null };
  if ("returned" in merged) {
    const childCommit = (await openWorkingTree(childPath)).head ?? parentHead!;
    const { returned } = merged;
    return { ...base, outcome: "returned_to_child", commit: parentHead!, previousHead: parentHead!, childCommit, childBranch: child.branch, files: [], check: returned.check, returnedToChild: returned };
  }
  return {
    ...base,
    outcome: merged.outcome,
    commit: merged.commit,
    previousHead: merged.previousHead,
    childCommit: merged.childCommit,
    childBranch: merged.childBranch,
    files: merged.files,
    check: merged.check,
  };
}
