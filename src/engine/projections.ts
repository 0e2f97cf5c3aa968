import type { AppThread } from "../contracts/thread.js";
import type { OrchestrationState } from "../core/state.js";

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
