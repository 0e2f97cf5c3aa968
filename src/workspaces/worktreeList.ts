import { readFile, readdir, realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { git, splitNul } from "./git.js";

/**
 * The worktrees git knows for a repository (`git worktree list --porcelain
 * -z`), and which of them live in a Loom-managed folder. Paths are real
 * paths whenever the folder still exists, so callers can compare them with
 * a thread's recorded worktree path (a `worktreeThreadIds` lookup).
 */

export interface GitWorktree {
  /** Real path when the folder exists, else the path git recorded. */
  readonly path: string;
  /** The checked-out commit, or null (bare entry, unborn branch). */
  readonly head: string | null;
  /** Full branch ref (`refs/heads/...`), or null when detached. */
  readonly branch: string | null;
  readonly main: boolean;
  readonly locked: boolean;
  /** The folder is gone (or its link broke); `pruneWorktrees` removes the entry. */
  readonly prunable: boolean;
}

export interface ManagedWorktree extends GitWorktree {
  /** The thread the worktree was created for (from Loom's metadata in the worktree's git dir), if known. */
  readonly threadId: string | null;
}

/** File in a worktree's private git dir (never in its checkout) recording why Loom made it. */
export const WORKTREE_METADATA_FILE = "loom-worktree.json";

export interface WorktreeMetadata {
  readonly threadId: string;
  readonly branch: string;
  readonly baseCommit: string;
  readonly createdAt: string;
}

export async function listGitWorktrees(repoPath: string): Promise<GitWorktree[]> {
  const result = await git(["worktree", "list", "--porcelain", "-z"], { cwd: repoPath });
  const worktrees: GitWorktree[] = [];
  let current: { path: string; head: string | null; branch: string | null; locked: boolean; prunable: boolean; bare: boolean } | null = null;
  let records = 0;
  const flush = async () => {
    // git lists the main worktree (or the bare repository itself) first.
    if (current && !current.bare) {
      const path = await realpath(current.path).catch(() => current!.path);
      worktrees.push({ path, head: current.head, branch: current.branch, main: records === 0, locked: current.locked, prunable: current.prunable });
    }
    if (current) records += 1;
    current = null;
  };
  for (const line of splitNul(result.stdout)) {
    if (line === "") {
      await flush();
      continue;
    }
    const space = line.indexOf(" ");
    const key = space < 0 ? line : line.slice(0, space);
    const value = space < 0 ? "" : line.slice(space + 1);
    if (key === "worktree") current = { path: value, head: null, branch: null, locked: false, prunable: false, bare: false };
    else if (!current) continue;
    else if (key === "HEAD") current.head = /^0+$/.test(value) ? null : value;
    else if (key === "branch") current.branch = value;
    else if (key === "locked") current.locked = true;
    else if (key === "prunable") current.prunable = true;
    else if (key === "bare") current.bare = true;
  }
  await flush();
  return worktrees;
}

/** Worktrees of the repository whose folder is inside `managedDir`. */
export async function listManagedWorktrees(repoPath: string, managedDir: string): Promise<ManagedWorktree[]> {
  const root = await realpath(managedDir).catch(() => resolve(managedDir));
  const all = await listGitWorktrees(repoPath);
  const managed = all.filter((worktree) => !worktree.main && isInside(root, worktree.path));
  let adminDirs: Promise<Map<string, string>> | null = null;
  return Promise.all(
    managed.map(async (worktree) => {
      let metadata = await readWorktreeMetadata(worktree.path);
      if (metadata === null && worktree.prunable) {
        // The folder is gone, and with it the `.git` file naming the worktree's git dir: find that dir by its back link.
        adminDirs ??= worktreeAdminDirs(repoPath);
        const adminDir = (await adminDirs).get(worktree.path);
        metadata = adminDir === undefined ? null : await readMetadataFile(adminDir);
      }
      return { ...worktree, threadId: metadata?.threadId ?? null };
    }),
  );
}

/** Each linked worktree's git dir (`<common dir>/worktrees/<name>`), by the worktree path its `gitdir` file points back to. */
async function worktreeAdminDirs(repoPath: string): Promise<Map<string, string>> {
  const dirs = new Map<string, string>();
  const commonDir = resolve(repoPath, (await git(["rev-parse", "--git-common-dir"], { cwd: repoPath })).stdout.toString("utf8").trim());
  const names = await readdir(join(commonDir, "worktrees")).catch(() => [] as string[]);
  for (const name of names) {
    const adminDir = join(commonDir, "worktrees", name);
    const link = await readFile(join(adminDir, "gitdir"), "utf8").catch(() => null);
    if (link !== null) dirs.set(dirname(resolve(adminDir, link.trim())), adminDir);
  }
  return dirs;
}

/** Loom's metadata for a worktree folder, or null (not made by Loom, folder gone, unreadable). */
export async function readWorktreeMetadata(worktreePath: string): Promise<WorktreeMetadata | null> {
  const gitDir = await worktreeGitDir(worktreePath);
  return gitDir === null ? null : readMetadataFile(gitDir);
}

async function readMetadataFile(gitDir: string): Promise<WorktreeMetadata | null> {
  try {
    const parsed = JSON.parse(await readFile(join(gitDir, WORKTREE_METADATA_FILE), "utf8")) as Partial<WorktreeMetadata>;
    return typeof parsed.threadId === "string" ? (parsed as WorktreeMetadata) : null;
  } catch {
    return null;
  }
}

/** The private git dir of a linked worktree, read from its `.git` file ("gitdir: <path>"). */
export async function worktreeGitDir(worktreePath: string): Promise<string | null> {
  const link = await readFile(join(worktreePath, ".git"), "utf8").catch(() => null);
  const match = link === null ? null : /^gitdir: (.+)$/m.exec(link);
  return match?.[1] ? resolve(worktreePath, match[1].trim()) : null;
}

/** Whether `path` is strictly inside `root` (both absolute). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel.length > 0 && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}
