import type { DelegatedTask } from "../contracts/entities/delegatedTasks.js";
import { isTerminalDelegatedTaskStatus } from "../contracts/entities/delegatedTasks.js";
import { type ExecutionNode, type Run, type RunAttempt, isTerminalExecutionNodeStatus, isTerminalRunAttemptStatus, isTerminalRunStatus } from "../contracts/entities/runs.js";
import { type RuntimeRequest, isApprovalKind } from "../contracts/entities/runtimeRequests.js";
import { type Workflow, type WorkflowStep, isTerminalWorkflowStatus } from "../contracts/entities/workflows.js";
import { Attr, Operation, providerNameOf } from "./spanAttributes.js";
import { spanIdOf, stepSpanId } from "./spanIds.js";
import { attrs, endTime, failureStatus, span, time } from "./spanParts.js";
import { SpanKind, SpanLinkKind, SpanSource, type SpanStatus, SpanStatusCode, type TraceSpan } from "./spanModel.js";
import { type TraceState, childPlacement, delegationPlacement, rootOf, runKind, runPlacement } from "./treeContext.js";

/**
 * One span per recorded entity (docs/telemetry.md, "Spans"). Each builder
 * reads only the entity and the recorded state around it, so a span built
 * when its entity ends (live export) equals the one a later read builds.
 */

/** What a run's attempts used, summed: the numbers the budget ledger counts (src/core/budgets). */
function runUsage(state: TraceState & { readonly attempts: ReadonlyMap<string, RunAttempt>; readonly runAttempts: ReadonlyMap<string, readonly string[]> }, run: Run) {
  let input = 0;
  let output = 0;
  let cached = 0;
  let cost = 0;
  let reported = false;
  // The ledger counts a run's usage only once it started (holderSpend).
  if (run.startedAt !== null) {
    for (const attemptId of state.runAttempts.get(run.id) ?? []) {
      const usage = state.attempts.get(attemptId)?.usage;
      if (usage === undefined || usage === null) continue;
      reported = true;
      input += usage.inputTokens;
      output += usage.outputTokens;
      cached += usage.cachedInputTokens ?? 0;
      cost += usage.costUsd ?? 0;
    }
  }
  return reported ? { [Attr.inputTokens]: input, [Attr.outputTokens]: output, [Attr.cachedInputTokens]: cached, [Attr.costUsd]: cost } : {};
}

export type SpanState = TraceState & { readonly attempts: ReadonlyMap<string, RunAttempt>; readonly runAttempts: ReadonlyMap<string, readonly string[]> };

/** `invoke_agent <instance>`: one run, from creation (queue time included) to its end. */
export function runSpan(state: SpanState, run: Run): TraceSpan {
  const placement = runPlacement(state, run);
  const thread = state.threads.get(run.threadId);
  const agent = run.providerInstanceId ?? run.driver ?? "agent";
  const status: SpanStatus =
    run.status === "failed" ? failureStatus(run.failure, run.endReason ?? "failed") : run.status === "completed" ? { code: SpanStatusCode.ok } : { code: SpanStatusCode.unset };
  return span(placement, {
    name: `${Operation.invokeAgent} ${agent}`,
    kind: runKind(placement),
    source: SpanSource.run,
    entityId: run.id,
    startTimeMs: time(run.createdAt),
    endTimeMs: isTerminalRunStatus(run.status) ? endTime(run.endedAt ?? run.updatedAt) : null,
    status,
    attributes: attrs({
      [Attr.operationName]: Operation.invokeAgent,
      [Attr.providerName]: providerNameOf(run.driver),
      [Attr.requestModel]: run.modelSelection?.model,
      [Attr.agentName]: agent,
      [Attr.agentId]: run.threadId,
      [Attr.conversationId]: run.threadId,
      ...runUsage(state, run),
      [Attr.threadId]: run.threadId,
      [Attr.rootThreadId]: rootOf(state, run.threadId),
      [Attr.threadTitle]: thread?.title,
      [Attr.runId]: run.id,
      [Attr.runKind]: run.kind,
      [Attr.runOrdinal]: run.ordinal,
      [Attr.runStatus]: run.status,
      [Attr.endReason]: run.endReason,
      [Attr.providerInstanceId]: run.providerInstanceId,
      [Attr.driver]: run.driver,
      [Attr.errorType]: run.status === "failed" ? (run.failure?.code ?? run.endReason ?? "failed") : null,
    }),
  });
}

/** `attempt <n>`: one try of a run on a provider session; its usage is counted on the run's span. */
export function attemptSpan(state: SpanState, attempt: RunAttempt): TraceSpan {
  const failed = attempt.status === "failed";
  return span(childPlacement(state, attempt.threadId, spanIdOf(attempt.runId)), {
    name: `attempt ${attempt.attemptOrdinal}`,
    kind: SpanKind.internal,
    source: SpanSource.attempt,
    entityId: attempt.id,
    startTimeMs: time(attempt.createdAt),
    endTimeMs: isTerminalRunAttemptStatus(attempt.status) ? endTime(attempt.endedAt ?? attempt.updatedAt) : null,
    status: failed ? failureStatus(attempt.failure, "failed") : attempt.status === "completed" ? { code: SpanStatusCode.ok } : { code: SpanStatusCode.unset },
    attributes: attrs({
      [Attr.threadId]: attempt.threadId,
      [Attr.runId]: attempt.runId,
      [Attr.attemptId]: attempt.id,
      [Attr.attemptOrdinal]: attempt.attemptOrdinal,
      [Attr.attemptStatus]: attempt.status,
      [Attr.providerSessionId]: attempt.providerSessionId,
      [Attr.errorType]: failed ? (attempt.failure?.code ?? "failed") : null,
    }),
  });
}

/** A delegated task outside a workflow: `execute_tool delegate_task`, the parent's call, with the child's runs below it. */
export function delegationSpan(state: SpanState, task: DelegatedTask): TraceSpan {
  const placement = delegationPlacement(state, task.parentThreadId, task.parentRunId, task.childRunId);
  const ended = isTerminalDelegatedTaskStatus(task.status);
  const endedAt = ended ? (state.subagents.get(task.taskId)?.endedAt ?? state.nodes.get(task.parentNodeId)?.endedAt ?? task.updatedAt) : null;
  return span(placement, {
    name: `${Operation.executeTool} delegate_task`,
    kind: placement.remoteParent ? SpanKind.server : SpanKind.internal,
    source: SpanSource.delegation,
    entityId: task.taskId,
    startTimeMs: time(task.createdAt),
    endTimeMs: endTime(endedAt),
    status: task.status === "failed" ? { code: SpanStatusCode.error, message: task.summary ?? "the delegated task failed" } : task.status === "completed" ? { code: SpanStatusCode.ok } : { code: SpanStatusCode.unset },
    attributes: attrs({
      [Attr.operationName]: Operation.executeTool,
      [Attr.toolName]: "delegate_task",
      [Attr.toolType]: "extension",
      [Attr.toolCallId]: task.taskId,
      [Attr.threadId]: task.parentThreadId,
      [Attr.runId]: task.parentRunId,
      [Attr.taskId]: task.taskId,
      [Attr.taskStatus]: task.status,
      [Attr.taskMode]: task.mode,
      [Attr.taskDepth]: task.depth,
      [Attr.childThreadId]: task.childThreadId,
      [Attr.providerInstanceId]: task.providerInstanceId,
      [Attr.errorType]: task.status === "failed" ? "task_failed" : null,
    }),
  });
}

/** `invoke_workflow <name>`: a workflow script, under the run that started it. */
export function workflowSpan(state: SpanState, workflow: Workflow): TraceSpan {
  const failed = workflow.status === "failed";
  return span(childPlacement(state, workflow.parentThreadId, spanIdOf(workflow.parentRunId)), {
    name: `${Operation.invokeWorkflow} ${workflow.name ?? workflow.workflowId}`,
    kind: SpanKind.internal,
    source: SpanSource.workflow,
    entityId: workflow.workflowId,
    startTimeMs: time(workflow.createdAt),
    endTimeMs: isTerminalWorkflowStatus(workflow.status) ? endTime(workflow.endedAt ?? workflow.updatedAt) : null,
    status: failed ? failureStatus(workflow.error, "failed") : workflow.status === "completed" ? { code: SpanStatusCode.ok } : { code: SpanStatusCode.unset },
    attributes: attrs({
      [Attr.operationName]: Operation.invokeWorkflow,
      [Attr.threadId]: workflow.parentThreadId,
      [Attr.runId]: workflow.parentRunId,
      [Attr.workflowId]: workflow.workflowId,
      [Attr.workflowName]: workflow.name,
      [Attr.workflowStatus]: workflow.status,
      [Attr.errorType]: failed ? (workflow.error?.code ?? "failed") : null,
    }),
  });
}

/** `agent <label>`: one agent() step of a workflow; the child threads of its tasks run below it. */
export function workflowStepSpan(state: SpanState, workflow: Workflow, step: WorkflowStep): TraceSpan {
  const placement = childPlacement(state, workflow.parentThreadId, spanIdOf(workflow.workflowId));
  const firstRunId = step.taskId === null ? undefined : state.tasks.get(step.taskId)?.childRunId;
  const failed = step.status === "failed";
  return span(
    { ...placement, links: firstRunId === undefined || firstRunId === null ? [] : [{ traceId: placement.traceId, spanId: spanIdOf(firstRunId), kind: SpanLinkKind.delegatedTo }] },
    {
      spanId: stepSpanId(workflow.workflowId, step.stepId),
      name: `agent ${step.label ?? `#${step.index}`}`,
      kind: SpanKind.internal,
      source: SpanSource.workflowStep,
      entityId: step.stepId,
      startTimeMs: time(step.startedAt),
      endTimeMs: step.status === "running" ? null : endTime(step.endedAt),
      status: failed ? failureStatus(step.error, "failed") : step.status === "completed" ? { code: SpanStatusCode.ok } : { code: SpanStatusCode.unset },
      attributes: attrs({
        [Attr.threadId]: workflow.parentThreadId,
        [Attr.workflowId]: workflow.workflowId,
        [Attr.stepId]: step.stepId,
        [Attr.stepIndex]: step.index,
        [Attr.stepStatus]: step.status,
        [Attr.stepPhase]: step.phase,
        [Attr.taskId]: step.taskId,
        [Attr.childThreadId]: step.childThreadId,
        [Attr.errorType]: failed ? (step.error?.code ?? "failed") : null,
      }),
    },
  );
}

/** What a request's answer was: the approval decision, `answered`, or how it ended unanswered. */
export function requestOutcome(request: RuntimeRequest): string {
  const decision = request.resolution?.decision;
  if (typeof decision === "string") return decision;
  if (request.resolution?.dismissed === true) return "dismissed";
  if (request.status === "resolved") return request.kind === "user_input" ? "answered" : "resolved";
  return request.status;
}

/** `approval <kind>`, `question`, or `request <kind>`: from the ask to its answer, with the outcome. */
export function requestSpan(state: SpanState, request: RuntimeRequest): TraceSpan {
  const approval = isApprovalKind(request.kind);
  const question = request.kind === "user_input";
  return span(childPlacement(state, request.threadId, spanIdOf(request.runId)), {
    name: approval ? `approval ${request.kind}` : question ? "question" : `request ${request.kind}`,
    kind: SpanKind.internal,
    source: approval ? SpanSource.approval : question ? SpanSource.question : SpanSource.request,
    entityId: request.id,
    startTimeMs: time(request.createdAt),
    endTimeMs: request.status === "pending" ? null : endTime(request.resolvedAt ?? request.updatedAt),
    status: { code: SpanStatusCode.unset },
    attributes: attrs({
      [Attr.threadId]: request.threadId,
      [Attr.runId]: request.runId,
      [Attr.requestId]: request.id,
      [Attr.requestKind]: request.kind,
      [Attr.requestStatus]: request.status,
      [Attr.requestOutcome]: requestOutcome(request),
      [Attr.requestBlocking]: request.blocking,
    }),
  });
}

/** `wait <label>`: an agent blocked in a wait tool (a recorded wait), with how it ended. */
export function waitSpan(state: SpanState, node: ExecutionNode): TraceSpan {
  return span(childPlacement(state, node.threadId, spanIdOf(node.runId)), {
    name: `wait ${node.label ?? ""}`.trim(),
    kind: SpanKind.internal,
    source: SpanSource.wait,
    entityId: node.id,
    startTimeMs: time(node.createdAt),
    endTimeMs: isTerminalExecutionNodeStatus(node.status) ? endTime(node.endedAt ?? node.updatedAt) : null,
    status: { code: SpanStatusCode.unset },
    attributes: attrs({ [Attr.threadId]: node.threadId, [Attr.runId]: node.runId, [Attr.waitLabel]: node.label, [Attr.waitOutcome]: node.status }),
  });
}
