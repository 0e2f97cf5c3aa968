import { createHash } from "node:crypto";
import { WorkspaceError, WorkspaceErrorCode } from "./errors.js";

/**
 * Names Loom gives to git refs and folders. Pure functions: every result is
 * a valid git ref component (git check-ref-format rules) by construction.
 */

/** Where checkpoint refs live: refs/loom/checkpoints/<encoded scope>/<ordinal>. */
export const CHECKPOINT_REF_PREFIX = "refs/loom/checkpoints/";

/** Longest slug kept from a thread id; the rest is cut (a suffix tells collisions apart). */
const MAX_SLUG_LENGTH = 64;

/**
 * A readable, valid branch/folder component from a thread id:
 * `thread:1f2e…` becomes `thread-1f2e…`. Characters outside [A-Za-z0-9._-]
 * become `-`, runs of `-` and `.` collapse, no leading `.`/`-`, no trailing
 * `.`/`-`, no `.lock` ending. Different ids can share a slug; the worktree
 * code adds `-2`, `-3`, ... when the name is taken.
 */
export function slugFromThreadId(threadId: string): string {
  let slug = threadId
    .normalize("NFKD")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/\.{2,}/g, ".")
    .replace(/^[.-]+/, "")
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/[.-]+$/, "");
  if (slug.toLowerCase().endsWith(".lock")) slug = `${slug.slice(0, -".lock".length)}-lock`;
  return slug.length > 0 ? slug : "thread";
}

/** Longest part of a title kept in a branch name. */
const MAX_TITLE_SLUG_LENGTH = 40;

/**
 * A worktree's branch/folder component a person can read: the slug of the
 * thread's title, lower case, then a short stable handle of its id
 * (`Fix the login page` → `fix-the-login-page-3f9a1c2e`), so two threads of
 * the same title still differ. Without a usable title, the id's slug.
 */
export function worktreeSlug(title: string | undefined, threadId: string): string {
  const titled = title === undefined ? "" : slugFromThreadId(title).toLowerCase().slice(0, MAX_TITLE_SLUG_LENGTH).replace(/[.-]+$/, "");
  if (titled === "" || titled === "thread") return slugFromThreadId(threadId);
  return `${titled}-${createHash("sha256").update(threadId).digest("hex").slice(0, 8)}`;
}

/** The slug with its collision suffix: attempt 1 is the bare slug, then `slug-2`, `slug-3`, ... */
export function suffixedSlug(slug: string, attempt: number): string {
  return attempt <= 1 ? slug : `${slug}-${attempt}`;
}

/**
 * A scope id as one ref component, reversibly: [A-Za-z0-9_-] stay, every
 * other UTF-8 byte becomes `%XX`. `checkpointScope:abc` → `checkpointScope%3Aabc`.
 * Reversible, so two scopes never share a ref folder.
 */
export function encodeScopeId(scopeId: string): string {
  assertScopeId(scopeId);
  let out = "";
  for (const byte of Buffer.from(scopeId, "utf8")) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9_-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export function decodeScopeId(encoded: string): string {
  return decodeURIComponent(encoded);
}

/** refs/loom/checkpoints/<encoded scope>/ — the folder of one scope's refs. */
export function checkpointScopePrefix(scopeId: string): string {
  return `${CHECKPOINT_REF_PREFIX}${encodeScopeId(scopeId)}/`;
}

/** The ref of checkpoint `ordinal` of `scopeId`. */
export function checkpointRef(scopeId: string, ordinal: number): string {
  assertOrdinal(ordinal);
  return `${checkpointScopePrefix(scopeId)}${ordinal}`;
}

export function assertScopeId(scopeId: string): void {
  if (scopeId.length === 0) throw new WorkspaceError(WorkspaceErrorCode.invalidInput, "the checkpoint scope id is empty");
}

export function assertOrdinal(ordinal: number): void {
  if (!Number.isSafeInteger(ordinal) || ordinal < 0) {
    throw new WorkspaceError(WorkspaceErrorCode.invalidInput, `a checkpoint ordinal is a non-negative integer, got ${ordinal}`);
  }
}
