import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { type CheckpointFile, FileChangeKind } from "../contracts/entities/checkpoints.js";
import { listCheckpointRecords } from "./checkpointRefs.js";
import { WorkspaceError, WorkspaceErrorCode, isWorkspaceError } from "./errors.js";
import { changedFiles } from "./fileChanges.js";
import { parseFilesInTheWay } from "./gitMessages.js";
import { checkoutIntoWorkingTree, privateIndexPath, snapshotWorkingTree, withPrivateIndex } from "./privateIndex.js";
import { assertOrdinal, assertScopeId } from "./refNames.js";
import { openWorkingTree } from "./repository.js";

/**
 * Rollback: make a working tree's files equal to a checkpoint of its scope.
 * Files added since are removed, changed ones restored, deleted ones
 * recreated; ignored files (not in checkpoints) are left alone. Only the
 * working tree that contains `workspacePath` is written, through the scope's
 * private index.
 *
 * HEAD, the branch and the user's index are not touched: a checkpoint is a
 * state of files, not of staging, and moving the user's branch or
 * rewriting what they staged would lose work that the checkpoint never
 * held. Afterwards `git status` compares the restored files with HEAD and
 * the index exactly as it would after hand-editing them back.
 */

export interface RollbackInput {
  readonly workspacePath: string;
  readonly scopeId: string;
  /** The ordinalWithinScope to restore. */
  readonly ordinal: number;
  /** The scope's private index folder (as given to captureCheckpoint). */
  readonly indexDir: string;
  /**
   * Overwrite files changed since the latest checkpoint (uncaptured work)
   * and ignored files in the way. Without it such files make the rollback
   * fail with `rollbackConflict` / `localChangesInTheWay` and nothing changes.
   */
  readonly force?: boolean;
}

export interface RollbackResult {
  readonly ordinal: number;
  readonly ref: string;
  readonly commit: string;
  /** Real path of the restored working tree. */
  readonly workspaceRoot: string;
  /** What the rollback changed, from the files as they were to the checkpoint. */
  readonly files: CheckpointFile[];
  /** Uncaptured changes the rollback overwrote (only with `force`). */
  readonly overwritten: string[];
}

export async function rollbackToCheckpoint(input: RollbackInput): Promise<RollbackResult> {
  assertScopeId(input.scopeId);
  assertOrdinal(input.ordinal);
  const tree = await openWorkingTree(input.workspacePath);
  const force = input.force ?? false;
  const indexPath = privateIndexPath(input.indexDir, input.scopeId);

  // Inside the scope's queue: a capture running now finishes first, so "the latest checkpoint" is settled.
  return withPrivateIndex(indexPath, async () => {
    const records = await listCheckpointRecords(tree.root, input.scopeId);
    const target = records.find((record) => record.ordinal === input.ordinal);
    if (!target) {
      throw new WorkspaceError(WorkspaceErrorCode.refNotFound, `checkpoint #${input.ordinal} of scope ${input.scopeId} has no ref in ${tree.root}`);
    }
    const latest = records.at(-1)!;
    const current = await snapshotWorkingTree(tree, indexPath);
    const [uncaptured, restore] = await Promise.all([changedFiles(tree.root, latest.tree, current), changedFiles(tree.root, current, target.tree)]);
    const touchedSinceLatest = new Set(uncaptured.flatMap(pathsOf));
    const overwritten = restore.flatMap(pathsOf).filter((path) => touchedSinceLatest.has(path));
    if (overwritten.length > 0 && !force) {
      throw new WorkspaceError(
        WorkspaceErrorCode.rollbackConflict,
        `rolling back to checkpoint #${input.ordinal} would overwrite changes made since checkpoint #${latest.ordinal}: ${overwritten.join(", ")}`,
        { files: overwritten },
      );
    }
    if (restore.length > 0) {
      if (!force) await refuseUntrackedInTheWay(tree.root, restore);
      try {
        await checkoutIntoWorkingTree(tree, indexPath, current, target.tree, force);
      } catch (error) {
        const inTheWay = isWorkspaceError(error) ? parseFilesInTheWay(error.message) : [];
        if (inTheWay.length === 0) throw error;
        throw new WorkspaceError(WorkspaceErrorCode.localChangesInTheWay, `files not in any checkpoint are in the way: ${inTheWay.join(", ")}`, {
          files: inTheWay,
          cause: error,
        });
      }
    }
    return {
      ordinal: target.ordinal,
      ref: target.ref,
      commit: target.commit,
      workspaceRoot: tree.root,
      files: restore,
      overwritten: [...new Set(overwritten)],
    };
  });
}

/**
 * A file the rollback recreates already exists but is in no snapshot: it
 * is ignored. Refuse, naming every such file, before anything is written.
 */
async function refuseUntrackedInTheWay(root: string, restore: readonly CheckpointFile[]): Promise<void> {
  const created = restore.filter((file) => file.kind === FileChangeKind.added || file.kind === FileChangeKind.renamed).map((file) => file.path);
  const present = await Promise.all(created.map(async (path) => ((await lstat(join(root, path)).catch(() => null)) === null ? null : path)));
  const inTheWay = present.filter((path): path is string => path !== null);
  if (inTheWay.length > 0) {
    throw new WorkspaceError(WorkspaceErrorCode.localChangesInTheWay, `ignored files are in the way of the rollback: ${inTheWay.join(", ")}`, {
      files: inTheWay,
    });
  }
}

function pathsOf(file: CheckpointFile): string[] {
  return file.previousPath === null ? [file.path] : [file.path, file.previousPath];
}
