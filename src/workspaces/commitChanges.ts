import type { CheckpointFile } from "../contracts/entities/checkpoints.js";
import { type CommitIdentity, commitTree, compareAndSwapRef, emptyTree, treeOf } from "./commits.js";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";
import { changedFiles } from "./fileChanges.js";
import { git, gitText } from "./git.js";
import { openWorkingTree } from "./repository.js";

/**
 * Commit everything in a worktree (tracked and untracked files, .gitignore
 * respected) on its current branch. Unlike checkpoints this does stage into
 * the worktree's own index and moves its branch: it is meant for
 * Loom-managed worktrees, e.g. before merging a child into its parent.
 */

export interface CommitWorktreeInput {
  readonly worktreePath: string;
  readonly message: string;
  readonly identity?: CommitIdentity;
  readonly at?: Date;
}

export interface CommitWorktreeResult {
  /** The new commit, or null when there was nothing to commit. */
  readonly commit: string | null;
  readonly files: CheckpointFile[];
}

export async function commitWorktreeChanges(input: CommitWorktreeInput): Promise<CommitWorktreeResult> {
  if (input.message.trim().length === 0) throw new WorkspaceError(WorkspaceErrorCode.invalidInput, "the commit message is empty");
  const tree = await openWorkingTree(input.worktreePath);
  await git(["add", "-A"], { cwd: tree.root });
  const written = await gitText(["write-tree"], { cwd: tree.root });
  const previous = tree.head === null ? await emptyTree(tree.root) : await treeOf(tree.root, tree.head);
  if (written === previous) return { commit: null, files: [] };
  const commit = await commitTree({
    cwd: tree.root,
    tree: written,
    parents: tree.head === null ? [] : [tree.head],
    message: input.message.endsWith("\n") ? input.message : `${input.message}\n`,
    identity: input.identity,
    at: input.at,
  });
  if (!(await compareAndSwapRef(tree.root, "HEAD", commit, tree.head ?? "", "loom: commit worktree changes"))) {
    throw new WorkspaceError(WorkspaceErrorCode.headMoved, `HEAD of ${tree.root} moved while committing; the branch was not changed`);
  }
  return { commit, files: await changedFiles(tree.root, previous, written) };
}
