import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { AppThread } from "../../contracts/thread.js";
import { ApprovalKind, type RuntimeRequest } from "../../contracts/entities/runtimeRequests.js";
import { type Run, isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type { LimitRecoveryView } from "../../contracts/tools/toolOutputs.js";
import { budgetReading, spendOf } from "../../core/budgets/budgets.js";
import type { BudgetLimits } from "../../contracts/entities/budgets.js";
import type { OrchestrationState } from "../../core/state.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import type { Engine } from "../engine.js";
import { activeRunOf, runsOf } from "../../engine/queries.js";
import type { DelegateTaskResult } from "../../contracts/tools/toolOutputs.js";
import { runResultText } from "../threads/views.js";
import { limitRecoveryView } from "../limits/limitView.js";
import { backgroundWorkText } from "../threads/backgroundView.js";
import { withoutSystemReminders } from "../../core/delegation/agentText.js";

const APPROVAL_KINDS: ReadonlySet<string> = new Set(Object.values(ApprovalKind));

function isApproval(request: RuntimeRequest): request is RuntimeRequest & { kind: ApprovalKind } {
  return APPROVAL_KINDS.has(request.kind);
}

/**
 * The child's work besides the task's own run: later queued or executing
 * turns, and follow-ups the parent still shows as running (one that lost its
 * child run stays so until task_cancel cancels it).
 */
function hasPendingChildRuns(state: OrchestrationState, task: DelegatedTask): boolean {
  const original = task.childRunId === null ? undefined : state.runs.get(task.childRunId);
  const later = runsOf(state, task.childThreadId).some(
    (run) => run.id !== task.childRunId && (original === undefined || run.ordinal > original.ordinal) && !isTerminalRunStatus(run.status),
  );
  return later || (task.followUps ?? []).some((followUp) => followUp.status === "running");
}

function childTasksUnfinished(state: OrchestrationState, task: DelegatedTask): boolean {
  for (const child of state.tasks.values()) {
    if (child.parentThreadId === task.childThreadId && child.resultContextTransferId === null) return true;
  }
  return false;
}

/** The child's run settling background work, while the task waits for its result. */
function backgroundOf(state: Engine["state"], final: boolean, child: AppThread | undefined): Pick<DelegateTaskResult, "backgroundWork"> {
  const text = final || child === undefined ? null : backgroundWorkText(state, child);
  return text === null ? {} : { backgroundWork: text };
}

/**
 * Where a delegated task's work stands, from in-memory state alone: what its
 * status reads (task_status's, an MCP task's). An MCP task's status is read
 * after every commit while it is watched or awaited, so this leaves out what
 * only the full result needs (the latest run's text, the budget).
 */
export interface DelegatedTaskProgress {
  /** The child's result has reached the parent (resultContextTransferId). */
  readonly final: boolean;
  readonly status: DelegatedTask["status"];
  /** The child's blocking question, pending. */
  readonly question: RuntimeRequest | undefined;
  /** The child's pending approval. */
  readonly approval: (RuntimeRequest & { kind: ApprovalKind }) | undefined;
  readonly active: Run | null;
  readonly child: AppThread | undefined;
  /** The usage limit the child's stopped work waits on, resuming by itself. */
  readonly limit: LimitRecoveryView | null;
}

export function delegatedTaskProgress(state: OrchestrationState, task: DelegatedTask): DelegatedTaskProgress {
  const final = task.resultContextTransferId !== null;
  let question: RuntimeRequest | undefined;
  let approval: (RuntimeRequest & { kind: ApprovalKind }) | undefined;
  for (const request of state.runtimeRequests.values()) {
    if (request.threadId !== task.childThreadId || request.status !== "pending") continue;
    if (question === undefined && request.kind === "user_input" && request.blocking) question = request;
    if (approval === undefined && isApproval(request)) approval = request;
  }
  const active = activeRunOf(state, task.childThreadId);
  const original = task.childRunId === null ? undefined : state.runs.get(task.childRunId);
  // A child a usage limit stopped waits for the reset and resumes by itself: the task waits, it has not failed.
  const child = state.threads.get(task.childThreadId);
  const limit = final || active !== null || child === undefined ? null : limitRecoveryView(state, child);
  let status: DelegatedTask["status"] = task.status;
  if (!final) {
    if (original?.status === "queued") status = "queued";
    else if (question !== undefined || approval !== undefined || limit !== null) status = "waiting";
    else status = "running";
  }
  return { final, status, question, approval, active, child, limit };
}

/** DelegateTaskResult (spec 000), read from the parent's durable projection. */
export function delegateTaskResult(view: Pick<Engine, "state" | "timeline">, task: DelegatedTask, waitTimedOut: boolean): DelegateTaskResult {
  const { state, timeline } = view;
  const { final, status, question, approval, active, child, limit } = delegatedTaskProgress(state, task);
  const workState: DelegateTaskResult["workState"] = final ? "result_available" : active === null && childTasksUnfinished(state, task) ? "waiting_for_children" : "working";
  const terminalRuns = runsOf(state, task.childThreadId).filter((run) => isTerminalRunStatus(run.status) && run.kind !== "system_follow_up");
  const latest = terminalRuns[terminalRuns.length - 1] ?? null;
  const publishedRunId = task.resultContextTransferId === null ? null : (state.transfers.get(task.resultContextTransferId)?.runId ?? null);
  return {
    taskId: task.taskId,
    childThreadId: task.childThreadId,
    childRunId: task.childRunId,
    childNodeId: task.childNodeId,
    status,
    workState,
    hasPendingChildRuns: hasPendingChildRuns(state, task),
    providerInstanceId: task.providerInstanceId,
    model: task.model,
    summary: final ? task.summary : null,
    resultContextTransferId: task.resultContextTransferId,
    latestTerminalRunId: latest?.id ?? null,
    latestTerminalStatus: (latest?.status ?? null) as "completed" | "failed" | "cancelled" | "interrupted" | null,
    latestTerminalSummary: latest === null ? null : latest.status === "failed" ? `Error: ${latest.failure?.message ?? "failed"}` : withoutSystemReminders(runResultText(timeline, latest)),
    latestTerminalResultContextTransferId: latest !== null && latest.id === publishedRunId ? task.resultContextTransferId : null,
    hasPendingQuestion: question !== undefined,
    pendingApproval: approval === undefined ? null : { requestId: approval.id, kind: approval.kind, runId: approval.runId },
    waitTimedOut,
    ...structuredFields(task),
    ...(limit === null ? {} : { limitRecovery: limit }),
    ...backgroundOf(state, final, child),
    ...(task.budget === undefined || task.budget === null
      ? {}
      : { budget: taskBudgetView(state, task, task.budget, new Date().toISOString()) }),
  };
}

/** A task with an output schema reports its structured result (or why there is none) once final. */
function structuredFields(task: DelegatedTask): Pick<DelegateTaskResult, "structuredResult" | "structuredResultError"> {
  if (task.outputSchema === undefined || task.outputSchema === null) return {};
  if (task.structuredResultError === undefined && task.structuredResult === undefined) return { structuredResultError: null };
  return task.structuredResult === undefined ? { structuredResultError: task.structuredResultError ?? null } : { structuredResult: task.structuredResult, structuredResultError: null };
}

/** `GET /api/ui/threads/:threadId/budget`: the budget of the delegated task whose child the thread is, and that task (nulls without one). */
export function getChildThreadBudget(ctx: AppContext, _caller: Caller, threadId: string): { readonly taskId: string | null; readonly budget: NonNullable<DelegateTaskResult["budget"]> | null } {
  const budget = budgetOfChildThread(ctx.orchestrator.state, threadId, new Date().toISOString());
  return { taskId: budget === null ? null : (ctx.orchestrator.state.taskByChildThread.get(threadId) ?? null), budget };
}

/** The delegated task whose child is `threadId`, when it has a budget: its limits, what its subtree spent so far, and when it ran out. */
function budgetOfChildThread(state: OrchestrationState, threadId: string, now: string): NonNullable<DelegateTaskResult["budget"]> | null {
  const taskId = state.taskByChildThread.get(threadId);
  const task = taskId === undefined ? undefined : state.tasks.get(taskId);
  if (task === undefined || task.budget === undefined || task.budget === null) return null;
  return taskBudgetView(state, task, task.budget, now);
}

function taskBudgetView(state: OrchestrationState, task: DelegatedTask, limits: BudgetLimits, now: string): NonNullable<DelegateTaskResult["budget"]> {
  const spent = spendOf(state, task, now);
  const exceeded = task.budgetExceeded ?? null;
  return { limits, spent, ...budgetReading(limits, spent), exceeded, paused: exceeded?.policy === "pause" };
}
