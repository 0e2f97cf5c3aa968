import type { CheckpointFile } from "../contracts/entities/checkpoints.js";
import { type CommitIdentity, commitTree, compareAndSwapRef } from "./commits.js";
import { WorkspaceError, WorkspaceErrorCode, isWorkspaceError } from "./errors.js";
import { changedFiles } from "./fileChanges.js";
import { git, gitFailure, splitNul } from "./git.js";
import { parseFilesInTheWay } from "./gitMessages.js";
import { type WorkingTree, isAncestor, openWorkingTree } from "./repository.js";
import { dirtyFiles } from "./worktrees.js";

/**
 * Merge a child worktree's branch into its parent worktree: fast-forward
 * when the parent's HEAD is an ancestor of the child's, else a merge commit
 * computed by `git merge-tree --write-tree` (which touches no working
 * tree). The parent is changed only once the result is known to be clean
 * and to fit its working tree; on conflicts or files in the way it is left
 * exactly as it was. An ignored file in the way of a file the merge brings
 * is overwritten, as `git merge` does. Plumbing only: no hooks run, no
 * MERGE_HEAD is left.
 */

export const MergeOutcome = {
  upToDate: "up_to_date",
  fastForward: "fast_forward",
  mergeCommit: "merge_commit",
} as const;
export type MergeOutcome = (typeof MergeOutcome)[keyof typeof MergeOutcome];

export interface MergeWorktreeInput {
  /** The worktree merged into: its branch (or detached HEAD), index and files move to the result. */
  readonly parentWorktreePath: string;
  /** The worktree whose HEAD commit is merged; its uncommitted changes are not (see commitWorktreeChanges). */
  readonly childWorktreePath: string;
  /** Merge commit message; default "Merge branch '<child branch>'". */
  readonly message?: string;
  readonly identity?: CommitIdentity;
  readonly at?: Date;
}

export interface MergeResult {
  readonly outcome: MergeOutcome;
  /** The parent's HEAD after the merge. */
  readonly commit: string;
  readonly previousHead: string;
  readonly childCommit: string;
  /** Short name of the child's branch, or null when it is detached. */
  readonly childBranch: string | null;
  /** What changed in the parent, from its previous HEAD to the result. */
  readonly files: CheckpointFile[];
}

export async function mergeChildWorktree(input: MergeWorktreeInput): Promise<MergeResult> {
  const { parent, result } = await planMerge(input);
  if (result.outcome !== MergeOutcome.upToDate) await moveWorkingTree(parent, result.previousHead, result.commit, result.files);
  return result;
}

/**
 * The merge `mergeChildWorktree` would make, computed without touching either
 * working tree (a merge commit is written as an object only), and the
 * parent's working tree to apply it to with `moveWorkingTree`.
 */
export async function planMerge(input: MergeWorktreeInput): Promise<{ readonly parent: WorkingTree; readonly result: MergeResult }> {
  const [parent, child] = await Promise.all([openWorkingTree(input.parentWorktreePath), openWorkingTree(input.childWorktreePath)]);
  if (parent.commonDir !== child.commonDir) {
    throw new WorkspaceError(WorkspaceErrorCode.invalidInput, `${child.root} and ${parent.root} are not worktrees of the same repository`);
  }
  if (parent.head === null || child.head === null) {
    throw new WorkspaceError(WorkspaceErrorCode.noCommits, "both worktrees need a commit before a merge");
  }
  const previousHead = parent.head;
  const childCommit = child.head;
  const childBranch = child.branch === null ? null : child.branch.slice("refs/heads/".length);
  const base = { previousHead, childCommit, childBranch };

  if (await isAncestor(parent.root, childCommit, previousHead)) {
    return { parent, result: { ...base, outcome: MergeOutcome.upToDate, commit: previousHead, files: [] } };
  }
  const fastForward = await isAncestor(parent.root, previousHead, childCommit);
  const commit = fastForward
    ? childCommit
    : await commitTree({
        cwd: parent.root,
        tree: await mergeTree(parent.root, previousHead, childCommit),
        parents: [previousHead, childCommit],
        message: input.message ?? `Merge branch '${childBranch ?? childCommit}'\n`,
        identity: input.identity,
        at: input.at,
      });
  const files = await changedFiles(parent.root, previousHead, commit);
  return { parent, result: { ...base, outcome: fastForward ? MergeOutcome.fastForward : MergeOutcome.mergeCommit, commit, files } };
}

/** The merged tree of two commits, or a `mergeConflict` error naming the conflicted files. */
async function mergeTree(cwd: string, ours: string, theirs: string): Promise<string> {
  const args = ["merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", ours, theirs];
  const result = await git(args, { cwd, okCodes: [0, 1, 128] });
  if (result.code === 128) {
    if (/unrelated histories/i.test(result.stderr)) {
      throw new WorkspaceError(WorkspaceErrorCode.unrelatedHistories, `${ours} and ${theirs} share no history`);
    }
    throw gitFailure(args, result);
  }
  const [tree, ...conflicted] = splitNul(result.stdout);
  if (result.code === 1) {
    const files = [...new Set(conflicted.filter((path) => path.length > 0))];
    throw new WorkspaceError(WorkspaceErrorCode.mergeConflict, `the merge has conflicts in: ${files.join(", ")}`, { files });
  }
  if (!tree) throw gitFailure(args, result);
  return tree;
}

/**
 * Move the parent's HEAD, index and files from `from` to `to`, keeping
 * unrelated local changes. Checked first (local changes on touched paths,
 * then a dry run of git's own two-tree checkout); the ref moves with a
 * compare-and-swap, and is put back if the checkout then fails.
 */
export async function moveWorkingTree(parent: WorkingTree, from: string, to: string, files: readonly CheckpointFile[]): Promise<void> {
  const touched = new Set(files.flatMap((file) => (file.previousPath === null ? [file.path] : [file.path, file.previousPath])));
  const inTheWay = (await dirtyFiles(parent.root)).filter((path) => touched.has(path));
  if (inTheWay.length > 0) throw filesInTheWay(inTheWay);
  const checkout = ["read-tree", "-m", "-u", from, to];
  await git(["read-tree", "-n", "-m", "-u", from, to], { cwd: parent.root }).catch((error: unknown) => {
    throw asFilesInTheWay(error);
  });
  if (!(await compareAndSwapRef(parent.root, "HEAD", to, from, `loom: merge ${to}`))) {
    throw new WorkspaceError(WorkspaceErrorCode.headMoved, `HEAD of ${parent.root} moved during the merge; nothing was changed`);
  }
  try {
    await git(checkout, { cwd: parent.root });
  } catch (error) {
    await compareAndSwapRef(parent.root, "HEAD", from, to, "loom: merge undone");
    throw asFilesInTheWay(error);
  }
}

function asFilesInTheWay(error: unknown): unknown {
  const files = isWorkspaceError(error) ? parseFilesInTheWay(error.message) : [];
  return files.length > 0 ? filesInTheWay(files, error) : error;
}

function filesInTheWay(files: readonly string[], cause?: unknown): WorkspaceError {
  return new WorkspaceError(
    WorkspaceErrorCode.localChangesInTheWay,
    `local changes in the parent worktree are in the way of the merge: ${files.join(", ")}`,
    { files, cause },
  );
}
