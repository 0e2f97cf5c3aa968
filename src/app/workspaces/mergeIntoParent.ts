import { join } from "node:path";
import { DEFAULT_SETUP_TIMEOUT_MS } from "../../config/config.js";
import type { MergeIntoParentInput, MergeIntoParentOutput } from "../../contracts/workspaceQueries.js";
import { activeRunOf } from "../../engine/queries.js";
import { mergeWithCheck } from "../../workspaces/checkedMerge.js";
import { commitWorktreeChanges } from "../../workspaces/commitChanges.js";
import { isWorkspaceError } from "../../workspaces/errors.js";
import { mergeChildWorktree } from "../../workspaces/merge.js";
import { openWorkingTree } from "../../workspaces/repository.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { asAppFailure } from "./failures.js";
import { agentWorktreeEnvironment } from "./isolation.js";
import { oneAtATime } from "./mergeTurns.js";
import { mergeScratchDir, mergeScratchName, projectOf, workspacePathOf } from "./paths.js";
import { RETURNABLE, returnToChild } from "./returnToChild.js";
import { requireOwner } from "./worktrees.js";

/**
 * Merge a worktree child's branch into its parent's worktree (owner only):
 * first, unless told otherwise, commit the child's uncommitted changes on its
 * branch; then fast-forward the parent or make a merge commit. With the
 * project's checkCommand, the merged state must pass it first, in the
 * parent's scratch worktree (merges into one parent take turns there).
 * Conflicts, a failed check and local changes in the way are reported
 * (workspace_conflict, details.files, details.check) and nothing is changed;
 * with `onRefused: "child"` a conflict or a failed check goes back to the
 * child as a run instead. Neither thread may have a run going.
 */
export async function mergeIntoParent(ctx: AppContext, caller: Caller, input: MergeIntoParentInput): Promise<MergeIntoParentOutput> {
  requireOwner(caller, "merging a worktree");
  const state = ctx.orchestrator.state;
  const child = state.threads.get(input.threadId);
  if (child === undefined || child.deletedAt !== null) fail("thread_not_found", `thread ${input.threadId} does not exist`);
  if (child.workspace?.strategy !== "worktree" || child.worktreePath === null) fail("workspace_unavailable", `thread ${child.id} has no worktree of its own to merge`);
  const parentId = child.lineage.parentThreadId;
  const parent = parentId === null ? undefined : state.threads.get(parentId);
  if (parent === undefined || parent.deletedAt !== null) fail("thread_not_found", `thread ${child.id} has no live parent thread to merge into`);
  for (const thread of [child, parent]) {
    const run = activeRunOf(state, thread.id);
    if (run !== null) fail("workspace_busy", `thread ${thread.id} has an active run (${run.id}); merge once it ends`);
  }
  const childPath = child.worktreePath;
  const project = projectOf(ctx, parent.projectId);
  const parentPath = workspacePathOf(ctx, parent);
  return asAppFailure(async () => {
    const committed = input.commitChild === false ? null : await commitWorktreeChanges({ worktreePath: childPath, message: `loom: changes of thread ${child.id}\n` });
    const target = { parentWorktreePath: parentPath, childWorktreePath: childPath, ...(input.message === undefined ? {} : { message: input.message }) };
    const scratchDir = mergeScratchDir(ctx, parent.projectId);
    const scratchName = mergeScratchName(parent.id);
    const merge = async () => {
      if (project?.checkCommand === undefined) return { ...(await mergeChildWorktree(target)), check: null };
      const check = project.checkCommand;
      // The check runs with the child's ports and names: the child is idle, its block is free to use.
      return oneAtATime(join(scratchDir, scratchName), () =>
        mergeWithCheck({
          ...target,
          check,
          ...(project.setup === undefined ? {} : { setup: project.setup }),
          scratchDir,
          scratchName,
          env: agentWorktreeEnvironment(ctx.workspaces, child),
          timeoutMs: project.checkTimeoutMs ?? DEFAULT_SETUP_TIMEOUT_MS,
        }),
      );
    };
    const parentHead = (await openWorkingTree(parentPath)).head;
    const merged = await merge().catch(async (error: unknown) => {
      if (input.onRefused !== "child" || !isWorkspaceError(error) || !RETURNABLE.has(error.code) || parentHead === null) throw error;
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
  });
}
