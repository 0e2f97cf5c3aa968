import type { AppThread } from "../../contracts/thread.js";
import { budgetReading, holderSpend, threadHolder } from "../../core/budgets/budgets.js";
import { latestRunOf } from "../../engine/queries.js";
import { ALL_PROJECTS, ThreadListKind, isChildThread } from "../../engine/threadIndex.js";
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

/**
 * t3_thread_list: one project's thread shells, newest first, bounded and
 * offset-paginated. The engine's thread index keeps each project's list in
 * order, so a page costs about offset + limit rows; only the title, status
 * and snoozed filters (and a list wider than asked for) count `total` by a
 * scan of the project's list, never a sort.
 */
export function listThreads(ctx: AppContext, caller: Caller, input: ThreadListInput): ThreadListOutput {
  const state = ctx.orchestrator.state;
  const acting = resolveCaller(state, caller, "t3_thread_list");
  const projectId = input.projectId ?? acting.thread?.projectId ?? null;
  const title = input.title?.toLowerCase();
  const now = nowIso(ctx);
  const includeArchived = input.includeArchived === true;
  const includeSubagents = input.includeSubagents === true;
  const kind = includeArchived || includeSubagents ? ThreadListKind.all : ThreadListKind.main;
  const list = ctx.orchestrator.threads.list(projectId ?? ALL_PROJECTS, kind);
  const exact = kind === ThreadListKind.main ? true : includeArchived && includeSubagents;
  const filtered = !exact || title !== undefined || input.status !== undefined || input.snoozed !== undefined;
  const matches = (thread: AppThread): boolean => {
    if (!includeArchived && thread.archivedAt !== null) return false;
    if (!includeSubagents && isChildThread(thread)) return false;
    if (title !== undefined && !thread.title.toLowerCase().includes(title)) return false;
    if (input.status !== undefined && !matchesStatus(thread, ctx, input.status)) return false;
    if (input.snoozed !== undefined && isEffectivelySnoozed(state, thread, now) !== input.snoozed) return false;
    return true;
  };
  const limit = input.limit ?? 25;
  const offset = input.offset ?? 0;
  const page: AppThread[] = [];
  let seen = 0;
  for (const { id } of list.newestFirst()) {
    const thread = state.threads.get(id)!;
    if (filtered && !matches(thread)) continue;
    if (seen >= offset && page.length < limit) page.push(thread);
    seen += 1;
    if (!filtered && page.length === limit) break;
  }
  const total = filtered ? seen : list.size;
  const hasMore = offset + page.length < total;
  return {
    projectId,
    threads: page.map((thread) => threadSummary(state, ctx.environmentId, thread, now)),
    total,
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
    ...structuredFields(ctx, thread),
    ...budgetField(ctx, thread),
  };
}

/**
 * A thread started with an output schema, or a delegated task's child with
 * one: its structured result, or why there is none (null while unknown).
 */
function budgetField(ctx: AppContext, thread: AppThread): Pick<ThreadReadOutput, "budget"> {
  const holder = threadHolder(thread);
  if (holder === null) return {};
  const spent = holderSpend(ctx.orchestrator.state, holder, new Date(ctx.clock()).toISOString());
  return { budget: { limits: holder.budget, spent, ...budgetReading(holder.budget, spent), exceeded: holder.exceeded } };
}

function structuredFields(ctx: AppContext, thread: AppThread): Pick<ThreadReadOutput, "structuredResult" | "structuredResultError"> {
  const output = thread.structuredOutput;
  if (output !== undefined && output !== null) {
    return output.status === "matched" ? { structuredResult: output.value, structuredResultError: null } : { structuredResultError: output.error };
  }
  const taskId = ctx.orchestrator.state.taskByChildThread.get(thread.id);
  const task = taskId === undefined ? undefined : ctx.orchestrator.state.tasks.get(taskId);
  if (task === undefined || task.outputSchema === undefined || task.outputSchema === null) return {};
  return task.structuredResult === undefined ? { structuredResultError: task.structuredResultError ?? null } : { structuredResult: task.structuredResult, structuredResultError: null };
}
