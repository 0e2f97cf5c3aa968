import { isTerminalDelegatedTaskStatus } from "../contracts/entities/delegatedTasks.js";
import { isTerminalExecutionNodeStatus, isTerminalRunAttemptStatus, isTerminalRunStatus } from "../contracts/entities/runs.js";
import { isTerminalWorkflowStatus } from "../contracts/entities/workflows.js";
import type { DomainEvent } from "../contracts/events.js";
import type { TurnItem } from "../contracts/turnItems.js";
import type { OrchestrationState } from "../core/state.js";
import { attemptSpan, delegationSpan, requestSpan, runSpan, type SpanState, waitSpan, workflowSpan, workflowStepSpan } from "./entitySpans.js";
import { isEnded, type TraceSpan, type TreeTrace } from "./spanModel.js";
import { isToolItem, toolSpan } from "./toolSpans.js";
import { rootOf, traceIdOfTree } from "./treeContext.js";

/**
 * A tree's spans from the recorded state, and the spans an event ends (the
 * live exporter's feed). Both build every span with the same per-entity
 * functions, so a trace exported live equals one exported after the fact.
 */

export type TreeState = SpanState & Readonly<Pick<OrchestrationState, "runtimeRequests">>;

export interface TraceSource {
  readonly state: TreeState;
  /** A thread's tool call items (TOOL_ITEM_TYPES), oldest first. */
  readonly toolItems: (threadId: string) => readonly TurnItem[];
}

/** The recorded waits: tool_call nodes (src/core/run/waits.ts). */
const WAIT_NODE = "tool_call";

/** Every span of the tree holding `threadId`, ordered by start time (parents first on ties). */
export function treeTrace(source: TraceSource, threadId: string): TreeTrace {
  const { state } = source;
  const rootThreadId = rootOf(state, threadId);
  // Delegated children and forks alike name the root in their lineage.
  const threads = new Set([rootThreadId, ...[...state.threads.values()].filter((thread) => thread.lineage.rootThreadId === rootThreadId).map((thread) => thread.id)]);
  const spans: TraceSpan[] = [];
  for (const id of threads) {
    for (const runId of state.threadRuns.get(id) ?? []) {
      const run = state.runs.get(runId);
      if (run === undefined) continue;
      spans.push(runSpan(state, run));
      for (const attemptId of state.runAttempts.get(runId) ?? []) {
        const attempt = state.attempts.get(attemptId);
        if (attempt !== undefined) spans.push(attemptSpan(state, attempt));
      }
    }
    for (const item of source.toolItems(id)) {
      const built = isToolItem(item) ? toolSpan(state, item) : null;
      if (built !== null) spans.push(built);
    }
  }
  for (const task of state.tasks.values()) {
    if (threads.has(task.parentThreadId) && task.workflowStep === undefined) spans.push(delegationSpan(state, task));
  }
  for (const workflow of state.workflows.values()) {
    if (!threads.has(workflow.parentThreadId)) continue;
    spans.push(workflowSpan(state, workflow));
    for (const step of workflow.steps) spans.push(workflowStepSpan(state, workflow, step));
  }
  for (const request of state.runtimeRequests.values()) if (threads.has(request.threadId)) spans.push(requestSpan(state, request));
  for (const node of state.nodes.values()) if (node.kind === WAIT_NODE && threads.has(node.threadId)) spans.push(waitSpan(state, node));
  const depth = depthOf(spans);
  spans.sort((a, b) => a.startTimeMs - b.startTimeMs || depth(a) - depth(b) || a.spanId.localeCompare(b.spanId));
  return { traceId: traceIdOfTree(state, rootThreadId), rootThreadId, spans };
}

/** How deep a span sits among these spans (0 at the top), to order a parent before a child that starts with it. */
function depthOf(spans: readonly TraceSpan[]): (span: TraceSpan) => number {
  const parents = new Map(spans.map((span) => [span.spanId, span.parentSpanId]));
  const memo = new Map<string, number>();
  const depth = (spanId: string, seen: number): number => {
    const known = memo.get(spanId);
    if (known !== undefined) return known;
    const parent = parents.get(spanId);
    const value = parent === undefined || parent === null || !parents.has(parent) || seen > spans.length ? 0 : depth(parent, seen + 1) + 1;
    memo.set(spanId, value);
    return value;
  };
  return (span) => depth(span.spanId, 0);
}

/**
 * The spans this event ends, built from the state after it was applied.
 * An entity updated again after it ended yields its span again; the
 * exporter drops repeats.
 */
export function spansEndedBy(state: TreeState, event: DomainEvent): TraceSpan[] {
  switch (event.type) {
    case "run.updated":
      return isTerminalRunStatus(event.data.run.status) ? ended(runSpan(state, state.runs.get(event.data.run.id) ?? event.data.run)) : [];
    case "run-attempt.updated":
      return isTerminalRunAttemptStatus(event.data.attempt.status) ? ended(attemptSpan(state, event.data.attempt)) : [];
    case "turn-item.updated": {
      const item = event.data.item;
      const built = isToolItem(item) ? toolSpan(state, item) : null;
      return built === null ? [] : ended(built);
    }
    case "runtime-request.updated":
      return event.data.request.status === "pending" ? [] : ended(requestSpan(state, event.data.request));
    case "node.updated":
      return event.data.node.kind === WAIT_NODE && isTerminalExecutionNodeStatus(event.data.node.status) ? ended(waitSpan(state, event.data.node)) : [];
    case "subagent.updated": {
      const task = event.data.task === null ? undefined : state.tasks.get(event.data.task.taskId);
      return task === undefined || task.workflowStep !== undefined || !isTerminalDelegatedTaskStatus(task.status) ? [] : ended(delegationSpan(state, task));
    }
    case "workflow.updated":
      return isTerminalWorkflowStatus(event.data.workflow.status) ? ended(workflowSpan(state, event.data.workflow)) : [];
    case "workflow.step.updated": {
      if (event.data.step.status === "running") return [];
      const workflow = state.workflows.get(event.data.workflowId);
      const step = workflow?.steps.find((s) => s.stepId === event.data.step.stepId);
      return workflow === undefined || step === undefined ? [] : ended(workflowStepSpan(state, workflow, step));
    }
    default:
      return [];
  }
}

function ended(span: TraceSpan): TraceSpan[] {
  return isEnded(span) ? [span] : [];
}
