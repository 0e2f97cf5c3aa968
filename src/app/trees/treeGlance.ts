import type { Run, RunStatus } from "../../contracts/entities/runs.js";
import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { isApprovalKind } from "../../contracts/entities/runtimeRequests.js";
import type { AppThread } from "../../contracts/thread.js";
import type { TreeRollup, TreeStatusCounts, TreeWaterfall, WaterfallRequest, WaterfallRun, WaterfallThread, WaterfallWait } from "../../contracts/wire/treeViews.js";
import { type BudgetHolder, budgetReading, holderSpend, threadHolder } from "../../core/budgets/budgets.js";
import type { OrchestrationState } from "../../core/state.js";
import { currentRunOf, runsOf } from "../../engine/queries.js";
import { requestOutcome } from "../../traces/entitySpans.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";

/**
 * The tree at a glance (docs/ui.md): a root's roll-up and its waterfall, read
 * from the folded state. `rootThreadId` may name any thread of the tree; the
 * answer is its root's. Owner reads (the web UI's session is the owner's).
 */

/** Which count a thread's current run falls in: a table the compiler checks is total. */
const COUNT_OF_STATUS: { readonly [S in RunStatus]: keyof TreeStatusCounts } = {
  queued: "running",
  starting: "running",
  running: "running",
  waiting_on_subagent: "running",
  settling_background_work: "running",
  waiting_on_approval: "waitingOnYou",
  waiting_on_user_input: "waitingOnYou",
  failed: "failed",
  completed: "done",
  interrupted: "stopped",
  cancelled: "stopped",
};

/** The recorded waits are tool_call nodes (src/core/run/waits.ts), as the span model reads them. */
const WAIT_NODE = "tool_call";

function rootThread(state: OrchestrationState, threadId: string): AppThread {
  const thread = state.threads.get(threadId) ?? fail("thread_not_found", `thread ${threadId} does not exist`);
  return state.threads.get(thread.lineage.rootThreadId) ?? thread;
}

/** The root and every thread naming it as root (delegated children and forks), parents before children, siblings oldest first. */
function treeOrder(state: OrchestrationState, root: AppThread): { readonly thread: AppThread; readonly depth: number }[] {
  const children = new Map<string, AppThread[]>();
  for (const thread of state.threads.values()) {
    if (thread.id === root.id || thread.lineage.rootThreadId !== root.id) continue;
    const parent = thread.lineage.parentThreadId ?? root.id;
    children.set(parent, [...(children.get(parent) ?? []), thread]);
  }
  const order: { thread: AppThread; depth: number }[] = [];
  const seen = new Set<string>();
  const visit = (thread: AppThread, depth: number) => {
    if (seen.has(thread.id)) return;
    seen.add(thread.id);
    order.push({ thread, depth });
    const below = (children.get(thread.id) ?? []).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    for (const child of below) visit(child, depth + 1);
  };
  visit(root, 0);
  // A thread whose parent is gone still belongs to the tree: under the root.
  for (const below of children.values()) for (const thread of below) visit(thread, 1);
  return order;
}

/** First start (or creation, with `created`) to last end of these runs; the end is null while one has not ended. */
function span(runs: readonly Run[], created: boolean): { readonly startedAt: string | null; readonly endedAt: string | null } {
  let startedAt: string | null = null;
  let endedAt: string | null = null;
  let live = false;
  for (const run of runs) {
    const start = created ? run.createdAt : run.startedAt;
    if (start !== null && (startedAt === null || start < startedAt)) startedAt = start;
    if (!isTerminalRunStatus(run.status)) live = true;
    else if (run.endedAt !== null && (endedAt === null || run.endedAt > endedAt)) endedAt = run.endedAt;
  }
  return { startedAt, endedAt: live ? null : endedAt };
}

/** `GET /api/ui/trees/:rootThreadId`: status counts, elapsed span, and spend against the root's budget. */
export function getTreeRollup(ctx: AppContext, _caller: Caller, threadId: string): TreeRollup {
  const state = ctx.orchestrator.state;
  const root = rootThread(state, threadId);
  const now = new Date(ctx.clock()).toISOString();
  const threads = treeOrder(state, root);
  const counts = { running: 0, waitingOnYou: 0, failed: 0, done: 0, stopped: 0 };
  for (const { thread } of threads) {
    const run = currentRunOf(state, thread.id);
    if (run !== null) counts[COUNT_OF_STATUS[run.status]] += 1;
  }
  const budgeted = threadHolder(root);
  // Without a budget the ledger still counts what the tree spent, from the root's creation.
  const holder: BudgetHolder = budgeted ?? { kind: "thread", id: root.id, label: `thread ${root.id}`, title: root.title, budget: {}, exceeded: null, top: root.id, since: root.createdAt };
  const spent = holderSpend(state, holder, now);
  return {
    rootThreadId: root.id,
    now,
    threadCount: threads.length,
    counts,
    ...span(threads.flatMap(({ thread }) => runsOf(state, thread.id)), false),
    spent,
    budget: budgeted === null ? null : { limits: budgeted.budget, ...budgetReading(budgeted.budget, spent), exceeded: budgeted.exceeded },
  };
}

/** The tree's recorded waits by run, oldest first (one pass over the nodes). */
function waitsByRun(state: OrchestrationState, threads: ReadonlySet<string>): Map<string, WaterfallWait[]> {
  const byRun = new Map<string, WaterfallWait[]>();
  for (const node of state.nodes.values()) {
    if (node.kind !== WAIT_NODE || !threads.has(node.threadId)) continue;
    const open = state.openWaits.get(node.threadId)?.has(node.id) === true;
    const wait: WaterfallWait = { nodeId: node.id, label: node.label, startedAt: node.createdAt, endedAt: node.endedAt ?? (open ? null : node.updatedAt), outcome: node.status };
    byRun.set(node.runId, [...(byRun.get(node.runId) ?? []), wait]);
  }
  for (const waits of byRun.values()) waits.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  return byRun;
}

/** The tree's approvals, questions and other requests by run, oldest first. */
function requestsByRun(state: OrchestrationState, threads: ReadonlySet<string>): Map<string, WaterfallRequest[]> {
  const byRun = new Map<string, WaterfallRequest[]>();
  for (const request of state.runtimeRequests.values()) {
    if (!threads.has(request.threadId)) continue;
    const category = isApprovalKind(request.kind) ? "approval" : request.kind === "user_input" ? "question" : "request";
    const entry: WaterfallRequest = { requestId: request.id, category, kind: request.kind, status: request.status, outcome: requestOutcome(request), createdAt: request.createdAt, resolvedAt: request.status === "pending" ? null : (request.resolvedAt ?? request.updatedAt) };
    byRun.set(request.runId, [...(byRun.get(request.runId) ?? []), entry]);
  }
  for (const requests of byRun.values()) requests.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  return byRun;
}

/** `GET /api/ui/trees/:rootThreadId/waterfall`: every thread of the tree with its runs, their recorded waits and requests. */
export function getTreeWaterfall(ctx: AppContext, _caller: Caller, threadId: string): TreeWaterfall {
  const state = ctx.orchestrator.state;
  const root = rootThread(state, threadId);
  const order = treeOrder(state, root);
  const members = new Set(order.map(({ thread }) => thread.id));
  const waits = waitsByRun(state, members);
  const requests = requestsByRun(state, members);
  const allRuns: Run[] = [];
  const threads: WaterfallThread[] = order.map(({ thread, depth }) => {
    const runs = runsOf(state, thread.id);
    allRuns.push(...runs);
    return {
      threadId: thread.id,
      parentThreadId: thread.id === root.id ? null : (thread.lineage.parentThreadId ?? root.id),
      relation: thread.lineage.relation,
      depth,
      title: thread.title,
      archived: thread.archivedAt !== null,
      runs: runs.map((run): WaterfallRun => ({
        runId: run.id,
        ordinal: run.ordinal,
        kind: run.kind,
        status: run.status,
        createdAt: run.createdAt,
        startedAt: run.startedAt,
        endedAt: run.endedAt ?? (isTerminalRunStatus(run.status) ? run.updatedAt : null),
        endReason: run.endReason,
        failure: run.failure === null ? null : `${run.failure.code}: ${run.failure.message}`,
        waits: waits.get(run.id) ?? [],
        requests: requests.get(run.id) ?? [],
      })),
    };
  });
  return { rootThreadId: root.id, title: root.title, now: new Date(ctx.clock()).toISOString(), ...span(allRuns, true), threads };
}
