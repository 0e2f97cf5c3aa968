import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { type CheckpointFile, CheckpointStatus } from "../contracts/entities/checkpoints.js";
import { assertCheckpointAddress, listCheckpointRecords, previousRecord } from "./checkpointRefs.js";
import { type CommitIdentity, commitTree, compareAndSwapRef, emptyTree } from "./commits.js";
import { changedFiles } from "./fileChanges.js";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";
import { headMarkPath, privateIndexPath, snapshotIntoIndex, snapshotWorkingTree, withPrivateIndex } from "./privateIndex.js";
import { checkpointRef } from "./refNames.js";
import { type WorkingTree, isAncestor } from "./repository.js";
import { type ScopeRef, probeScope } from "./scopeProbe.js";

/**
 * Checkpoint capture: a snapshot of a working tree (tracked and untracked
 * files, .gitignore respected) as a commit on refs/loom/checkpoints/<scope>/<ordinal>,
 * made through the scope's private index. The user's index, HEAD, branch and
 * stash are untouched; the only writes are git objects, the checkpoint ref
 * and the private index file.
 */

export interface CaptureCheckpointInput {
  /** Any path inside the working tree; the whole tree (from its top folder) is captured. */
  readonly workspacePath: string;
  readonly scopeId: string;
  /** The checkpoint's ordinalWithinScope; the engine allocates it. */
  readonly ordinal: number;
  /** Folder for the scopes' private index files (created when missing), outside the repository. */
  readonly indexDir: string;
  /** Commit message; defaults to "loom checkpoint <scope> #<ordinal>". */
  readonly message?: string;
  readonly identity?: CommitIdentity;
  /** The commit's time; defaults to now. */
  readonly at?: Date;
}

export interface ReadyCheckpoint {
  readonly status: typeof CheckpointStatus.ready;
  readonly scopeId: string;
  readonly ordinal: number;
  readonly ref: string;
  readonly commit: string;
  readonly tree: string;
  /** Real path of the working tree's top folder. */
  readonly workspaceRoot: string;
  /** The previous checkpoint of the scope (the commit's first parent), or null for the first. */
  readonly previous: { readonly ordinal: number; readonly commit: string } | null;
  /**
   * What changed since the previous checkpoint; for the scope's first
   * checkpoint, since the commit HEAD was on (every file in a repository with no commit).
   */
  readonly files: CheckpointFile[];
  /** The ref already existed (a replayed capture): this describes the stored checkpoint, nothing was written. */
  readonly alreadyCaptured: boolean;
}

export interface MissingCheckpoint {
  readonly status: typeof CheckpointStatus.missing;
  readonly scopeId: string;
  readonly ordinal: number;
  readonly ref: null;
  /** Why nothing could be captured (no such folder, not a git repository, bare repository). */
  readonly reason: string;
  readonly files: CheckpointFile[];
}

export type CaptureResult = ReadyCheckpoint | MissingCheckpoint;

/**
 * Capture the working tree as checkpoint `ordinal` of `scopeId`. Parents:
 * the previous checkpoint of the scope first, then HEAD when HEAD is not
 * already in the scope's history (so merges of branches started from a
 * checkpoint find a sensible merge base). Replay-safe: when the ref exists
 * the stored checkpoint is returned with `alreadyCaptured: true`.
 */
export async function captureCheckpoint(input: CaptureCheckpointInput): Promise<CaptureResult> {
  assertCheckpointAddress(input.scopeId, input.ordinal);
  const indexPath = privateIndexPath(input.indexDir, input.scopeId);
  // One capture per scope at a time, so "the previous checkpoint" is well defined.
  return withPrivateIndex(indexPath, () => captureAlone(input, indexPath));
}

async function captureAlone(input: CaptureCheckpointInput, indexPath: string): Promise<CaptureResult> {
  // Every git process costs milliseconds: with a warm private index the
  // snapshot starts at once, while one rev-parse resolves the working tree
  // and the scope's refs alongside it.
  const warm = existsSync(indexPath);
  const probing = probeScope(input.workspacePath, input.scopeId);
  const snapshotting = warm
    ? snapshotIntoIndex(input.workspacePath, indexPath)
    : probing.then((probe) => (probe.tree === null ? null : snapshotWorkingTree(probe.tree, indexPath)));
  // Awaited below; a failure while the probe is pending must not count as unhandled.
  snapshotting.catch(() => undefined);
  const probe = await probing;
  if (probe.tree === null) {
    await snapshotting.catch(() => undefined); // it failed the same way the probe did
    return { status: CheckpointStatus.missing, scopeId: input.scopeId, ordinal: input.ordinal, ref: null, reason: probe.reason, files: [] };
  }
  const tree = probe.tree;
  if (probe.refs.some((ref) => ref.ordinal === input.ordinal)) {
    await snapshotting.catch(() => undefined); // not needed: the stored checkpoint is the answer
    return describeStored(tree, input.scopeId, input.ordinal);
  }
  const previous = previousRecord(probe.refs, input.ordinal);
  const [headParent, snapshot] = await Promise.all([headAsParent(tree, previous, indexPath), snapshotting]);
  if (snapshot === null) throw new WorkspaceError(WorkspaceErrorCode.gitFailed, `no snapshot was taken of ${tree.root}`);

  const ref = checkpointRef(input.scopeId, input.ordinal);
  const committing = commitTree({
    cwd: tree.root,
    tree: snapshot,
    parents: [...(previous ? [previous.commit] : []), ...(headParent ? [headParent] : [])],
    message: input.message ?? `loom checkpoint ${input.scopeId} #${input.ordinal}\n`,
    identity: input.identity,
    at: input.at,
  });
  const listing = (async () => changedFiles(tree.root, previous?.commit ?? tree.head ?? (await emptyTree(tree.root)), snapshot))();
  listing.catch(() => undefined); // awaited below, after the ref, which need not wait for it
  const commit = await committing;
  if (!(await compareAndSwapRef(tree.root, ref, commit, "", `loom checkpoint #${input.ordinal}`))) {
    // Another process captured the same ordinal first: answer with what it stored.
    return describeStored(tree, input.scopeId, input.ordinal);
  }
  const files = await listing;
  if (tree.head !== null) await writeFile(headMarkPath(indexPath), `${tree.head} ${commit}\n`);
  return {
    status: CheckpointStatus.ready,
    scopeId: input.scopeId,
    ordinal: input.ordinal,
    ref,
    commit,
    tree: snapshot,
    workspaceRoot: tree.root,
    previous: previous ? { ordinal: previous.ordinal, commit: previous.commit } : null,
    files,
    alreadyCaptured: false,
  };
}

/**
 * HEAD as an extra parent when the previous checkpoint's history does not
 * contain it yet (the user committed since). The head mark written by the
 * last capture answers the common case (HEAD unchanged) without asking git.
 */
async function headAsParent(tree: WorkingTree, previous: ScopeRef | null, indexPath: string): Promise<string | null> {
  const head = tree.head;
  if (head === null) return null;
  if (previous === null) return head;
  const mark = await readFile(headMarkPath(indexPath), "utf8").catch(() => "");
  if (mark.trim() === `${head} ${previous.commit}`) return null;
  return (await isAncestor(tree.root, head, previous.commit)) ? null : head;
}

async function describeStored(tree: WorkingTree, scopeId: string, ordinal: number): Promise<ReadyCheckpoint> {
  const records = await listCheckpointRecords(tree.root, scopeId);
  const stored = records.find((record) => record.ordinal === ordinal);
  if (!stored) throw new WorkspaceError(WorkspaceErrorCode.refNotFound, `checkpoint #${ordinal} of scope ${scopeId} vanished while being read`);
  const previous = previousRecord(records, stored.ordinal);
  const base = previous?.commit ?? stored.parents[0] ?? (await emptyTree(tree.root));
  return {
    status: CheckpointStatus.ready,
    scopeId,
    ordinal: stored.ordinal,
    ref: stored.ref,
    commit: stored.commit,
    tree: stored.tree,
    workspaceRoot: tree.root,
    previous: previous ? { ordinal: previous.ordinal, commit: previous.commit } : null,
    files: await changedFiles(tree.root, base, stored.tree),
    alreadyCaptured: true,
  };
}
