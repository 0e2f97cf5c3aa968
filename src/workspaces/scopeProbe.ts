import { resolve } from "node:path";
import { realpath } from "node:fs/promises";
import { listCheckpointRecords } from "./checkpointRefs.js";
import { git } from "./git.js";
import { checkpointScopePrefix } from "./refNames.js";
import { type WorkingTree, folderProblem, mayBeInRepository, notInRepository, probeWorkingTree } from "./repository.js";

/**
 * What a capture needs to know before it commits, in ONE git process: the
 * working tree (top folder, git dirs, HEAD) and the scope's checkpoint refs.
 * `git rev-parse` prints the refs a `--glob` matches as commits before
 * `--symbolic-full-name` and as names after it, in the same order. Any
 * other answer (no repository, no commit yet) falls back to the plain
 * probe and `for-each-ref`.
 */

export interface ScopeRef {
  readonly ordinal: number;
  readonly ref: string;
  readonly commit: string;
}

export type ScopeProbe =
  | { readonly tree: WorkingTree; readonly reason: null; readonly refs: readonly ScopeRef[] }
  | { readonly tree: null; readonly reason: string; readonly refs: readonly ScopeRef[] };

export async function probeScope(path: string, scopeId: string): Promise<ScopeProbe> {
  // A plain folder (or none): the answer says why, without starting git.
  if (!mayBeInRepository(resolve(path))) return { tree: null, reason: folderProblem(path) ?? notInRepository(path), refs: [] };
  const prefix = checkpointScopePrefix(scopeId);
  const glob = `--glob=${prefix}*`;
  const args = ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", glob, "HEAD", "--symbolic-full-name", glob, "HEAD"];
  const result = await git(args, { cwd: path, okCodes: [0, 128] }).catch(() => null);
  const lines = result?.code === 0 ? result.stdout.toString("utf8").split("\n").slice(0, -1) : [];
  const count = (lines.length - 5) / 2;
  if (result?.code !== 0 || !Number.isInteger(count) || count < 0) return slowProbe(path, scopeId);

  const [top, gitDir, commonDir] = lines;
  const commits = lines.slice(3, 3 + count);
  const head = lines[3 + count]!;
  const names = lines.slice(4 + count, 4 + 2 * count);
  const symbolic = lines[4 + 2 * count]!;
  const refs: ScopeRef[] = [];
  for (const [i, ref] of names.entries()) {
    const ordinal = Number(ref.slice(prefix.length));
    if (ref.startsWith(prefix) && Number.isSafeInteger(ordinal) && String(ordinal) === ref.slice(prefix.length)) {
      refs.push({ ordinal, ref, commit: commits[i]! });
    }
  }
  refs.sort((a, b) => a.ordinal - b.ordinal);
  const tree: WorkingTree = {
    root: await realpath(top!),
    gitDir: gitDir!,
    commonDir: resolve(path, commonDir!),
    head,
    branch: symbolic.startsWith("refs/heads/") ? symbolic : null,
  };
  return { tree, reason: null, refs };
}

async function slowProbe(path: string, scopeId: string): Promise<ScopeProbe> {
  const probe = await probeWorkingTree(path);
  if (probe.tree === null) return { ...probe, refs: [] };
  const records = await listCheckpointRecords(probe.tree.root, scopeId);
  return { tree: probe.tree, reason: null, refs: records.map(({ ordinal, ref, commit }) => ({ ordinal, ref, commit })) };
}
