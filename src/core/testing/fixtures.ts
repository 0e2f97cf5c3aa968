import type { CommandOf, CommandType } from "../../contracts/commands.js";
import { type ThreadEvent, threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";

/** When fixture threads were created: an hour before TEST_NOW. */
export const CREATED_AT = "2026-03-01T11:00:00.000Z";

/** A live, unarchived, unsettled, unpinned root thread; override what the test is about. */
export function aThread(overrides: Partial<AppThread> & { id: string }): AppThread {
  const id = overrides.id;
  return {
    projectId: "project:1",
    title: `Thread ${id}`,
    titleRegenerating: false,
    providerInstanceId: null,
    modelSelection: null,
    runtimeMode: "full-access",
    interactionMode: "default",
    worktreePath: null,
    branch: null,
    pullRequests: [],
    lineage: { rootThreadId: id, parentThreadId: null, parentNodeId: null, relation: "root" },
    queuedRuns: [],
    createdBy: "user",
    creationSource: "api",
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    archivedAt: null,
    deletedAt: null,
    settledAt: null,
    autoSettle: true,
    snoozedUntil: null,
    snoozedAt: null,
    pinnedRank: null,
    activeRank: null,
    lastVisitedAt: null,
    markedUnreadAt: null,
    pendingBackgroundTasks: [],
    ...overrides,
  };
}

/**
 * A history event that puts `thread` in the state as is. Thread events are
 * upserts, so one thread.created carrying e.g. archivedAt stands for the
 * whole history that led there.
 */
export function existing(thread: AppThread): ThreadEvent {
  return threadEvent("thread.created", thread);
}

let commandCounter = 0;
/** A command of `type` with a fresh commandId; `data` is checked against that command's shape. */
export function cmd<T extends CommandType>(type: T, data: CommandOf<T>["data"]): CommandOf<T> {
  commandCounter += 1;
  return { type, commandId: `command:${commandCounter}`, data } as CommandOf<T>;
}
