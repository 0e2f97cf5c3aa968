import { existsSync } from "node:fs";
import { mkdir, realpath, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { deleteRefIfAt } from "./commits.js";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";
import { git, gitFailure, splitNul } from "./git.js";
import { suffixedSlug, worktreeSlug } from "./refNames.js";
import { openWorkingTree, refExists, resolveCommit } from "./repository.js";
import {
  type ManagedWorktree,
  WORKTREE_METADATA_FILE,
  type WorktreeMetadata,
  listGitWorktrees,
  listManagedWorktrees,
  worktreeGitDir,
} from "./worktreeList.js";

/**
 * Loom-managed git worktrees: one folder per thread inside a folder the
 * caller owns, each on its own new branch. Removal and pruning only ever
 * touch worktrees inside that folder.
 */

export const DEFAULT_BRANCH_PREFIX = "loom/";
/** How many `-N` suffixes are tried before a name counts as unavailable. */
const MAX_NAME_ATTEMPTS = 100;

export interface CreateWorktreeInput {
  /** Any path in the repository (its main checkout or a worktree). */
  readonly repoPath: string;
  /** The Loom-managed folder new worktrees go in (created when missing). */
  readonly managedDir: string;
  /** The thread the worktree is for; its slug names the branch and the folder. */
  readonly threadId: string;
  /**
   * Commit-ish to start from (a branch, a commit, a checkpoint ref, which
   * gives a child its parent's uncommitted work). Default: HEAD of `repoPath`.
   */
  readonly baseRef?: string;
  /**
   * Start from origin/<branch> when that remote-tracking ref exists locally
   * (<branch> is `baseRef` when it names a local branch, else the current
   * branch). Nothing is fetched; without the ref the local base is used.
   */
  readonly startFromOrigin?: boolean;
  /** Prefix of the new branch's name; default "loom/". Segments of [A-Za-z0-9._-] each ending in "/". */
  readonly branchPrefix?: string;
  /** The thread's title: the branch reads `<prefix><slug of the title>-<short id>` (worktreeSlug); without one, the id's slug. */
  readonly title?: string;
  readonly at?: Date;
}

export interface CreatedWorktree {
  readonly threadId: string;
  /** Real path of the new worktree folder. */
  readonly path: string;
  /** Short branch name, e.g. "loom/fix-the-login-page-3f9a1c2e" (or "loom/thread-1f2e" without a title). */
  readonly branch: string;
  readonly baseCommit: string;
  /** What the base was resolved from: "HEAD", the given baseRef, or "refs/remotes/origin/<branch>". */
  readonly baseRef: string;
}

export async function createWorktree(input: CreateWorktreeInput): Promise<CreatedWorktree> {
  const prefix = input.branchPrefix ?? DEFAULT_BRANCH_PREFIX;
  if (!/^([A-Za-z0-9_-][A-Za-z0-9._-]*\/)*$/.test(prefix) || /\.\.|\.lock\/|\.\//.test(prefix)) {
    throw new WorkspaceError(WorkspaceErrorCode.invalidInput, `not a usable branch prefix: ${JSON.stringify(prefix)}`);
  }
  if (input.threadId.length === 0) throw new WorkspaceError(WorkspaceErrorCode.invalidInput, "the thread id is empty");
  const repo = await openWorkingTree(input.repoPath);
  const base = await resolveBase(repo.root, repo.head, repo.branch, input);
  await mkdir(input.managedDir, { recursive: true });
  const managedRoot = await realpath(input.managedDir);
  const slug = worktreeSlug(input.title, input.threadId);

  for (let attempt = 1; attempt <= MAX_NAME_ATTEMPTS; attempt += 1) {
    const name = suffixedSlug(slug, attempt);
    const path = join(managedRoot, name);
    if (existsSync(path)) continue;
    const branch = `${prefix}${name}`;
    const args = ["worktree", "add", "--quiet", "-b", branch, path, base.commit];
    const result = await git(args, { cwd: repo.root, okCodes: [0, 128, 255] });
    if (result.code !== 0) {
      if (/a branch named .* already exists|already exists$/m.test(result.stderr) && !/cannot lock ref/.test(result.stderr)) continue;
      if (/cannot lock ref .*exists; cannot create/.test(result.stderr)) {
        throw new WorkspaceError(WorkspaceErrorCode.nameUnavailable, `branch ${branch} cannot be created: ${result.stderr.trim()}`);
      }
      throw gitFailure(args, result);
    }
    const metadata: WorktreeMetadata = { threadId: input.threadId, branch, baseCommit: base.commit, createdAt: (input.at ?? new Date()).toISOString() };
    const gitDir = await worktreeGitDir(path);
    if (gitDir !== null) await writeFile(join(gitDir, WORKTREE_METADATA_FILE), `${JSON.stringify(metadata)}\n`);
    return { threadId: input.threadId, path: await realpath(path), branch, baseCommit: base.commit, baseRef: base.ref };
  }
  throw new WorkspaceError(WorkspaceErrorCode.nameUnavailable, `no free branch or folder name for ${input.threadId} after ${MAX_NAME_ATTEMPTS} attempts`);
}

async function resolveBase(
  cwd: string,
  head: string | null,
  currentBranch: string | null,
  input: CreateWorktreeInput,
): Promise<{ readonly commit: string; readonly ref: string }> {
  if (input.startFromOrigin) {
    const local = input.baseRef === undefined ? currentBranch : (await refExists(cwd, `refs/heads/${input.baseRef}`)) ? `refs/heads/${input.baseRef}` : null;
    const remote = local === null ? null : `refs/remotes/origin/${local.slice("refs/heads/".length)}`;
    if (remote !== null && (await refExists(cwd, remote))) return { commit: await resolveCommit(cwd, remote), ref: remote };
  }
  if (input.baseRef !== undefined) return { commit: await resolveCommit(cwd, input.baseRef), ref: input.baseRef };
  if (head === null) {
    throw new WorkspaceError(WorkspaceErrorCode.noCommits, `${cwd} has no commit yet; a worktree needs a commit to start from`);
  }
  return { commit: head, ref: "HEAD" };
}

export interface RemoveWorktreeInput {
  readonly repoPath: string;
  readonly managedDir: string;
  readonly worktreePath: string;
  /** Remove even with modified or untracked files (they are lost; capture a checkpoint first). */
  readonly force?: boolean;
  /** Also delete the worktree's branch (only if it still points where the worktree left it). */
  readonly deleteBranch?: boolean;
}

export interface RemovedWorktree {
  readonly path: string;
  readonly branch: string | null;
  readonly head: string | null;
  readonly branchDeleted: boolean;
}

/**
 * Remove a Loom-managed worktree (folder and git's record of it). Refuses
 * a worktree outside `managedDir`, and, without `force`, one with modified
 * or untracked files, listing them. Checkpoint refs of its scopes stay.
 */
export async function removeWorktree(input: RemoveWorktreeInput): Promise<RemovedWorktree> {
  const target = await realpath(input.worktreePath).catch(() => resolve(input.worktreePath));
  const repo = await openWorkingTree(input.repoPath);
  const managed = await listManagedWorktrees(repo.root, input.managedDir);
  const entry = managed.find((worktree) => worktree.path === target);
  if (!entry) {
    const known = (await listGitWorktrees(repo.root)).some((worktree) => worktree.path === target);
    throw known
      ? new WorkspaceError(WorkspaceErrorCode.notManaged, `${target} is not inside the Loom-managed folder ${input.managedDir}`)
      : new WorkspaceError(WorkspaceErrorCode.pathNotFound, `${target} is not a worktree of ${repo.root}`);
  }
  const force = input.force ?? false;
  if (!force && !entry.prunable) {
    const dirty = await dirtyFiles(entry.path);
    if (dirty.length > 0) {
      throw new WorkspaceError(WorkspaceErrorCode.worktreeDirty, `${entry.path} has modified or untracked files: ${dirty.join(", ")}`, { files: dirty });
    }
  }
  // A locked worktree needs --force twice, as with `git worktree remove`.
  const forceArgs = force ? ["--force", "--force"] : [];
  await git(["worktree", "remove", ...forceArgs, entry.path], { cwd: repo.root });
  const branchDeleted = input.deleteBranch === true && (await deleteBranch(repo.root, entry));
  return { path: entry.path, branch: entry.branch, head: entry.head, branchDeleted };
}

export interface PruneWorktreesInput {
  readonly repoPath: string;
  readonly managedDir: string;
  /** Also delete the branches of pruned worktrees (only those still at the worktree's last commit). */
  readonly deleteBranches?: boolean;
}

/**
 * Forget Loom-managed worktrees whose folder is gone (git marks them
 * prunable). Locked ones and worktrees outside `managedDir` are left alone,
 * unlike `git worktree prune`, which prunes every stale entry.
 */
export async function pruneWorktrees(input: PruneWorktreesInput): Promise<ManagedWorktree[]> {
  const repo = await openWorkingTree(input.repoPath);
  const stale = (await listManagedWorktrees(repo.root, input.managedDir)).filter((worktree) => worktree.prunable && !worktree.locked);
  for (const worktree of stale) {
    await git(["worktree", "remove", worktree.path], { cwd: repo.root });
    if (input.deleteBranches) await deleteBranch(repo.root, worktree);
  }
  return stale;
}

/** Modified, staged or untracked (not ignored) files of a worktree, as `git status` lists them. */
export async function dirtyFiles(worktreePath: string): Promise<string[]> {
  const result = await git(["status", "--porcelain=v1", "-z", "--untracked-files=all"], { cwd: worktreePath });
  const fields = splitNul(result.stdout);
  const files: string[] = [];
  for (let i = 0; i < fields.length; i += 1) {
    const entry = fields[i]!;
    files.push(entry.slice(3));
    // A staged rename or copy entry is followed by its source path, which the change touches too.
    if (entry[0] === "R" || entry[0] === "C") {
      i += 1;
      if (fields[i] !== undefined) files.push(fields[i]!);
    }
  }
  return files.sort();
}

async function deleteBranch(cwd: string, worktree: ManagedWorktree): Promise<boolean> {
  if (worktree.branch === null || worktree.head === null) return false;
  // Best effort: the worktree is already gone, so a branch that moved or is locked is kept and reported as kept.
  return deleteRefIfAt(cwd, worktree.branch, worktree.head, "loom: worktree removed").catch(() => false);
}
