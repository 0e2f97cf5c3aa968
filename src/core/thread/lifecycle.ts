import type {
  ThreadArchiveCommand,
  ThreadCreateCommand,
  ThreadDeleteCommand,
  ThreadUnarchiveCommand,
} from "../../contracts/commands/threadCommands.js";
import { EffectKind } from "../../contracts/effects.js";
import { threadEvent } from "../../contracts/events.js";
import { INTERACTION_MODES, type InteractionMode, RUNTIME_MODES, type RuntimeMode } from "../../contracts/modes.js";
import type { AppThread } from "../../contracts/thread.js";
import { type DecideContext, type Decision, accept, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import { Changes } from "../run/changes.js";
import { activeRun, endRun } from "../run/lifecycle.js";
import type { OrchestrationState } from "../state.js";
import { isPreparing } from "../workspace/turns.js";
import { changed, invalidModeRejection, liveThread, validTitle } from "./guards.js";
import { newThreadRecord } from "./fresh.js";

/** Title of a thread created without one. */
export const DEFAULT_THREAD_TITLE = "New thread";

/** Modes of a thread created without them. */
export const NEW_THREAD_MODES: { readonly runtimeMode: RuntimeMode; readonly interactionMode: InteractionMode } = { runtimeMode: "full-access", interactionMode: "default" };

export function decideThreadCreate(state: OrchestrationState, command: ThreadCreateCommand, ctx: DecideContext): Decision {
  const data = command.data;
  const id = data.threadId ?? ctx.allocate.thread();
  const existing = state.threads.get(id);
  if (existing !== undefined) {
    // Ids are never reused, not even after a soft delete.
    return existing.deletedAt !== null
      ? reject(RejectionCode.threadDeleted, `thread ${id} was deleted; its id cannot be reused`)
      : reject(RejectionCode.threadAlreadyExists, `thread ${id} already exists`);
  }
  let title = DEFAULT_THREAD_TITLE;
  if (data.title !== undefined) {
    const valid = validTitle(data.title);
    if (valid.kind === "rejected") return valid;
    title = valid.title;
  }
  const runtimeMode = data.runtimeMode ?? NEW_THREAD_MODES.runtimeMode;
  const interactionMode = data.interactionMode ?? NEW_THREAD_MODES.interactionMode;
  const badMode =
    invalidModeRejection("runtime", runtimeMode, RUNTIME_MODES) ??
    invalidModeRejection("interaction", interactionMode, INTERACTION_MODES);
  if (badMode !== null) return badMode;
  if (data.workspace !== undefined && data.worktreePath !== undefined) {
    return reject(RejectionCode.invalidWorkspace, "a thread gets a worktree of its own (workspace) or an existing worktreePath, not both");
  }
  const thread: AppThread = newThreadRecord(ctx.now, {
    id,
    projectId: data.projectId,
    title,
    providerInstanceId: data.modelSelection?.providerInstanceId ?? null,
    modelSelection: data.modelSelection ?? null,
    runtimeMode,
    interactionMode,
    worktreePath: data.worktreePath ?? null,
    branch: data.branch ?? null,
    lineage: { rootThreadId: id, parentThreadId: null, parentNodeId: null, relation: "root" },
    createdBy: data.createdBy ?? "user",
    creationSource: data.creationSource ?? "api",
    autoSettle: true,
    workspace:
      data.workspace === undefined
        ? undefined
        : {
            strategy: data.workspace.strategy,
            status: "pending" as const,
            repoPath: data.workspace.repoPath,
            baseRef: data.workspace.baseRef ?? null,
            startFromOrigin: data.workspace.startFromOrigin ?? false,
            baseCheckpointId: null,
          },
    structuredOutput: data.outputSchema === undefined ? undefined : { schema: data.outputSchema, status: "pending" as const, repairRunId: null, error: null },
  });
  return accept([threadEvent("thread.created", thread)]);
}

/** Archiving takes the thread out of the pinned and active lists (both ranks cleared). */
export function decideThreadArchive(state: OrchestrationState, command: ThreadArchiveCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (thread.archivedAt !== null) {
    return reject(RejectionCode.threadAlreadyArchived, `thread ${thread.id} is already archived`);
  }
  return accept([threadEvent("thread.archived", changed(thread, ctx, { archivedAt: ctx.now, pinnedRank: null, activeRank: null }))]);
}

/** Unarchiving does not restore a pin or an active rank: the thread comes back unranked. */
export function decideThreadUnarchive(state: OrchestrationState, command: ThreadUnarchiveCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (thread.archivedAt === null) {
    return reject(RejectionCode.threadNotArchived, `thread ${thread.id} is not archived`);
  }
  return accept([threadEvent("thread.unarchived", changed(thread, ctx, { archivedAt: null }))]);
}

/**
 * A soft delete: the record stays (deletedAt set, ranks cleared) so the log
 * and lineage stay whole, but every later command on it is rejected with
 * thread_deleted and lists never show it. A worktree the thread owns is
 * cleaned up (workspace.cleanup: a last checkpoint, then removal). A run
 * still being prepared (its agent not started) ends here, so its setup stops
 * and the cleanup finds no run in the worktree. A thread that had an agent
 * and has no run at work has its agent session released now, and its agent's home (the
 * agent's own conversation, kept for resumes) removed; one still at work
 * finishes, and its idle session is released as usual later.
 */
export function decideThreadDelete(state: OrchestrationState, command: ThreadDeleteCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const changes = new Changes(state, ctx);
  changes.putThread("thread.deleted", changed(thread, ctx, { deletedAt: ctx.now, pinnedRank: null, activeRank: null }));
  const active = activeRun(changes, thread.id);
  if (active !== null && isPreparing(active)) endRun(changes, active, { status: "interrupted", endReason: "thread_deleted" });
  const hadAgent = [...state.providerSessions.values()].some((session) => session.threadId === thread.id);
  if (hadAgent && (active === null || isPreparing(active))) changes.effect(EffectKind.releaseSession, thread.id, { threadId: thread.id, reason: "thread_deleted", message: "released because the thread was deleted" });
  if (thread.workspace?.strategy === "worktree") changes.effect(EffectKind.cleanupWorkspace, thread.id, { threadId: thread.id });
  return changes.done();
}
