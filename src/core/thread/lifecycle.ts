import type { ThreadArchiveCommand, ThreadCreateCommand } from "../../contracts/commands/threadCommands.js";
import { threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { type DecideContext, type Decision, accept, reject } from "../decision.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "./guards.js";

export function decideThreadCreate(state: OrchestrationState, command: ThreadCreateCommand, ctx: DecideContext): Decision {
  const data = command.data;
  const id = data.threadId ?? ctx.allocate.thread();
  if (state.threads.has(id)) {
    return reject("thread_already_exists", `thread ${id} already exists`);
  }
  const thread: AppThread = {
    id,
    projectId: data.projectId,
    title: data.title ?? "New thread",
    titleRegenerating: false,
    providerInstanceId: data.modelSelection?.providerInstanceId ?? null,
    modelSelection: data.modelSelection ?? null,
    runtimeMode: data.runtimeMode ?? "full-access",
    interactionMode: data.interactionMode ?? "default",
    worktreePath: data.worktreePath ?? null,
    branch: data.branch ?? null,
    pullRequests: [],
    lineage: { rootThreadId: id, parentThreadId: null, parentNodeId: null, relation: "root" },
    queuedRuns: [],
    createdBy: data.createdBy ?? "user",
    creationSource: data.creationSource ?? "api",
    createdAt: ctx.now,
    updatedAt: ctx.now,
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
  };
  return accept([threadEvent("thread.created", thread)]);
}

export function decideThreadArchive(state: OrchestrationState, command: ThreadArchiveCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (thread.archivedAt !== null) {
    return reject("thread_already_archived", `thread ${thread.id} is already archived`);
  }
  return accept([threadEvent("thread.archived", { ...thread, archivedAt: ctx.now, updatedAt: ctx.now })]);
}
