import type { AppThread } from "../../contracts/thread.js";

type FreshFields =
  | "titleRegenerating"
  | "pullRequests"
  | "queuedRuns"
  | "createdAt"
  | "updatedAt"
  | "archivedAt"
  | "deletedAt"
  | "settledAt"
  | "snoozedUntil"
  | "snoozedAt"
  | "pinnedRank"
  | "activeRank"
  | "lastVisitedAt"
  | "markedUnreadAt"
  | "pendingBackgroundTasks";

/** What a thread's creator decides; the rest of a new thread's record is fresh. Optional fields left undefined stay absent. */
export type NewThreadFields = Omit<AppThread, FreshFields>;

/**
 * A new thread's record, whoever creates it (a client, the scheduler, a
 * delegation, a fork): `own` plus what every new thread starts with (created
 * now, nothing queued or linked, never archived, settled, snoozed, pinned,
 * ranked or visited), written out field by field in one order so that every
 * thread record shares one object shape.
 * (Spreading the fresh fields into an object literal cost about 30 µs a
 * thread under load, against well under 1 µs: docs/benchmarks.md.)
 */
export function newThreadRecord(now: string, own: NewThreadFields): AppThread {
  const thread: AppThread = {
    id: own.id,
    projectId: own.projectId,
    title: own.title,
    titleRegenerating: false,
    providerInstanceId: own.providerInstanceId,
    modelSelection: own.modelSelection,
    runtimeMode: own.runtimeMode,
    interactionMode: own.interactionMode,
    worktreePath: own.worktreePath,
    branch: own.branch,
    pullRequests: [],
    lineage: own.lineage,
    queuedRuns: [],
    createdBy: own.createdBy,
    creationSource: own.creationSource,
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
    deletedAt: null,
    settledAt: null,
    autoSettle: own.autoSettle,
    snoozedUntil: null,
    snoozedAt: null,
    pinnedRank: null,
    activeRank: null,
    lastVisitedAt: null,
    markedUnreadAt: null,
    pendingBackgroundTasks: [],
  };
  if (own.workspace !== undefined) thread.workspace = own.workspace;
  if (own.pullRequestWatch !== undefined) thread.pullRequestWatch = own.pullRequestWatch;
  if (own.structuredOutput !== undefined) thread.structuredOutput = own.structuredOutput;
  if (own.budget !== undefined) thread.budget = own.budget;
  return thread;
}
