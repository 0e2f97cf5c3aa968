import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { isTerminalSubagentStatus } from "../../contracts/entities/subagents.js";
import type { AppThread } from "../../contracts/thread.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import {
  BOUNDED_SNAPSHOT_LIMITS,
  type BoundedSnapshot,
  HISTORY_PAGE_LIMITS,
  type HistoryPage,
  type ThreadFamily,
  type ThreadFamilyMember,
  type ThreadProjection,
  type Transcript,
} from "../../contracts/wire/projections.js";
import type { OrchestrationState } from "../../core/state.js";
import type { Timeline } from "../../engine/timeline.js";
import { currentRunOf, runsOf } from "../../engine/queries.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { decodeHistoryCursor, encodeHistoryCursor } from "./historyCursor.js";

/**
 * The thread reads of the wire (spec 004 §3.3): the whole projection, the
 * bounded snapshot of a cold open, history pages, the transcript, one turn
 * item, and the lineage family. Each reads the state at a settled point
 * (Orchestrator.readCommitted), so its snapshotSequence is exact: a
 * subscription from it misses and repeats nothing. Items come from the
 * timeline, never the state's maps.
 */

/** The thread, or thread_not_found (deleted threads are gone for readers). */
export function liveThread(state: Readonly<OrchestrationState>, threadId: string): AppThread {
  const thread = state.threads.get(threadId);
  if (thread === undefined || thread.deletedAt !== null) fail("thread_not_found", `thread ${threadId} does not exist`);
  return thread;
}

export function getThreadProjection(ctx: AppContext, _caller: Caller, threadId: string): Promise<ThreadProjection> {
  const timeline = ctx.orchestrator.timeline;
  return ctx.orchestrator.readCommitted((state) => {
    const thread = liveThread(state, threadId);
    const runs = runsOf(state, threadId);
    return {
      snapshotSequence: state.lastSequence,
      thread,
      runs,
      attempts: runs.flatMap((run) => (state.runAttempts.get(run.id) ?? []).map((id) => state.attempts.get(id)!)),
      nodes: [...state.nodes.values()].filter((node) => node.threadId === threadId),
      subagents: [...state.subagents.values()].filter((subagent) => subagent.threadId === threadId),
      requests: requestsOf(state, threadId),
      items: timeline.items(threadId),
    };
  });
}

/** Newest items first up to `limit`, returned oldest first, with what they need to render. */
export function boundedSnapshot(state: Readonly<OrchestrationState>, timeline: Timeline, threadId: string, limit: number | undefined): BoundedSnapshot {
  const thread = liveThread(state, threadId);
  const take = clampLimit("turnItemLimit", limit, BOUNDED_SNAPSHOT_LIMITS.defaultTurnItems, BOUNDED_SNAPSHOT_LIMITS.maxTurnItems);
  const items = timeline.items(threadId, { order: "desc", limit: take }).reverse();
  const runIds = new Set(items.map((item) => item.runId));
  const subagentIds = new Set(items.flatMap((item) => (item.type === "subagent" ? [item.subagentId] : [])));
  const requestIds = new Set(items.flatMap((item) => (item.type === "approval_request" || item.type === "user_input_request" ? [item.requestId] : [])));
  return {
    snapshotSequence: state.lastSequence,
    thread,
    runs: runsOf(state, threadId).filter((run) => runIds.has(run.id) || !isTerminalRunStatus(run.status)),
    subagents: [...state.subagents.values()].filter((s) => s.threadId === threadId && (subagentIds.has(s.id) || !isTerminalSubagentStatus(s.status))),
    requests: requestsOf(state, threadId).filter((request) => requestIds.has(request.id) || request.status === "pending"),
    items,
    historyCursor: cursorBefore(timeline, threadId, items),
  };
}

export function getBoundedSnapshot(ctx: AppContext, _caller: Caller, threadId: string, options: { readonly turnItemLimit?: number }): Promise<BoundedSnapshot> {
  return ctx.orchestrator.readCommitted((state) => boundedSnapshot(state, ctx.orchestrator.timeline, threadId, options.turnItemLimit));
}

/** A page of older items: those before `cursor` (the newest ones without it), `limit` of them, oldest first. */
export function getHistoryPage(ctx: AppContext, _caller: Caller, threadId: string, options: { readonly cursor?: string; readonly limit?: number }): Promise<HistoryPage> {
  const timeline = ctx.orchestrator.timeline;
  return ctx.orchestrator.readCommitted((state) => {
    liveThread(state, threadId);
    const take = clampLimit("limit", options.limit, HISTORY_PAGE_LIMITS.defaultItems, HISTORY_PAGE_LIMITS.maxItems);
    const before = options.cursor === undefined ? undefined : decodeHistoryCursor(options.cursor, threadId);
    const items = timeline.items(threadId, { order: "desc", limit: take, ...(before === undefined ? {} : { before }) }).reverse();
    return { snapshotSequence: state.lastSequence, threadId, items, nextCursor: cursorBefore(timeline, threadId, items) };
  });
}

export function getTranscript(ctx: AppContext, _caller: Caller, threadId: string): Promise<Transcript> {
  const timeline = ctx.orchestrator.timeline;
  return ctx.orchestrator.readCommitted((state) => {
    const thread = liveThread(state, threadId);
    const entries = timeline.items(threadId, { types: ["user_message", "assistant_message"] }).flatMap((item) =>
      item.type === "user_message" || item.type === "assistant_message"
        ? [{ itemId: item.id, position: item.position, runId: item.runId, role: item.type === "user_message" ? ("user" as const) : ("assistant" as const), text: item.text, createdAt: item.createdAt }]
        : [],
    );
    return { snapshotSequence: state.lastSequence, threadId, title: thread.title, entries };
  });
}

export function getTurnItem(ctx: AppContext, _caller: Caller, input: { readonly threadId: string; readonly itemId: string }): { item: TurnItem } {
  liveThread(ctx.orchestrator.state, input.threadId);
  const item = ctx.orchestrator.timeline.item(input.threadId, input.itemId) ?? fail("invalid_request", `thread ${input.threadId} has no turn item ${input.itemId}`);
  return { item };
}

/** Every thread under the asked one's root, parents before children, siblings oldest first. */
export function getThreadFamily(ctx: AppContext, _caller: Caller, threadId: string): Promise<ThreadFamily> {
  return ctx.orchestrator.readCommitted((state) => {
    const thread = liveThread(state, threadId);
    const rootThreadId = thread.lineage.rootThreadId;
    const children = new Map<string | null, AppThread[]>();
    for (const member of state.threads.values()) {
      if (member.deletedAt !== null || (member.lineage.rootThreadId !== rootThreadId && member.id !== rootThreadId)) continue;
      const parent = member.id === rootThreadId ? null : member.lineage.parentThreadId;
      const list = children.get(parent) ?? [];
      list.push(member);
      children.set(parent, list);
    }
    const threads: ThreadFamilyMember[] = [];
    const visit = (parent: string | null): void => {
      const list = (children.get(parent) ?? []).sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
      for (const member of list) {
        threads.push({
          threadId: member.id,
          parentThreadId: member.id === rootThreadId ? null : member.lineage.parentThreadId,
          relation: member.lineage.relation,
          title: member.title,
          providerInstanceId: member.providerInstanceId,
          runStatus: currentRunOf(state, member.id)?.status ?? null,
          archived: member.archivedAt !== null,
          createdAt: member.createdAt,
        });
        visit(member.id);
      }
    };
    visit(null);
    return { snapshotSequence: state.lastSequence, rootThreadId, threads };
  });
}

function requestsOf(state: Readonly<OrchestrationState>, threadId: string) {
  return [...state.runtimeRequests.values()].filter((request) => request.threadId === threadId).sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
}

function cursorBefore(timeline: Timeline, threadId: string, items: readonly TurnItem[]): string | null {
  const oldest = items[0];
  if (oldest === undefined) return null;
  return timeline.has(threadId, { before: oldest.position }) ? encodeHistoryCursor(threadId, oldest.position) : null;
}

function clampLimit(name: string, value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > max) fail("invalid_request", `${name} must be a whole number from 1 to ${max}, got ${value}`);
  return value;
}
