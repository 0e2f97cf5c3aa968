import { constants } from "node:fs";
import { copyFile, mkdir, realpath, rm, stat, utimes } from "node:fs/promises";
import { dirname, join } from "node:path";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";
import { git, gitText } from "./git.js";
import { encodeScopeId } from "./refNames.js";
import type { WorkingTree } from "./repository.js";
import { isInside } from "./worktreeList.js";

/**
 * A scope's private index: a git index file outside the repository, named
 * by the scope, used through GIT_INDEX_FILE. It caches the stat data of
 * every file the scope has seen, so a snapshot (`git add -A` + `git
 * write-tree`) rehashes only files whose stat data changed. The user's own
 * index, HEAD, branch and stash are never read for writing nor written.
 */

/** Git settings for private-index commands: a split index would write shared files into the repository's git dir. */
const PRIVATE_INDEX_CONFIG = ["-c", "core.splitIndex=false"] as const;

export function privateIndexPath(indexDir: string, scopeId: string): string {
  return join(indexDir, `${encodeScopeId(scopeId)}.index`);
}

/** Beside the private index: "<head> <checkpoint>", a HEAD known to be in that checkpoint's history (a cache). */
export function headMarkPath(indexPath: string): string {
  return indexPath.replace(/\.index$/, ".head");
}

export function privateIndexEnv(indexPath: string): Readonly<Record<string, string>> {
  return { GIT_INDEX_FILE: indexPath };
}

/**
 * Refuse an index folder inside the working tree (outside its git dirs):
 * `git add -A` would snapshot the private index files themselves.
 */
async function assertIndexDirOutside(tree: WorkingTree, indexDir: string): Promise<void> {
  await mkdir(indexDir, { recursive: true });
  const real = await realpath(indexDir);
  const inGitDir = [tree.gitDir, tree.commonDir].some((dir) => real === dir || isInside(dir, real));
  if (isInside(tree.root, real) && !inGitDir) {
    throw new WorkspaceError(WorkspaceErrorCode.invalidInput, `the private index folder ${indexDir} is inside the working tree ${tree.root}`);
  }
}

/** Per index file, the tail of a promise chain: snapshots and restores of one scope run one at a time. */
const scopeQueues = new Map<string, Promise<unknown>>();

/**
 * Run `work` alone for this index file within this process. Another process
 * using the same file meets git's index.lock and gets a retryable `locked` error.
 */
export async function withPrivateIndex<T>(indexPath: string, work: () => Promise<T>): Promise<T> {
  const previous = scopeQueues.get(indexPath) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.catch(() => undefined);
  scopeQueues.set(indexPath, tail);
  try {
    return await run;
  } finally {
    if (scopeQueues.get(indexPath) === tail) scopeQueues.delete(indexPath);
  }
}

/**
 * Record the working tree's current content (tracked and untracked files,
 * .gitignore respected) in the private index and write it as a tree object.
 * Call inside `withPrivateIndex`. The first snapshot of a scope starts from
 * a copy of the worktree's own index, so its stat cache is warm and files
 * tracked despite an ignore rule stay in the snapshot.
 */
export async function snapshotWorkingTree(tree: WorkingTree, indexPath: string): Promise<string> {
  await assertIndexDirOutside(tree, dirname(indexPath));
  await seedPrivateIndex(tree, indexPath);
  return snapshotIntoIndex(tree.root, indexPath);
}

/**
 * `git add -A` + `git write-tree` through an existing private index, from
 * any folder of the working tree (git finds its top). It needs no
 * `WorkingTree`, so a capture can run it while resolving the tree in parallel.
 */
export async function snapshotIntoIndex(cwd: string, indexPath: string): Promise<string> {
  const env = privateIndexEnv(indexPath);
  try {
    await git([...PRIVATE_INDEX_CONFIG, "add", "-A"], { cwd, env });
  } catch (error) {
    // An unreadable private index (torn copy, another git's format) is only a cache: start it over once.
    if (!isCorruptIndex(error)) throw error;
    await rm(indexPath, { force: true });
    await git([...PRIVATE_INDEX_CONFIG, "add", "-A"], { cwd, env });
  }
  return gitText([...PRIVATE_INDEX_CONFIG, "write-tree"], { cwd, env });
}

/**
 * Make the private index match `treeish` and make the working tree's files
 * match it too (`git read-tree -u`). `current` is the tree the private
 * index holds now (a fresh snapshot). Without `overwrite`, git refuses
 * before writing anything when an untracked (ignored) file is in the way;
 * with it, such files are overwritten.
 */
export async function checkoutIntoWorkingTree(
  tree: WorkingTree,
  indexPath: string,
  current: string,
  target: string,
  overwrite: boolean,
): Promise<void> {
  const args = overwrite ? ["read-tree", "--reset", "-u", target] : ["read-tree", "-m", "-u", current, target];
  await git([...PRIVATE_INDEX_CONFIG, ...args], { cwd: tree.root, env: privateIndexEnv(indexPath) });
}

export async function removePrivateIndex(indexDir: string, scopeId: string): Promise<void> {
  const path = privateIndexPath(indexDir, scopeId);
  await rm(path, { force: true });
  await rm(`${path}.lock`, { force: true });
  await rm(headMarkPath(path), { force: true });
}

/** Create the index folder; copy the worktree's index on the scope's first use. */
async function seedPrivateIndex(tree: WorkingTree, indexPath: string): Promise<void> {
  await mkdir(dirname(indexPath), { recursive: true });
  const source = join(tree.gitDir, "index");
  try {
    // Exclusive: never overwrite a private index that already exists.
    await copyFile(source, indexPath, constants.COPYFILE_EXCL);
    // The copy keeps the index's own mtime: git trusts an entry's stat data only when the file is older than the index
    // file, so a fresh mtime would hide an edit made in the same second as the entry was written (same size).
    const written = await stat(source);
    await utimes(indexPath, written.atime, written.mtime);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ENOENT") return;
    throw new WorkspaceError(WorkspaceErrorCode.gitFailed, `cannot prepare the private index ${indexPath}: ${String(error)}`, { cause: error });
  }
}

function isCorruptIndex(error: unknown): boolean {
  return error instanceof WorkspaceError && /index file|bad signature|bad index/i.test(error.message);
}
