import { type Stats, statSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";
import { git, gitFailure } from "./git.js";

/** Where a working tree lives and what it is on: the answer of one `git rev-parse`. */
export interface WorkingTree {
  /** Real (symlink-free) path of the working tree's top folder. */
  readonly root: string;
  /** Absolute git dir of this working tree (its own index and HEAD live here). */
  readonly gitDir: string;
  /** Absolute common git dir (refs and objects shared by every worktree of the repository). */
  readonly commonDir: string;
  /** The commit HEAD points at, or null in a repository with no commit yet. */
  readonly head: string | null;
  /** The full branch ref HEAD is on (`refs/heads/...`), or null when detached or unborn. */
  readonly branch: string | null;
}

/** Why a folder has no working tree to snapshot, or null when it has one. */
export type WorkingTreeProbe = { readonly tree: WorkingTree; readonly reason: null } | { readonly tree: null; readonly reason: string };

/** The real path of `path`: what worktree listings and lookups compare. */
export async function canonicalPath(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    throw new WorkspaceError(WorkspaceErrorCode.pathNotFound, `${path} does not exist`, { cause: error });
  }
}

/**
 * Resolve the working tree that contains `path`. A folder that does not
 * exist, is not in a git repository, or is inside a bare repository answers
 * with a reason instead of throwing (a checkpoint of it is `missing`).
 */
export async function probeWorkingTree(path: string): Promise<WorkingTreeProbe> {
  const problem = folderProblem(path);
  if (problem !== null) return { tree: null, reason: problem };
  if (!mayBeInRepository(resolve(path))) return { tree: null, reason: notInRepository(path) };
  const args = ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", "HEAD", "--symbolic-full-name", "HEAD"];
  const result = await git(args, { cwd: path, okCodes: [0, 128] });
  const lines = result.stdout.toString("utf8").split("\n");
  if (result.code !== 0 && lines.length < 4) {
    if (/not a git repository/i.test(result.stderr)) return { tree: null, reason: `${path} is not inside a git repository` };
    if (/must be run in a work tree/i.test(result.stderr)) return { tree: null, reason: `${path} is not in a working tree (a bare repository or a git dir)` };
    throw gitFailure(args, result);
  }
  // --symbolic-full-name only applies to the revisions after it: the first HEAD prints as a commit.
  const [top, gitDir, commonDir, head, symbolic] = lines;
  if (!top || !gitDir || !commonDir) throw gitFailure(args, result);
  const unborn = result.code !== 0;
  return {
    reason: null,
    tree: {
      root: await realpath(top),
      gitDir,
      commonDir: resolve(path, commonDir),
      head: unborn || !head ? null : head,
      branch: unborn || !symbolic?.startsWith("refs/heads/") ? null : symbolic,
    },
  };
}

/** Why `path` cannot hold a working tree at all (missing, or not a folder); null for a folder. */
export function folderProblem(path: string): string | null {
  const info = statOrNull(path);
  if (info === null) return `${path} does not exist`;
  return info.isDirectory() ? null : `${path} is not a directory`;
}

export function notInRepository(path: string): string {
  return `${path} is not inside a git repository`;
}

/**
 * Whether git's discovery could find a repository from `path`: some folder
 * from `path` up to the root holds a `.git` entry or is itself a git dir
 * (HEAD, objects/ and refs/). When none does, git would answer "not a git
 * repository", so the probe says so without starting a process (a turn in a
 * plain folder probes on every capture, and a spawn blocks the event loop
 * for milliseconds while the server is large). Any candidate sends the probe
 * to git, which decides.
 *
 * The walk stats synchronously and without throwing: most candidates are
 * absent, and an asynchronous stat that fails costs the event loop about
 * 15 times a synchronous one (a thread-pool round trip plus an error object
 * with its stack), which a server starting many children pays on every
 * capture (docs/benchmarks.md, fan-out).
 */
export function mayBeInRepository(path: string): boolean {
  const exists = (candidate: string, kind: "any" | "file" | "dir") => {
    const found = statOrNull(candidate);
    if (found === null) return false;
    return kind === "any" || (kind === "file" ? found.isFile() : found.isDirectory());
  };
  for (let dir = path; ; dir = dirname(dir)) {
    if (exists(join(dir, ".git"), "any")) return true;
    if (exists(join(dir, "HEAD"), "file") && exists(join(dir, "objects"), "dir") && exists(join(dir, "refs"), "dir")) return true;
    if (dirname(dir) === dir) return false;
  }
}

/** `path`'s stat, or null when it is absent or cannot be read. */
function statOrNull(path: string): Stats | null {
  try {
    return statSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

/** Resolve the working tree that contains `path`, or throw a typed error saying why there is none. */
export async function openWorkingTree(path: string): Promise<WorkingTree> {
  const probe = await probeWorkingTree(path);
  if (probe.tree !== null) return probe.tree;
  const code = /does not exist|not a directory/.test(probe.reason) ? WorkspaceErrorCode.pathNotFound : WorkspaceErrorCode.notARepository;
  throw new WorkspaceError(code, probe.reason);
}

/** The commit `ref` names, or a typed `refNotFound` error. */
export async function resolveCommit(cwd: string, ref: string): Promise<string> {
  if (ref.length === 0 || ref.startsWith("-")) {
    throw new WorkspaceError(WorkspaceErrorCode.invalidInput, `not a usable ref: ${JSON.stringify(ref)}`);
  }
  const result = await git(["rev-parse", "-q", "--verify", "--end-of-options", `${ref}^{commit}`], { cwd, okCodes: [0, 1, 128] });
  const commit = result.stdout.toString("utf8").trim();
  if (result.code !== 0 || commit.length === 0) {
    throw new WorkspaceError(WorkspaceErrorCode.refNotFound, `${ref} does not name a commit in ${cwd}`);
  }
  return commit;
}

/** Whether a ref exists (`refs/heads/x`, `refs/remotes/origin/x`, ...). */
export async function refExists(cwd: string, ref: string): Promise<boolean> {
  const result = await git(["show-ref", "--verify", "--quiet", ref], { cwd, okCodes: [0, 1] });
  return result.code === 0;
}

/** Whether `ancestor` is reachable from `descendant`. */
export async function isAncestor(cwd: string, ancestor: string, descendant: string): Promise<boolean> {
  const result = await git(["merge-base", "--is-ancestor", ancestor, descendant], { cwd, okCodes: [0, 1] });
  return result.code === 0;
}
