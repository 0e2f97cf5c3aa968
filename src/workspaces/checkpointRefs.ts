import { git, splitNul } from "./git.js";
import { assertOrdinal, assertScopeId, checkpointRef, checkpointScopePrefix } from "./refNames.js";

/** One checkpoint ref of a scope, as stored in the repository. */
export interface CheckpointRecord {
  readonly ordinal: number;
  readonly ref: string;
  readonly commit: string;
  readonly tree: string;
  /** First parent: the previous checkpoint of the scope (or the HEAD the first one was taken on). */
  readonly parents: readonly string[];
}

/** Every checkpoint ref of a scope, by ordinal. `cwd` is any path in the repository. */
export async function listCheckpointRecords(cwd: string, scopeId: string): Promise<CheckpointRecord[]> {
  const prefix = checkpointScopePrefix(scopeId);
  const format = "%(refname)%00%(objectname)%00%(tree)%00%(parent)%00";
  const result = await git(["for-each-ref", `--format=${format}`, prefix], { cwd });
  const fields = splitNul(result.stdout.toString("utf8").replace(/\n/g, ""));
  const records: CheckpointRecord[] = [];
  for (let i = 0; i + 3 < fields.length; i += 4) {
    const ref = fields[i]!;
    const ordinal = Number(ref.slice(prefix.length));
    if (!Number.isSafeInteger(ordinal) || ordinal < 0 || String(ordinal) !== ref.slice(prefix.length)) continue;
    const parents = fields[i + 3]!.split(" ").filter((parent) => parent.length > 0);
    records.push({ ordinal, ref, commit: fields[i + 1]!, tree: fields[i + 2]!, parents });
  }
  return records.sort((a, b) => a.ordinal - b.ordinal);
}

/** The checkpoint with the highest ordinal below `ordinal`, or null. */
export function previousRecord<T extends { readonly ordinal: number }>(records: readonly T[], ordinal: number): T | null {
  let found: T | null = null;
  for (const record of records) if (record.ordinal < ordinal) found = record;
  return found;
}

/** Whether checkpoint `ordinal` of the scope still has its ref (spec status `ready`) or lost it (`missing`). */
export async function checkpointExists(cwd: string, scopeId: string, ordinal: number): Promise<boolean> {
  const result = await git(["show-ref", "--verify", "--quiet", checkpointRef(scopeId, ordinal)], { cwd, okCodes: [0, 1] });
  return result.code === 0;
}

/**
 * Delete every checkpoint ref of a scope (when its thread is deleted). The
 * commits stay until git's garbage collection finds them unreachable.
 * Returns how many refs were deleted.
 */
export async function deleteCheckpointRefs(cwd: string, scopeId: string): Promise<number> {
  assertScopeId(scopeId);
  const records = await listCheckpointRecords(cwd, scopeId);
  if (records.length === 0) return 0;
  const input = records.map((record) => `delete ${record.ref} ${record.commit}\n`).join("");
  await git(["update-ref", "--stdin"], { cwd, input });
  return records.length;
}

/** The full message of the commit a ref names (a checkpoint's message says which capture wrote it). */
export async function commitMessage(cwd: string, ref: string): Promise<string> {
  const result = await git(["cat-file", "commit", ref], { cwd });
  const text = result.stdout.toString("utf8");
  const body = text.indexOf("\n\n");
  return body < 0 ? "" : text.slice(body + 2);
}

export function assertCheckpointAddress(scopeId: string, ordinal: number): void {
  assertScopeId(scopeId);
  assertOrdinal(ordinal);
}
