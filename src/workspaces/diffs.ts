import type { CheckpointFile } from "../contracts/entities/checkpoints.js";
import { readBoundedPatch } from "./boundedPatch.js";
import { listCheckpointRecords } from "./checkpointRefs.js";
import { treeOf } from "./commits.js";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";
import { changedFiles } from "./fileChanges.js";
import { privateIndexPath, snapshotWorkingTree, withPrivateIndex } from "./privateIndex.js";
import { assertScopeId } from "./refNames.js";
import { openWorkingTree, resolveCommit } from "./repository.js";

/**
 * Diffs between checkpoints (a turn: before → after) and from a scope's
 * first checkpoint to the working tree as it is now (the whole thread).
 * Every diff carries per-file stats for all changed files and a unified
 * patch bounded by a byte cap.
 */

/** Default cap on the patch text: 1 MiB. */
export const DEFAULT_DIFF_MAX_BYTES = 1024 * 1024;

/** First characters of the line appended to a patch that was cut; the line then says how many files were left out. */
export const DIFF_TRUNCATION_MARKER = "# loom: diff truncated";

export interface DiffOptions {
  /** Cap on the patch bytes (the marker line comes on top). Default DEFAULT_DIFF_MAX_BYTES. */
  readonly maxBytes?: number;
  /** Unchanged lines around each change; default 3, as git. */
  readonly contextLines?: number;
}

export interface WorkspaceDiff {
  /** The commit the diff starts from. */
  readonly fromCommit: string;
  /** The commit it ends at, or null for the working tree as it is now. */
  readonly toCommit: string | null;
  /** The tree it ends at (for the working tree: a snapshot written just now). */
  readonly toTree: string;
  /** Every changed file with its stats, in patch order, including files left out of `patch`. */
  readonly files: CheckpointFile[];
  /** Unified diff (a/ b/ prefixes) of the files that fit; when cut, ends with the marker line. */
  readonly patch: string;
  readonly truncated: boolean;
  /** Paths (new path for renames) of the files whose patch was left out. */
  readonly omittedFiles: string[];
}

export interface DiffCheckpointsInput extends DiffOptions {
  /** Any path inside the repository. */
  readonly workspacePath: string;
  /** Commit-ish the diff starts from (a checkpoint ref or commit). */
  readonly from: string;
  /** Commit-ish the diff ends at. */
  readonly to: string;
}

/** The diff between two checkpoints (or any two commits). */
export async function diffCheckpoints(input: DiffCheckpointsInput): Promise<WorkspaceDiff> {
  const limits = diffLimits(input);
  const tree = await openWorkingTree(input.workspacePath);
  const [fromCommit, toCommit] = await Promise.all([resolveCommit(tree.root, input.from), resolveCommit(tree.root, input.to)]);
  const [fromTree, toTree] = await Promise.all([treeOf(tree.root, fromCommit), treeOf(tree.root, toCommit)]);
  return buildDiff(tree.root, fromCommit, toCommit, fromTree, toTree, limits);
}

export interface DiffWorkspaceInput extends DiffOptions {
  readonly workspacePath: string;
  readonly scopeId: string;
  /** The scope's private index folder (as given to captureCheckpoint). */
  readonly indexDir: string;
  /** Commit-ish to start from; default the scope's first checkpoint. */
  readonly from?: string;
}

/**
 * The diff from the scope's first checkpoint (or `from`) to the working
 * tree now, uncaptured changes included: the full thread diff. The current
 * state is snapshotted through the scope's private index; nothing the user
 * sees changes.
 */
export async function diffWorkspaceSince(input: DiffWorkspaceInput): Promise<WorkspaceDiff> {
  assertScopeId(input.scopeId);
  const limits = diffLimits(input);
  const tree = await openWorkingTree(input.workspacePath);
  let from = input.from;
  if (from === undefined) {
    const first = (await listCheckpointRecords(tree.root, input.scopeId))[0];
    if (!first) throw new WorkspaceError(WorkspaceErrorCode.refNotFound, `scope ${input.scopeId} has no checkpoint to diff from`);
    from = first.commit;
  }
  const fromCommit = await resolveCommit(tree.root, from);
  const indexPath = privateIndexPath(input.indexDir, input.scopeId);
  const [fromTree, toTree] = await Promise.all([
    treeOf(tree.root, fromCommit),
    withPrivateIndex(indexPath, () => snapshotWorkingTree(tree, indexPath)),
  ]);
  return buildDiff(tree.root, fromCommit, null, fromTree, toTree, limits);
}

interface Limits {
  readonly maxBytes: number;
  readonly contextLines: number;
}

function diffLimits(options: DiffOptions): Limits {
  const maxBytes = options.maxBytes ?? DEFAULT_DIFF_MAX_BYTES;
  const contextLines = options.contextLines ?? 3;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new WorkspaceError(WorkspaceErrorCode.invalidInput, `maxBytes must be a positive integer, got ${maxBytes}`);
  }
  if (!Number.isSafeInteger(contextLines) || contextLines < 0) {
    throw new WorkspaceError(WorkspaceErrorCode.invalidInput, `contextLines must be a non-negative integer, got ${contextLines}`);
  }
  return { maxBytes, contextLines };
}

async function buildDiff(
  cwd: string,
  fromCommit: string,
  toCommit: string | null,
  fromTree: string,
  toTree: string,
  limits: Limits,
): Promise<WorkspaceDiff> {
  if (fromTree === toTree) return { fromCommit, toCommit, toTree, files: [], patch: "", truncated: false, omittedFiles: [] };
  const [files, patch] = await Promise.all([
    changedFiles(cwd, fromTree, toTree),
    readBoundedPatch(cwd, fromTree, toTree, limits.maxBytes, limits.contextLines),
  ]);
  if (!patch.truncated) return { fromCommit, toCommit, toTree, files, patch: patch.text, truncated: false, omittedFiles: [] };
  const omittedFiles = files.slice(patch.sectionsKept).map((file) => file.path);
  const marker = `${DIFF_TRUNCATION_MARKER} at ${limits.maxBytes} bytes: ${omittedFiles.length} of ${files.length} files left out\n`;
  return { fromCommit, toCommit, toTree, files, patch: patch.text + marker, truncated: true, omittedFiles };
}
