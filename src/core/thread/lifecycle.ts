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
/**
 * Archiving acts on a subtree: the thread and every live descendant not
 * archived yet (subagents and forks, at any depth) move to the archive in
 * one decision, so no child is left behind as a top-level row.
 */
export function decideThreadArchive(state: OrchestrationState, command: ThreadArchiveCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (thread.archivedAt !== null) {
    return reject(RejectionCode.threadAlreadyArchived, `thread ${thread.id} is already archived`);
  }
  const subtree = [thread, ...liveDescendants(state, thread.id).filter((child) => child.archivedAt === null)];
  return accept(subtree.map((each) => threadEvent("thread.archived", changed(each, ctx, { archivedAt: ctx.now, pinnedRank: null, activeRank: null }))));
}

/**
 * Unarchiving brings the subtree back with it: the thread and every archived
 * live descendant. Neither a pin nor an active rank comes back: the threads
 * return unranked.
 */
export function decideThreadUnarchive(state: OrchestrationState, command: ThreadUnarchiveCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (thread.archivedAt === null) {
    return reject(RejectionCode.threadNotArchived, `thread ${thread.id} is not archived`);
  }
  const subtree = [thread, ...liveDescendants(state, thread.id).filter((child) => child.archivedAt !== null)];
  return accept(subtree.map((each) => threadEvent("thread.unarchived", changed(each, ctx, { archivedAt: null }))));
}

/** Every live thread below `threadId` in its lineage (children, their children, ...), parents before children. */
export function liveDescendants(state: OrchestrationState, threadId: string): AppThread[] {
  const children = new Map<string, AppThread[]>();
  for (const candidate of state.threads.values()) {
    const parent = candidate.lineage.parentThreadId;
    if (parent === null || candidate.deletedAt !== null) continue;
    const list = children.get(parent);
    if (list === undefined) children.set(parent, [candidate]);
    else list.push(candidate);
  }
  const found: AppThread[] = [];
  const seen = new Set([threadId]);
  for (let at = [threadId]; at.length > 0; ) {
    const next: string[] = [];
    for (const id of at) {
      for (const child of children.get(id) ?? []) {
        if (seen.has(child.id)) continue;
        seen.add(child.id);
        found.push(child);
        next.push(child.id);
      }
    }
    at = next;
  }
  return found;
}

/**
 * A soft delete, acting on a subtree as archiving does: the thread and every
 * live descendant (subagents and forks, at any depth) are deleted in one
 * decision, so no child is left behind without its parent. Each record stays
 * (deletedAt set, ranks cleared) so the log and lineage stay whole, but every
 * later command on it is rejected with thread_deleted and lists never show
 * it. For each deleted thread: a worktree it owns is cleaned up
 * (workspace.cleanup: a last checkpoint, then removal); a run still being
 * prepared (its agent not started) ends here, so its setup stops and the
 * cleanup finds no run in the worktree; a thread that had an agent and has no
 * run at work has its agent session released now, and its agent's home (the
 * agent's own conversation, kept for resumes) removed; one still at work
 * finishes, and its idle session is released as usual later.
 */
export function decideThreadDelete(state: OrchestrationState, command: ThreadDeleteCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const changes = new Changes(state, ctx);
  for (const thread of [found.thread, ...liveDescendants(state, found.thread.id)]) deleteOne(state, changes, thread, ctx);
  return changes.done();
}

function deleteOne(state: OrchestrationState, changes: Changes, thread: AppThread, ctx: DecideContext): void {
  changes.putThread("thread.deleted", changed(thread, ctx, { deletedAt: ctx.now, pinnedRank: null, activeRank: null }));
  const active = activeRun(changes, thread.id);
  if (active !== null && isPreparing(active)) endRun(changes, active, { status: "interrupted", endReason: "thread_deleted" });
  const hadAgent = [...state.providerSessions.values()].some((session) => session.threadId === thread.id);
  if (hadAgent && (active === null || isPreparing(active))) changes.effect(EffectKind.releaseSession, thread.id, { threadId: thread.id, reason: "thread_deleted", message: "released because the thread was deleted" });
  if (thread.workspace?.strategy === "worktree") changes.effect(EffectKind.cleanupWorkspace, thread.id, { threadId: thread.id });
}
