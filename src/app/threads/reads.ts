import type { AppThread } from "../../contracts/thread.js";
import { latestRunOf } from "../../engine/queries.js";
import type { ThreadListInput, ThreadListOutput, ThreadReadInput, ThreadReadOutput } from "../../contracts/tools/threadTools.js";
import type { ItemView } from "../../contracts/tools/toolOutputs.js";
import { type Caller, resolveCaller } from "../caller.js";
import type { AppContext } from "../context.js";
import { isEffectivelySnoozed } from "./attention.js";
import { liveThreadOrFail } from "./authorize.js";
import { MESSAGE_ITEM_TYPES, itemView, recentRuns, threadSummary } from "./views.js";

/** Result size budget of a read (spec 000: about 30,000 characters). */
export const READ_CHAR_BUDGET = 30_000;

function nowIso(ctx: AppContext): string {
  return new Date(ctx.clock()).toISOString();
}

function matchesStatus(thread: AppThread, ctx: AppContext, wanted: NonNullable<ThreadListInput["status"]>): boolean {
  const status = latestRunOf(ctx.orchestrator.state, thread.id)?.status ?? "idle";
  switch (wanted) {
    case "active":
      return status !== "idle" && !["completed", "failed", "interrupted", "cancelled"].includes(status);
    case "waiting":
      return status.startsWith("waiting_");
    default:
      return status === wanted;
  }
}

/** t3_thread_list: one project's thread shells, newest first, bounded and offset-paginated. */
export function listThreads(ctx: AppContext, caller: Caller, input: ThreadListInput): ThreadListOutput {
  const state = ctx.orchestrator.state;
  const acting = resolveCaller(state, caller);
  const projectId = input.projectId ?? acting.thread?.projectId ?? null;
  const title = input.title?.toLowerCase();
  const now = nowIso(ctx);
  const matching: AppThread[] = [];
  for (const thread of state.threads.values()) {
    if (thread.deletedAt !== null) continue;
    if (projectId !== null && thread.projectId !== projectId) continue;
    if (input.includeArchived !== true && thread.archivedAt !== null) continue;
    if (input.includeSubagents !== true && (thread.lineage.relation === "subagent" || state.taskByChildThread.has(thread.id))) continue;
    if (title !== undefined && !thread.title.toLowerCase().includes(title)) continue;
    if (input.status !== undefined && !matchesStatus(thread, ctx, input.status)) continue;
    if (input.snoozed !== undefined && isEffectivelySnoozed(state, thread, now) !== input.snoozed) continue;
    matching.push(thread);
  }
  matching.sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));
  const limit = input.limit ?? 25;
  const offset = input.offset ?? 0;
  const page = matching.slice(offset, offset + limit);
  const hasMore = offset + page.length < matching.length;
  return {
    projectId,
    threads: page.map((thread) => threadSummary(state, ctx.environmentId, thread, now)),
    total: matching.length,
    offset,
    limit,
    hasMore,
    nextOffset: hasMore ? offset + page.length : null,
  };
}

/**
 * t3_thread_read. An agent in a thread reading without a cursor gets the
 * newest items; outside clients start at the oldest. Items stop being added
 * once the result nears the character budget; the rest is reported through
 * earlierPosition (older items left) or hasMore (newer items left).
 */
export function readThread(ctx: AppContext, caller: Caller, input: ThreadReadInput): ThreadReadOutput {
  const state = ctx.orchestrator.state;
  const thread = liveThreadOrFail(ctx, input.threadId);
  const view = input.view ?? "messages";
  const limit = input.limit ?? 50;
  const budget = input.maxChars ?? READ_CHAR_BUDGET;
  const types = view === "messages" ? MESSAGE_ITEM_TYPES : undefined;
  const newestFirst = input.beforePosition !== undefined || (input.afterPosition === undefined && caller.kind === "agent");
  // One more than the page can hold tells whether items are left over.
  const candidates = newestFirst
    ? ctx.orchestrator.timeline.items(thread.id, { types, before: input.beforePosition, order: "desc", limit: limit + 1 })
    : ctx.orchestrator.timeline.items(thread.id, { types, after: input.afterPosition ?? -1, limit: limit + 1 });

  const summary = threadSummary(state, ctx.environmentId, thread, nowIso(ctx));
  const runs = recentRuns(state, thread.id, 5);
  let used = JSON.stringify({ thread: summary, runs }).length + 200;
  const picked: ItemView[] = [];
  for (const item of candidates) {
    if (picked.length >= limit) break;
    const shown = itemView(item);
    const size = JSON.stringify(shown).length;
    if (picked.length > 0 && used + size > budget) break;
    picked.push(shown);
    used += size;
  }
  const leftOver = candidates.length - picked.length;
  if (newestFirst) picked.reverse();
  const first = picked[0];
  const last = picked[picked.length - 1];
  const olderLeft = first !== undefined ? ctx.orchestrator.timeline.has(thread.id, { types, before: first.position }) : newestFirst && leftOver > 0;
  const newerLeft = last !== undefined ? ctx.orchestrator.timeline.has(thread.id, { types, after: last.position }) : !newestFirst && leftOver > 0;
  return {
    thread: summary,
    runs,
    view,
    items: picked,
    earlierPosition: olderLeft && first !== undefined ? first.position : null,
    nextPosition: last?.position ?? input.afterPosition ?? null,
    hasMore: newerLeft,
    truncated: picked.some((item) => item.truncated),
  };
}
