import { git, gitFailure, gitText } from "./git.js";

/** Who Loom's own commits (checkpoints, merges, child commits) are by, unless the caller names someone. */
export interface CommitIdentity {
  readonly name: string;
  readonly email: string;
}

export const LOOM_IDENTITY: CommitIdentity = { name: "Loom", email: "loom@localhost" };

export interface CommitTreeInput {
  readonly cwd: string;
  readonly tree: string;
  readonly parents: readonly string[];
  readonly message: string;
  readonly identity?: CommitIdentity;
  /** Author and committer time; defaults to now. */
  readonly at?: Date;
}

/**
 * Write a commit object (`git commit-tree`) without moving any ref. The
 * identity and date come from the environment, so it works in a repository
 * with no user.name configured and never runs hooks.
 */
export async function commitTree(input: CommitTreeInput): Promise<string> {
  const identity = input.identity ?? LOOM_IDENTITY;
  const date = `${Math.floor((input.at ?? new Date()).getTime() / 1000)} +0000`;
  const env = {
    GIT_AUTHOR_NAME: identity.name,
    GIT_AUTHOR_EMAIL: identity.email,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: identity.name,
    GIT_COMMITTER_EMAIL: identity.email,
    GIT_COMMITTER_DATE: date,
  };
  const parents = input.parents.flatMap((parent) => ["-p", parent]);
  // The message goes through stdin (-F -) so no text is ever read as an option.
  return gitText(["commit-tree", input.tree, ...parents, "-F", "-"], { cwd: input.cwd, env, input: input.message });
}

/** The empty tree's id in this repository's hash (SHA-1 or SHA-256), computed without writing it. */
export async function emptyTree(cwd: string): Promise<string> {
  return gitText(["hash-object", "-t", "tree", "--stdin"], { cwd, input: "" });
}

/** The tree of a commit-ish. */
export async function treeOf(cwd: string, commitish: string): Promise<string> {
  return gitText(["rev-parse", "--verify", "--end-of-options", `${commitish}^{tree}`], { cwd });
}

/** Point `ref` at `commit` only if it currently holds `expected` ("" = must not exist). False when it does not. */
export async function compareAndSwapRef(cwd: string, ref: string, commit: string, expected: string, reason: string): Promise<boolean> {
  const args = ["update-ref", "-m", reason, ref, commit, expected];
  const result = await git(args, { cwd, okCodes: [0, 128] });
  if (result.code === 0) return true;
  if (/reference already exists|but expected|unable to resolve reference/i.test(result.stderr)) return false;
  throw gitFailure(args, result);
}

/** Delete `ref` only if it still holds `expected`. False when it moved or is already gone. */
export async function deleteRefIfAt(cwd: string, ref: string, expected: string, reason: string): Promise<boolean> {
  const args = ["update-ref", "-m", reason, "-d", ref, expected];
  const result = await git(args, { cwd, okCodes: [0, 1, 128] });
  if (result.code === 0) return true;
  if (/but expected|unable to resolve reference|does not exist/i.test(result.stderr)) return false;
  throw gitFailure(args, result);
}
