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

/**
 * What every new thread starts with, whoever creates it (a client, the
 * scheduler, a delegation, a fork): created now, nothing queued or linked,
 * never archived, settled, snoozed, pinned, ranked or visited.
 */
export function freshThreadFields(now: string): Pick<AppThread, FreshFields> {
  return {
    titleRegenerating: false,
    pullRequests: [],
    queuedRuns: [],
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
    deletedAt: null,
    settledAt: null,
    snoozedUntil: null,
    snoozedAt: null,
    pinnedRank: null,
    activeRank: null,
    lastVisitedAt: null,
    markedUnreadAt: null,
    pendingBackgroundTasks: [],
  };
}
