import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import { TOOL_TASK_BOUNDS, type ToolTask } from "../../contracts/entities/toolTasks.js";
import type { Workflow } from "../../contracts/entities/workflows.js";
import type { OrchestrationState } from "../../core/state.js";
import { type Caller, resolveCaller } from "../caller.js";
import { type AppContext, execute, freshUuid } from "../context.js";
import { fail } from "../errors.js";
import { type DelegatedTaskProgress, delegatedTaskProgress } from "../delegation/taskView.js";
import { taskCancel, taskStatus } from "../delegation/tasks.js";
import { stopWorkflow, workflowStatus } from "../workflows/start.js";
import { type WaitContext, waitUntil } from "../waits.js";
import { type WaitWork, isWaitWork, waitTaskResult, waitTaskView } from "./waitTasks.js";

/**
 * Loom's durable records as MCP 2025-11-25 tasks (docs/mcp.md, "Tasks"). The
 * MCP task id is the record's own id (a delegated task's taskId, a
 * workflow's workflowId, a wait's handle: src/core/toolTasks), so every
 * answer here is read from the engine's projections: it holds after a restart
 * and on any node of a shared PostgreSQL store, and nothing lives in the
 * memory of the MCP session that created the task.
 */

/** The MCP task statuses (2025-11-25 `Task.status`). */
export const DurableTaskStatus = {
  working: "working",
  input_required: "input_required",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
} as const;
export type DurableTaskStatus = (typeof DurableTaskStatus)[keyof typeof DurableTaskStatus];

const TERMINAL: ReadonlySet<DurableTaskStatus> = new Set([DurableTaskStatus.completed, DurableTaskStatus.failed, DurableTaskStatus.cancelled]);

export function isTerminalDurableTaskStatus(status: DurableTaskStatus): boolean {
  return TERMINAL.has(status);
}

/** What a client is told to wait between tasks/get polls when the task has no handle (a delegation made by a plain call). */
export const DURABLE_TASK_POLL_INTERVAL_MS = TOOL_TASK_BOUNDS.pollIntervalMs.default;
/** One tasks/list page. */
export const DURABLE_TASK_PAGE_SIZE = 50;

export interface DurableTask {
  readonly taskId: string;
  readonly status: DurableTaskStatus;
  readonly statusMessage: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  /** The handle's ttl (from createdAt); null for a delegation made by a plain call, which Loom keeps. */
  readonly ttl: number | null;
  readonly pollInterval: number;
}

export interface DurableTaskPage {
  readonly tasks: readonly DurableTask[];
  readonly nextCursor: string | null;
}


/** A durable record kept as an MCP task: a delegated task, a workflow, or a wait's handle. */
type DurableRecord =
  | { readonly kind: "delegated_task"; readonly task: DelegatedTask }
  | { readonly kind: "workflow"; readonly workflow: Workflow }
  | { readonly kind: "wait"; readonly handle: ToolTask; readonly work: WaitWork };

function waitRecord(handle: ToolTask | undefined): DurableRecord | undefined {
  return handle !== undefined && isWaitWork(handle.work) ? { kind: "wait", handle, work: handle.work } : undefined;
}

function findRecord(state: OrchestrationState, id: string): DurableRecord | undefined {
  const wait = waitRecord(state.toolTasks.get(id));
  if (wait !== undefined) return wait;
  const task = state.tasks.get(id);
  if (task !== undefined) return { kind: "delegated_task", task };
  const workflow = state.workflows.get(id);
  return workflow === undefined ? undefined : { kind: "workflow", workflow };
}

function recordId(record: DurableRecord): string {
  return record.kind === "delegated_task" ? record.task.taskId : record.kind === "workflow" ? record.workflow.workflowId : record.handle.taskId;
}

/** The thread whose credentials see the record (null: the owner's alone). */
function parentOf(record: DurableRecord): string | null {
  return record.kind === "delegated_task" ? record.task.parentThreadId : record.kind === "workflow" ? record.workflow.parentThreadId : record.handle.ownerThreadId;
}

/** Past its handle's ttl a task is no longer answered (the work's own record stays: task_status still reads a delegation). */
function expired(ctx: AppContext, record: DurableRecord): boolean {
  const handle = ctx.orchestrator.state.toolTasks.get(recordId(record));
  return handle !== undefined && ctx.clock() >= Date.parse(handle.expiresAt);
}

/** The caller's record: its parent thread's, or any for the owner; every other id is task_not_found. */
function ownRecord(ctx: AppContext, caller: Caller, taskId: string, operation: "task_status" | "task_cancel"): DurableRecord {
  const acting = resolveCaller(ctx.orchestrator.state, caller, operation);
  const record = findRecord(ctx.orchestrator.state, taskId);
  if (record === undefined || (acting.thread !== null && parentOf(record) !== acting.thread.id) || expired(ctx, record)) {
    fail("task_not_found", `no task ${taskId} belongs to this caller`);
  }
  return record;
}

function current(ctx: AppContext, record: DurableRecord): DurableRecord {
  return findRecord(ctx.orchestrator.state, recordId(record)) ?? record;
}

function viewOf(ctx: AppContext, caller: Caller, record: DurableRecord): DurableTask {
  const handle = ctx.orchestrator.state.toolTasks.get(recordId(record));
  const timing = { ttl: handle?.ttlMs ?? null, pollInterval: handle?.pollIntervalMs ?? DURABLE_TASK_POLL_INTERVAL_MS };
  if (record.kind === "wait") {
    const { status, statusMessage, lastUpdatedAt } = waitTaskView(ctx, record.handle, record.work);
    return { taskId: record.handle.taskId, status, statusMessage, createdAt: record.handle.createdAt, lastUpdatedAt, ...timing };
  }
  const { status, statusMessage } = record.kind === "delegated_task" ? delegatedStatus(caller, record.task, delegatedTaskProgress(ctx.orchestrator.state, record.task)) : workflowStatusOf(ctx, caller, record.workflow);
  const { createdAt, updatedAt } = record.kind === "delegated_task" ? record.task : record.workflow;
  return { taskId: recordId(record), status, statusMessage, createdAt, lastUpdatedAt: updatedAt, ...timing };
}

/**
 * The MCP status of a delegated task: final results map by their status (an
 * interrupted task, and one whose cancel was asked for, are cancelled); an
 * unfinished task is input_required while its child waits on a question, or
 * on an approval this caller may decide (routed to the parent, or asked by
 * the owner), and working otherwise (also while a usage limit holds the
 * child and its work resumes by itself).
 */
function delegatedStatus(caller: Caller, task: DelegatedTask, progress: DelegatedTaskProgress): { status: DurableTaskStatus; statusMessage: string } {
  const child = `child thread ${task.childThreadId}`;
  if (progress.final) {
    const summary = task.summary ?? "no summary";
    if (task.cancelRequestedAt !== null || task.status === "cancelled" || task.status === "interrupted") {
      return { status: DurableTaskStatus.cancelled, statusMessage: `task ${task.status}: ${summary}` };
    }
    if (task.status === "failed") return { status: DurableTaskStatus.failed, statusMessage: summary };
    return { status: DurableTaskStatus.completed, statusMessage: summary };
  }
  if (task.cancelRequestedAt !== null) {
    return { status: DurableTaskStatus.cancelled, statusMessage: `cancellation requested; ${child} is stopping` };
  }
  if (progress.question !== undefined) {
    return {
      status: DurableTaskStatus.input_required,
      statusMessage: `${child} asks a question: read it with t3_pending_request_list and t3_pending_request_read (threadId ${task.childThreadId}), answer with t3_pending_request_respond`,
    };
  }
  const { approval } = progress;
  if (approval !== undefined && (caller.kind === "owner" || task.approvalRouting === "parent")) {
    return {
      status: DurableTaskStatus.input_required,
      statusMessage: `${child} asks for approval (${approval.kind}, requestId ${approval.id}): decide with t3_pending_request_respond`,
    };
  }
  if (approval !== undefined) return { status: DurableTaskStatus.working, statusMessage: `${child} waits on the owner's approval (requestId ${approval.id})` };
  // A child a usage limit stopped resumes by itself after the reset: the task waits, it has not failed (docs/mcp.md, "Tasks through a usage limit").
  if (progress.limit?.status === "waiting_on_limit") return { status: DurableTaskStatus.working, statusMessage: `${child} was stopped by a usage limit: ${progress.limit.text}` };
  return { status: DurableTaskStatus.working, statusMessage: `${child} is ${progress.status}` };
}

/**
 * A workflow's MCP status: running is input_required while one of its
 * unfinished agent() tasks is (a question, or an approval this caller may
 * decide), working otherwise; stopped is cancelled.
 */
function workflowStatusOf(ctx: AppContext, caller: Caller, workflow: Workflow): { status: DurableTaskStatus; statusMessage: string } {
  switch (workflow.status) {
    case "running":
      for (const step of workflow.steps) {
        const task = step.taskId === null ? undefined : ctx.orchestrator.state.tasks.get(step.taskId);
        if (task === undefined || task.resultContextTransferId !== null) continue;
        const waiting = delegatedStatus(caller, task, delegatedTaskProgress(ctx.orchestrator.state, task));
        if (waiting.status === DurableTaskStatus.input_required) return { status: waiting.status, statusMessage: `workflow step ${step.index}${step.label === null ? "" : ` (${step.label})`}: ${waiting.statusMessage}` };
      }
      return { status: DurableTaskStatus.working, statusMessage: `workflow ${workflow.workflowId} is running${workflow.currentPhase === null ? "" : ` (phase ${workflow.currentPhase})`}` };
    case "completed":
      return { status: DurableTaskStatus.completed, statusMessage: `workflow ${workflow.workflowId} completed` };
    case "failed":
      return { status: DurableTaskStatus.failed, statusMessage: workflow.error === null ? "the workflow failed" : `${workflow.error.code}: ${workflow.error.message}` };
    case "stopped":
      return { status: DurableTaskStatus.cancelled, statusMessage: `workflow ${workflow.workflowId} was stopped` };
  }
}

/** tasks/get: the task as it is now. */
export function getDurableTask(ctx: AppContext, caller: Caller, taskId: string): DurableTask {
  return viewOf(ctx, caller, ownRecord(ctx, caller, taskId, "task_status"));
}

/**
 * tasks/result: wait (without the waits.maxWaitMs cap: tasks/result blocks
 * until the task ends) until the task is terminal, then answer what the
 * task-less call in mode wait would have: a delegated task's
 * DelegateTaskResult, read as task_status reads it (an agent's read
 * acknowledges the result, so the parent is not also woken for it), a
 * workflow's t3_workflow_status record, a wait tool's own result
 * (src/app/durableTasks/waitTasks.ts). A call the client cuts off fails.
 */
export async function durableTaskResult(ctx: AppContext, caller: Caller, taskId: string, wait: WaitContext): Promise<Record<string, unknown>> {
  const record = ownRecord(ctx, caller, taskId, "task_status");
  const status = () => viewOf(ctx, caller, current(ctx, record)).status;
  while (!(await waitUntil(ctx, wait, ctx.maxWaitMs, () => isTerminalDurableTaskStatus(status()), () => `task ${taskId} is ${status()}`))) {
    if (wait.signal.aborted) fail("orchestration_error", `tasks/result for ${taskId} was cut off before the task ended`);
  }
  if (record.kind === "workflow") return workflowStatus(ctx, caller, { workflowId: taskId });
  if (record.kind === "wait") return waitTaskResult(ctx, caller, record.work);
  return taskStatus(ctx, caller, { taskId });
}

/** tasks/list: the caller's tasks (the owner's: every one), oldest first, DURABLE_TASK_PAGE_SIZE a page. */
export function listDurableTasks(ctx: AppContext, caller: Caller, cursor: string | undefined): DurableTaskPage {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "task_status");
  const offset = cursor === undefined ? 0 : Number(cursor);
  if (!Number.isSafeInteger(offset) || offset < 0 || String(offset) !== (cursor ?? "0")) fail("invalid_request", `unknown tasks/list cursor ${JSON.stringify(cursor)}`);
  const state = ctx.orchestrator.state;
  const records: DurableRecord[] = [
    ...[...state.tasks.values()].map((task) => ({ kind: "delegated_task", task }) as const),
    ...[...state.workflows.values()].map((workflow) => ({ kind: "workflow", workflow }) as const),
    ...[...state.toolTasks.values()].flatMap((handle) => waitRecord(handle) ?? []),
  ];
  const own = records
    .filter((record) => (acting.thread === null || parentOf(record) === acting.thread.id) && !expired(ctx, record))
    .map((record) => viewOf(ctx, caller, record))
    .sort((a, b) => (a.createdAt === b.createdAt ? (a.taskId < b.taskId ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
  const next = offset + DURABLE_TASK_PAGE_SIZE;
  return { tasks: own.slice(offset, next), nextCursor: next < own.length ? String(next) : null };
}

/**
 * tasks/cancel: what task_cancel does for a delegated task (subagent.stop:
 * the child's own tasks, then the child thread), what t3_workflow_stop does
 * for a workflow; a wait's handle is cancelled (the wait ends, nothing it
 * waited on is). A task that is terminal already is task_not_cancellable,
 * as MCP asks, and nothing is written.
 */
export async function cancelDurableTask(ctx: AppContext, caller: Caller, taskId: string): Promise<DurableTask> {
  const record = ownRecord(ctx, caller, taskId, "task_cancel");
  const before = viewOf(ctx, caller, record);
  if (isTerminalDurableTaskStatus(before.status)) fail("task_not_cancellable", `task ${taskId} is ${before.status} already`);
  if (record.kind === "workflow") await stopWorkflow(ctx, caller, { workflowId: taskId, reason: "tasks/cancel" });
  else if (record.kind === "wait") await execute(ctx, { type: "tool-task.cancel", commandId: `cmd:${freshUuid(ctx)}`, data: { taskId } });
  else await taskCancel(ctx, caller, { taskId, reason: "tasks/cancel" });
  return viewOf(ctx, caller, current(ctx, record));
}

/** A watch of one task's status; close() ends it (it ends by itself once the task is terminal). */
export interface DurableTaskWatch {
  close(): void;
}

/**
 * notifications/tasks/status while the creating MCP session is open: call
 * `onChange` with the task each time its status changes from `known` (what
 * the client was last told), checked
 * once per burst of committed events (on this node's fold, so a commit of
 * another node is seen too). The last call is a terminal status.
 */
export function watchDurableTask(ctx: AppContext, caller: Caller, taskId: string, known: DurableTaskStatus, onChange: (task: DurableTask) => void): DurableTaskWatch {
  const record = ownRecord(ctx, caller, taskId, "task_status");
  let last = known;
  let closed = false;
  let checkQueued = false;
  const close = () => {
    if (closed) return;
    closed = true;
    subscription.close();
  };
  const check = () => {
    checkQueued = false;
    if (closed) return;
    let task: DurableTask;
    try {
      task = viewOf(ctx, caller, current(ctx, record));
    } catch {
      // The store closed under the watch (the server is stopping): nothing more to tell.
      close();
      return;
    }
    if (task.status !== last) {
      last = task.status;
      onChange(task);
    }
    if (isTerminalDurableTaskStatus(task.status)) close();
  };
  const subscription = ctx.orchestrator.follow(ctx.orchestrator.state.lastSequence, () => {
    if (checkQueued || closed) return;
    checkQueued = true;
    queueMicrotask(check);
  });
  // A change between what the client was told and now is told at once.
  queueMicrotask(check);
  return { close };
}
