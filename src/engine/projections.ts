import type { AppThread } from "../contracts/thread.js";
import type { OrchestrationState } from "../core/state.js";
import { ALL_PROJECTS, type ThreadIndex, ThreadListKind } from "./threadIndex.js";

/** One row of the thread list (spec 004 §3.3 shell snapshot). */
export interface ThreadShell {
  readonly id: string;
  readonly projectId: string;
  readonly title: string;
  readonly providerInstanceId: string | null;
  readonly model: string | null;
  readonly runtimeMode: AppThread["runtimeMode"];
  readonly interactionMode: AppThread["interactionMode"];
  readonly relation: AppThread["lineage"]["relation"];
  readonly parentThreadId: string | null;
  readonly archived: boolean;
  readonly settled: boolean;
  readonly snoozedUntil: string | null;
  readonly pinnedRank: number | null;
  readonly activeRank: number | null;
  readonly unread: boolean;
  readonly pullRequests: AppThread["pullRequests"];
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface ShellSnapshot {
  /** The log position the snapshot reflects. */
  readonly snapshotSequence: number;
  readonly threads: readonly ThreadShell[];
}

/** One page of the shell snapshot: pinned threads first by rank, then the rest newest first. */
export interface ShellSnapshotPage extends ShellSnapshot {
  /** Pass as `cursor` for the next page; null on the last page. */
  readonly nextCursor: string | null;
  /** Threads in the whole list (pinned ones included) at snapshotSequence. */
  readonly total: number;
}

export const SHELL_PAGE_DEFAULT_LIMIT = 100;
export const SHELL_PAGE_MAX_LIMIT = 1_000;

export interface ShellPageOptions {
  readonly includeArchived?: boolean;
  readonly cursor?: string;
  readonly limit?: number;
}

/** Where a page ends: after a pinned thread (by rank and id), or before a thread of the newest-first rest. */
type ShellCursor = { readonly phase: "pinned"; readonly rank: number; readonly id: string } | { readonly phase: "rest"; readonly key: string };

export class ShellCursorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ShellCursorError";
  }
}

/** A rest-phase key greater than every sort key: start at the newest thread. */
const REST_START = "\uffff";

function encodeCursor(cursor: ShellCursor): string {
  return Buffer.from(JSON.stringify(cursor), "utf8").toString("base64url");
}

function decodeCursor(text: string): ShellCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw new ShellCursorError("cursor is not one this server handed out");
  }
  const c = value as Partial<Record<string, unknown>> | null;
  if (c?.phase === "pinned" && typeof c.rank === "number" && typeof c.id === "string") return { phase: "pinned", rank: c.rank, id: c.id };
  if (c?.phase === "rest" && typeof c.key === "string") return { phase: "rest", key: c.key };
  throw new ShellCursorError("cursor is not one this server handed out");
}

/**
 * One bounded page of the shell snapshot, read from the thread index: the
 * cost is about the page's size (plus the pinned threads), not the number of
 * threads. Every page reports the log position it reflects.
 */
export function shellSnapshotPage(state: OrchestrationState, index: ThreadIndex, options: ShellPageOptions): ShellSnapshotPage {
  const limit = options.limit ?? SHELL_PAGE_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > SHELL_PAGE_MAX_LIMIT) throw new ShellCursorError(`limit must be a whole number from 1 to ${SHELL_PAGE_MAX_LIMIT}`);
  const cursor = options.cursor === undefined ? null : decodeCursor(options.cursor);
  const includeArchived = options.includeArchived === true;
  const list = includeArchived ? index.list(ALL_PROJECTS, ThreadListKind.all) : index.unarchived;
  const page: ThreadShell[] = [];
  let next: ShellCursor | null = null;

  const pinned = [...index.pinned]
    .map((id) => state.threads.get(id)!)
    .filter((thread) => includeArchived || thread.archivedAt === null)
    .sort((a, b) => a.pinnedRank! - b.pinnedRank! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  if (cursor === null || cursor.phase === "pinned") {
    for (const thread of pinned) {
      if (cursor !== null && (thread.pinnedRank! < cursor.rank || (thread.pinnedRank === cursor.rank && thread.id <= cursor.id))) continue;
      if (page.length === limit) {
        next = { phase: "pinned", rank: page[page.length - 1]!.pinnedRank!, id: page[page.length - 1]!.id };
        break;
      }
      page.push(toShell(thread));
    }
  }
  if (next === null) {
    const pinnedIds = index.pinned;
    // Past every key: a page that ended on a pinned thread resumes at the newest of the rest.
    let lastRestKey = cursor?.phase === "rest" ? cursor.key : REST_START;
    for (const { key, id } of list.newestFirst(lastRestKey === REST_START ? null : lastRestKey)) {
      if (pinnedIds.has(id)) continue;
      if (page.length === limit) {
        next = { phase: "rest", key: lastRestKey };
        break;
      }
      page.push(toShell(state.threads.get(id)!));
      lastRestKey = key;
    }
  }
  return { snapshotSequence: state.lastSequence, threads: page, nextCursor: next === null ? null : encodeCursor(next), total: list.size };
}

export interface ThreadSnapshot {
  readonly snapshotSequence: number;
  readonly thread: AppThread;
}

export function toShell(thread: AppThread): ThreadShell {
  return {
    id: thread.id,
    projectId: thread.projectId,
    title: thread.title,
    providerInstanceId: thread.providerInstanceId,
    model: thread.modelSelection?.model ?? null,
    runtimeMode: thread.runtimeMode,
    interactionMode: thread.interactionMode,
    relation: thread.lineage.relation,
    parentThreadId: thread.lineage.parentThreadId,
    archived: thread.archivedAt !== null,
    settled: thread.settledAt !== null,
    snoozedUntil: thread.snoozedUntil,
    pinnedRank: thread.pinnedRank,
    activeRank: thread.activeRank,
    unread: isUnread(thread),
    pullRequests: thread.pullRequests,
    createdAt: thread.createdAt,
    updatedAt: thread.updatedAt,
  };
}

function isUnread(thread: AppThread): boolean {
  if (thread.markedUnreadAt !== null) return true;
  return thread.lastVisitedAt === null ? false : thread.updatedAt > thread.lastVisitedAt;
}

/** Pinned threads first by rank, then the rest newest first. Deleted threads never appear. */
export function compareShells(a: ThreadShell, b: ThreadShell): number {
  if (a.pinnedRank !== null || b.pinnedRank !== null) {
    if (a.pinnedRank === null) return 1;
    if (b.pinnedRank === null) return -1;
    return a.pinnedRank - b.pinnedRank;
  }
  return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1;
}

export function shellSnapshot(state: OrchestrationState, options: { includeArchived?: boolean }): ShellSnapshot {
  const threads: ThreadShell[] = [];
  for (const thread of state.threads.values()) {
    if (thread.deletedAt !== null) continue;
    if (thread.archivedAt !== null && options.includeArchived !== true) continue;
    threads.push(toShell(thread));
  }
  threads.sort(compareShells);
  return { snapshotSequence: state.lastSequence, threads };
}

export function threadSnapshot(state: OrchestrationState, threadId: string): ThreadSnapshot | null {
  const thread = state.threads.get(threadId);
  if (thread === undefined || thread.deletedAt !== null) return null;
  return { snapshotSequence: state.lastSequence, thread };
}
