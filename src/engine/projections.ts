import { type RunStatus, isTerminalRunStatus } from "../contracts/entities/runs.js";
import type { AppThread } from "../contracts/thread.js";
import type { ShellSnapshot, ThreadShell, ThreadSnapshot } from "../contracts/wire/projections.js";
import type { OrchestrationState } from "../core/state.js";
import { latestRunOf } from "./queries.js";

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

export function toShell(thread: AppThread, runStatus: RunStatus | null = null): ThreadShell {
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
    runStatus,
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

/** The thread's row as the shell with these options shows it, or null when the shell leaves it out. */
export function shellRowOf(state: OrchestrationState, thread: AppThread, options: ShellOptions): ThreadShell | null {
  if (thread.deletedAt !== null) return null;
  const archived = thread.archivedAt !== null;
  if (options.archivedOnly === true ? !archived : archived && options.includeArchived !== true) return null;
  const runStatus = latestRunOf(state, thread.id)?.status ?? null;
  if (options.omitIdleSubagents === true && thread.lineage.relation === "subagent" && (runStatus === null || isTerminalRunStatus(runStatus))) return null;
  return toShell(thread, runStatus);
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
