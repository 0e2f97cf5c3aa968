import { compareAndSwapRef, commitTree, treeOf } from "./commits.js";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";
import { git, gitFailure, splitNul } from "./git.js";
import { isAncestor, openWorkingTree } from "./repository.js";

/**
 * A refused merge as a resolver works on it (docs/workspaces.md, "Resolver
 * tasks"): the merge in progress is a commit whose parents are the parent's
 * and the child's commits and whose tree is git's merge of the two, conflict
 * markers and all (or the merged tree whose check failed). A resolver's
 * worktree starts there; once it is done, its files are made the tree of one
 * merge commit of the same two parents, so the parent's history holds no
 * commit with conflict markers in it.
 */

export interface MergeInProgress {
  readonly commit: string;
  /** The files git could not merge (their conflict markers are in the commit); empty for a clean merge. */
  readonly conflicted: readonly string[];
}

export async function mergeInProgressCommit(input: { readonly cwd: string; readonly ours: string; readonly theirs: string; readonly message: string }): Promise<MergeInProgress> {
  const args = ["merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", input.ours, input.theirs];
  const result = await git(args, { cwd: input.cwd, okCodes: [0, 1] });
  const [tree, ...conflicted] = splitNul(result.stdout);
  if (tree === undefined || tree.length === 0) throw gitFailure(args, result);
  const commit = await commitTree({ cwd: input.cwd, tree, parents: [input.ours, input.theirs], message: input.message });
  return { commit, conflicted: [...new Set(conflicted.filter((path) => path.length > 0))] };
}

export interface ConcludeResolutionInput {
  /** The resolver's worktree, its changes committed. */
  readonly worktreePath: string;
  readonly baseCommit: string;
  readonly parentCommit: string;
  readonly childCommit: string;
  /** The files that conflicted: none may still hold a conflict marker. */
  readonly files: readonly string[];
  readonly message: string;
}

/**
 * The resolver's branch made one merge commit of the parent's and the
 * child's commits with the resolver's tree, the branch moved to it (its
 * index and files already match that tree). Refused with
 * `workspace_merge_conflict` while a conflicted file still holds a marker,
 * and `workspace_invalid_input` when the branch no longer descends from the
 * merge in progress.
 */
export async function concludeResolution(input: ConcludeResolutionInput): Promise<string> {
  const tree = await openWorkingTree(input.worktreePath);
  if (tree.head === null || tree.branch === null) throw new WorkspaceError(WorkspaceErrorCode.invalidInput, `the resolver's worktree ${input.worktreePath} has no branch to conclude`);
  const [fromBase, hasParent, hasChild] = await Promise.all([
    isAncestor(tree.root, input.baseCommit, tree.head),
    isAncestor(tree.root, input.parentCommit, tree.head),
    isAncestor(tree.root, input.childCommit, tree.head),
  ]);
  if (!fromBase && !(hasParent && hasChild)) {
    throw new WorkspaceError(WorkspaceErrorCode.invalidInput, `the resolver's branch no longer holds the merge in progress ${input.baseCommit}`);
  }
  const marked = await filesWithMarkers(tree.root, tree.head, input.files);
  if (marked.length > 0) throw new WorkspaceError(WorkspaceErrorCode.mergeConflict, `conflict markers remain in: ${marked.join(", ")}`, { files: marked });
  // Concluded already (a replayed merge), or merged by the resolver itself without the commit in progress: kept as it is.
  if (!fromBase) return tree.head;
  const commit = await commitTree({ cwd: tree.root, tree: await treeOf(tree.root, tree.head), parents: [input.parentCommit, input.childCommit], message: input.message });
  if (!(await compareAndSwapRef(tree.root, tree.branch, commit, tree.head, "loom: conclude the resolved merge"))) {
    throw new WorkspaceError(WorkspaceErrorCode.headMoved, `the resolver's branch moved while its merge was concluded`);
  }
  return commit;
}

/** Those of `files` whose content at `commit` has a line starting a conflict marker (`<<<<<<< `, `>>>>>>> `). */
async function filesWithMarkers(cwd: string, commit: string, files: readonly string[]): Promise<string[]> {
  if (files.length === 0) return [];
  const args = ["grep", "-l", "-z", "-E", "^(<<<<<<<|>>>>>>>)( |$)", commit, "--", ...files];
  const result = await git(args, { cwd, okCodes: [0, 1] });
  return splitNul(result.stdout)
    .filter((line) => line.length > 0)
    .map((line) => line.slice(commit.length + 1));
}
