import type {
  ThreadActiveReorderCommand,
  ThreadPinCommand,
  ThreadPinReorderCommand,
  ThreadUnpinCommand,
} from "../../contracts/commands/threadCommands.js";
import { type ThreadEvent, threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { type DecideContext, type Decision, type Rejected, accept, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { changed, liveThread } from "./guards.js";

// Ranks order the sidebar's pinned and active lists, smallest first. Only
// their order matters: unpinning leaves a gap, a reorder renumbers 0..n-1.

/** Pinning appends: the new pin ranks after every current one. */
export function decideThreadPin(state: OrchestrationState, command: ThreadPinCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (thread.archivedAt !== null) {
    return reject(RejectionCode.threadArchived, `thread ${thread.id} is archived; unarchive it before pinning`);
  }
  if (thread.pinnedRank !== null) {
    return reject(RejectionCode.threadAlreadyPinned, `thread ${thread.id} is already pinned`);
  }
  let nextRank = 0;
  for (const other of state.threads.values()) {
    if (other.pinnedRank !== null && other.pinnedRank >= nextRank) nextRank = other.pinnedRank + 1;
  }
  return accept([threadEvent("thread.pinned", changed(thread, ctx, { pinnedRank: nextRank }))]);
}

export function decideThreadUnpin(state: OrchestrationState, command: ThreadUnpinCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (thread.pinnedRank === null) {
    return reject(RejectionCode.threadNotPinned, `thread ${thread.id} is not pinned`);
  }
  return accept([threadEvent("thread.unpinned", changed(thread, ctx, { pinnedRank: null }))]);
}

/**
 * `threadIds` is the new full order of the pinned threads: it must name every
 * pinned thread exactly once, so an order built from a stale list is refused
 * rather than silently dropping a pin.
 */
export function decideThreadPinReorder(state: OrchestrationState, command: ThreadPinReorderCommand, ctx: DecideContext): Decision {
  const listed = resolveOrder(state, command.data.threadIds, (thread) =>
    thread.pinnedRank === null ? `thread ${thread.id} is not pinned` : null,
  );
  if (listed.kind === "rejected") return listed;
  const listedIds = new Set(command.data.threadIds);
  const missing = [...state.threads.values()].filter((t) => t.pinnedRank !== null && !listedIds.has(t.id)).map((t) => t.id);
  if (missing.length > 0) {
    return reject(RejectionCode.invalidReorder, `the order must name every pinned thread; missing ${missing.join(", ")}`);
  }
  const events = rerank(listed.threads, [], "pinnedRank", "thread.pin-reordered", ctx);
  return events.length === 0 ? reject(RejectionCode.invalidReorder, "the pinned order is unchanged") : accept(events);
}

/**
 * `threadIds` is the new full order of the active list (threads neither
 * archived, settled nor deleted). Listed threads get ranks 0..n-1; a ranked
 * thread left out loses its rank and falls back among the unranked ones.
 */
export function decideThreadActiveReorder(state: OrchestrationState, command: ThreadActiveReorderCommand, ctx: DecideContext): Decision {
  const listed = resolveOrder(state, command.data.threadIds, (thread) => {
    if (thread.archivedAt !== null) return `thread ${thread.id} is archived`;
    if (thread.settledAt !== null) return `thread ${thread.id} is settled`;
    return null;
  });
  if (listed.kind === "rejected") return listed;
  const listedIds = new Set(command.data.threadIds);
  const dropped = [...state.threads.values()].filter((t) => t.activeRank !== null && !listedIds.has(t.id));
  const events = rerank(listed.threads, dropped, "activeRank", "thread.active-reordered", ctx);
  return events.length === 0 ? reject(RejectionCode.invalidReorder, "the active order is unchanged") : accept(events);
}

/**
 * Look up every listed id: unknown, deleted, repeated or ineligible ids reject
 * the whole reorder with invalid_reorder. `ineligible` returns why a live
 * thread cannot be in this list, or null.
 */
function resolveOrder(
  state: OrchestrationState,
  threadIds: readonly string[],
  ineligible: (thread: AppThread) => string | null,
): { kind: "resolved"; threads: AppThread[] } | Rejected {
  const seen = new Set<string>();
  const threads: AppThread[] = [];
  for (const id of threadIds) {
    if (seen.has(id)) {
      return reject(RejectionCode.invalidReorder, `thread ${id} is listed more than once`);
    }
    seen.add(id);
    const thread = state.threads.get(id);
    if (thread === undefined) {
      return reject(RejectionCode.invalidReorder, `thread ${id} does not exist`);
    }
    if (thread.deletedAt !== null) {
      return reject(RejectionCode.invalidReorder, `thread ${id} was deleted`);
    }
    const reason = ineligible(thread);
    if (reason !== null) {
      return reject(RejectionCode.invalidReorder, reason);
    }
    threads.push(thread);
  }
  return { kind: "resolved", threads };
}

/** One event per thread whose rank changes: `ordered` get 0..n-1, `dropped` get null. */
function rerank(
  ordered: readonly AppThread[],
  dropped: readonly AppThread[],
  field: "pinnedRank" | "activeRank",
  type: "thread.pin-reordered" | "thread.active-reordered",
  ctx: DecideContext,
): ThreadEvent[] {
  const events: ThreadEvent[] = [];
  ordered.forEach((thread, rank) => {
    if (thread[field] !== rank) events.push(threadEvent(type, changed(thread, ctx, withRank(field, rank))));
  });
  for (const thread of dropped) {
    events.push(threadEvent(type, changed(thread, ctx, withRank(field, null))));
  }
  return events;
}

function withRank(field: "pinnedRank" | "activeRank", rank: number | null): Partial<AppThread> {
  return field === "pinnedRank" ? { pinnedRank: rank } : { activeRank: rank };
}
