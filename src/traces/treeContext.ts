import type { Run } from "../contracts/entities/runs.js";
import { type TraceParent, parseTraceParent } from "../contracts/traceContext.js";
import type { OrchestrationState } from "../core/state.js";
import { spanIdOf, stepSpanId, traceIdOfRoot } from "./spanIds.js";
import { SpanKind, SpanLinkKind, type SpanLink } from "./spanModel.js";

/**
 * Where a span sits: its trace, its parent, whether that parent is a caller's
 * span outside Loom, and the links of work that started it. Derived from the
 * recorded state only (docs/telemetry.md, "Trace context in").
 */
export interface Placement {
  readonly traceId: string;
  readonly parentSpanId: string | null;
  readonly remoteParent: boolean;
  readonly links: readonly SpanLink[];
}

export type TraceState = Readonly<Pick<OrchestrationState, "threads" | "runs" | "threadRuns" | "tasks" | "taskByChildThread" | "subagents" | "nodes" | "workflows">>;

/** The root thread of the tree holding `threadId` (the thread itself when unknown). */
export function rootOf(state: TraceState, threadId: string): string {
  return state.threads.get(threadId)?.lineage.rootThreadId ?? threadId;
}

/**
 * A tree's trace id: the trace of the caller whose call started the root's
 * first run (its traceparent was recorded), so the tree joins that trace;
 * otherwise a hash of the root thread id.
 */
export function traceIdOfTree(state: TraceState, rootThreadId: string): string {
  return callerOfTree(state, rootThreadId)?.traceId ?? traceIdOfRoot(rootThreadId);
}

export function traceIdOfThread(state: TraceState, threadId: string): string {
  return traceIdOfTree(state, rootOf(state, threadId));
}

/**
 * Under a span of this trace, or beside it with a link: a caller inside the
 * tree's trace (an agent CLI that propagates the context Loom gave it)
 * parents the span; a caller in another trace is linked.
 */
function placeUnder(traceId: string, ownParent: string | null, traceParent: string | undefined, links: SpanLink[]): Placement {
  const inbound = parseTraceParent(traceParent);
  if (inbound !== null && inbound.traceId === traceId) return { traceId, parentSpanId: inbound.spanId, remoteParent: true, links };
  if (inbound !== null) links.push({ traceId: inbound.traceId, spanId: inbound.spanId, kind: SpanLinkKind.caller });
  return { traceId, parentSpanId: ownParent, remoteParent: false, links };
}

/** The span a child thread's runs hang under: its workflow step, or the delegation that created it; null for a root. */
export function delegationSpanOfThread(state: TraceState, threadId: string): string | null {
  const taskId = state.taskByChildThread.get(threadId);
  const task = taskId === undefined ? undefined : state.tasks.get(taskId);
  if (task === undefined) return null;
  return task.workflowStep === undefined ? spanIdOf(task.taskId) : stepSpanId(task.workflowStep.workflowId, task.workflowStep.stepId);
}

/**
 * A run's place: a child's runs under their delegation (its first run linked
 * back to it); a root's runs at the top, or under the caller that started
 * them. A delegated child's own inbound context is the delegation's, not the run's.
 */
export function runPlacement(state: TraceState, run: Run): Placement {
  const traceId = traceIdOfThread(state, run.threadId);
  const delegation = delegationSpanOfThread(state, run.threadId);
  if (delegation === null) return placeUnder(traceId, null, run.traceParent, []);
  const taskId = state.taskByChildThread.get(run.threadId);
  const task = taskId === undefined ? undefined : state.tasks.get(taskId);
  const links: SpanLink[] = task?.childRunId === run.id ? [{ traceId, spanId: delegation, kind: SpanLinkKind.delegatedFrom }] : [];
  return { traceId, parentSpanId: delegation, remoteParent: false, links };
}

/** A delegation's place: under the parent's run, or under the agent's own tool span when its call carried that context. */
export function delegationPlacement(state: TraceState, parentThreadId: string, parentRunId: string, childRunId: string | null): Placement {
  const traceId = traceIdOfThread(state, parentThreadId);
  if (childRunId === null) return placeUnder(traceId, spanIdOf(parentRunId), undefined, []);
  const links: SpanLink[] = [{ traceId, spanId: spanIdOf(childRunId), kind: SpanLinkKind.delegatedTo }];
  return placeUnder(traceId, spanIdOf(parentRunId), state.runs.get(childRunId)?.traceParent, links);
}

/** Spans whose parent is a caller's are Loom's server side of that call; invoke_agent spans are otherwise clients of the agent. */
export function runKind(placement: Placement): SpanKind {
  return placement.remoteParent ? SpanKind.server : SpanKind.client;
}

export function childPlacement(state: TraceState, threadId: string, parentSpanId: string): Placement {
  return { traceId: traceIdOfThread(state, threadId), parentSpanId, remoteParent: false, links: [] };
}

/** The caller whose call started the tree's root (its recorded traceparent), or null: the sampler's parent. */
export function callerOfTree(state: TraceState, threadId: string): TraceParent | null {
  const firstRunId = state.threadRuns.get(rootOf(state, threadId))?.[0];
  return parseTraceParent(firstRunId === undefined ? undefined : state.runs.get(firstRunId)?.traceParent);
}

/**
 * The W3C traceparent an agent CLI started for a run gets (TRACEPARENT): the
 * run's span in its tree's trace, so the agent's own spans nest under it.
 */
export function traceParentOfRun(state: TraceState, runId: string, sampled: boolean): string | null {
  const run = state.runs.get(runId);
  if (run === undefined) return null;
  return `00-${traceIdOfThread(state, run.threadId)}-${spanIdOf(runId)}-${sampled ? "01" : "00"}`;
}
