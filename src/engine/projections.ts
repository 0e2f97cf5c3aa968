import { type Run, type RunStatus, isTerminalRunStatus } from "../contracts/entities/runs.js";
import type { AppThread } from "../contracts/thread.js";
import type { ShellSnapshot, ShellWorkflow, ThreadShell, ThreadSnapshot } from "../contracts/wire/projections.js";
import type { OrchestrationState } from "../core/state.js";
import { ALL_PROJECTS, type ThreadIndex, ThreadListKind } from "./threadIndex.js";
import { currentRunOf, isInRecordedWait } from "./queries.js";
import { shellWorkflowOf } from "./shellWorkflows.js";

export type { ShellSnapshot, ThreadShell, ThreadSnapshot } from "../contracts/wire/projections.js";

/** Which threads a shell lists. */
export interface ShellOptions {
  /** Archived threads too (the default shell lists only unarchived ones). */
  readonly includeArchived?: boolean;
  /** Only archived threads (the archived shell). */
  readonly archivedOnly?: boolean;
  /** Leave out subagent threads with no run in flight (spec 004 §3.3 `omitIdleSubagents`). */
  readonly omitIdleSubagents?: boolean;
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

export interface ShellPageOptions extends Omit<ShellOptions, "archivedOnly"> {
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
export function shellSnapshotPage(state: OrchestrationState, index: Pick<ThreadIndex, "list" | "unarchived" | "pinned">, options: ShellPageOptions): ShellSnapshotPage {
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
      const row = shellRowOf(state, thread, options);
      if (row !== null) page.push(row);
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
      const row = shellRowOf(state, state.threads.get(id)!, options);
      if (row !== null) page.push(row);
      lastRestKey = key;
    }
  }
  return { snapshotSequence: state.lastSequence, threads: page, nextCursor: next === null ? null : encodeCursor(next), total: list.size };
}

/** A thread's shell row; `latestRun` gives its badge and, with the thread, whether it is unread. */
export function toShell(thread: AppThread, latestRun: Pick<Run, "status" | "updatedAt"> | null = null, inWait = false, workflow: ShellWorkflow | null = null): ThreadShell {
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
    unread: isUnread(thread, latestRun),
    pullRequests: thread.pullRequests,
    runStatus: latestRun?.status ?? null,
    inWait,
    workflow,
    createdAt: thread.createdAt,
    updatedAt: thread.updatedAt,
  };
}

/** Run statuses a reader has not seen if they came after the last visit: an end, or a wait on a person. */
const NOTEWORTHY: ReadonlySet<RunStatus> = new Set<RunStatus>(["completed", "failed", "interrupted", "cancelled", "waiting_on_approval", "waiting_on_user_input"]);

/**
 * Marked unread, or its latest run ended or started waiting on a person
 * after the last visit (a thread never visited is not unread). Organizing a
 * thread (pinning, reordering, snoozing, renaming) leaves it read.
 */
export function isUnread(thread: AppThread, latestRun: Pick<Run, "status" | "updatedAt"> | null): boolean {
  if (thread.markedUnreadAt !== null) return true;
  if (thread.lastVisitedAt === null) return false;
  return latestRun !== null && NOTEWORTHY.has(latestRun.status) && latestRun.updatedAt > thread.lastVisitedAt;
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

/** The thread's row as the shell with these options shows it, or null when the shell leaves it out. */
export function shellRowOf(state: OrchestrationState, thread: AppThread, options: ShellOptions): ThreadShell | null {
  if (thread.deletedAt !== null) return null;
  const archived = thread.archivedAt !== null;
  if (options.archivedOnly === true ? !archived : archived && options.includeArchived !== true) return null;
  const latestRun = currentRunOf(state, thread.id);
  if (options.omitIdleSubagents === true && thread.lineage.relation === "subagent" && (latestRun === null || isTerminalRunStatus(latestRun.status))) return null;
  return toShell(thread, latestRun, isInRecordedWait(state, thread.id), shellWorkflowOf(state, thread.id));
}

export function shellSnapshot(state: OrchestrationState, options: ShellOptions): ShellSnapshot {
  const threads: ThreadShell[] = [];
  for (const thread of state.threads.values()) {
    const row = shellRowOf(state, thread, options);
    if (row !== null) threads.push(row);
  }
  threads.sort(compareShells);
  return { snapshotSequence: state.lastSequence, threads };
}

export function threadSnapshot(state: OrchestrationState, threadId: string): ThreadSnapshot | null {
  const thread = state.threads.get(threadId);
  if (thread === undefined || thread.deletedAt !== null) return null;
  return { snapshotSequence: state.lastSequence, thread };
}
