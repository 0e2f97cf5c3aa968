import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type { ToolTask, ToolTaskWork } from "../../contracts/entities/toolTasks.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { delegateTaskResult } from "../delegation/taskView.js";
import { holdingBackgroundTasks, waitForBackgroundWork } from "../threads/backgroundWait.js";
import { waitForThread } from "../threads/threadWait.js";
import { UNOBSERVED_WAIT } from "../waits.js";
import { runOfWork } from "./runOfWork.js";
import type { DurableTaskStatus } from "./durableTasks.js";

/**
 * Waits served as MCP tasks (docs/mcp.md, "Tasks"): their status and result
 * read from the engine's state and the wait's handle (src/core/toolTasks),
 * so any node answers them, after a restart too. The result is what the
 * task-less call answers once its wait is over: a cancelled task's wait is
 * over when it was cancelled, so its result says where things stood.
 */

export type WaitWork = Extract<ToolTaskWork, { tool: "t3_thread_wait" | "t3_background_wait" | "t3_thread_send" }>;

export function isWaitWork(work: ToolTaskWork): work is WaitWork {
  return work.tool === "t3_thread_wait" || work.tool === "t3_background_wait" || work.tool === "t3_thread_send";
}

export interface WaitTaskView {
  readonly status: DurableTaskStatus;
  readonly statusMessage: string;
  readonly lastUpdatedAt: string;
}

const later = (a: string, b: string | undefined) => (b !== undefined && b > a ? b : a);

/** A run wait is input_required while the run waits on an answer (a question or an approval), answered through t3_pending_request_respond. */
function runWaitView(ctx: AppContext, task: ToolTask, threadId: string, runId: string | null): WaitTaskView {
  if (runId === null) return { status: "completed", statusMessage: `thread ${threadId} had no run to wait for`, lastUpdatedAt: task.updatedAt };
  // A run a usage limit stopped is waited through, as the plain call waits: its work's resumed run is the one followed.
  const work = runOfWork(ctx, threadId, runId);
  const run = work?.run;
  const lastUpdatedAt = later(later(task.updatedAt, ctx.orchestrator.state.threads.get(threadId)?.updatedAt), run?.updatedAt);
  if (task.cancelledAt !== null) return { status: "cancelled", statusMessage: `the wait was cancelled; run ${run?.id ?? runId} goes on`, lastUpdatedAt };
  if (work?.limit != null) return { status: "working", statusMessage: `run ${work.run.id} was stopped by a usage limit: ${work.limit.text}`, lastUpdatedAt };
  if (run === undefined || isTerminalRunStatus(run.status)) return { status: "completed", statusMessage: `run ${run?.id ?? runId} is ${run?.status ?? "gone"}`, lastUpdatedAt };
  if (run.status === "waiting_on_user_input" || run.status === "waiting_on_approval") {
    return {
      status: "input_required",
      statusMessage: `run ${runId} is ${run.status}: read the request with t3_pending_request_list (threadId ${threadId}), answer with t3_pending_request_respond`,
      lastUpdatedAt,
    };
  }
  return { status: "working", statusMessage: `run ${runId} is ${run.status}`, lastUpdatedAt };
}

function backgroundView(ctx: AppContext, task: ToolTask, threadId: string, taskIds: readonly string[]): WaitTaskView {
  const state = ctx.orchestrator.state;
  const watched = taskIds.flatMap((taskId) => state.tasks.get(taskId) ?? []);
  const lastUpdatedAt = watched.reduce((at, watchedTask) => later(at, watchedTask.updatedAt), task.updatedAt);
  if (task.cancelledAt !== null) return { status: "cancelled", statusMessage: `the wait was cancelled; thread ${threadId}'s background work goes on`, lastUpdatedAt };
  const thread = state.threads.get(threadId);
  const unfinished = [...state.tasks.values()].filter((candidate) => candidate.parentThreadId === threadId && candidate.resultContextTransferId === null).length;
  const holding = thread === undefined ? 0 : holdingBackgroundTasks(thread).length;
  if (unfinished + holding === 0) return { status: "completed", statusMessage: `thread ${threadId}'s background work settled`, lastUpdatedAt };
  const asking = watched.find((watchedTask) => watchedTask.resultContextTransferId === null && delegateTaskResult(ctx.orchestrator, watchedTask, false).hasPendingQuestion);
  if (asking !== undefined) {
    return {
      status: "input_required",
      statusMessage: `child thread ${asking.childThreadId} asks a question: read it with t3_pending_request_list and t3_pending_request_read (threadId ${asking.childThreadId}), answer with t3_pending_request_respond`,
      lastUpdatedAt,
    };
  }
  const left = unfinished + holding;
  return { status: "working", statusMessage: `${left} background item${left === 1 ? "" : "s"} of thread ${threadId} still running`, lastUpdatedAt };
}

export function waitTaskView(ctx: AppContext, task: ToolTask, work: WaitWork): WaitTaskView {
  switch (work.tool) {
    case "t3_thread_wait":
    case "t3_thread_send":
      return runWaitView(ctx, task, work.threadId, work.runId);
    case "t3_background_wait":
      return backgroundView(ctx, task, work.threadId, work.taskIds);
  }
}

/** The task-less call's answer, once the task is terminal. */
export async function waitTaskResult(ctx: AppContext, caller: Caller, work: WaitWork): Promise<Record<string, unknown>> {
  switch (work.tool) {
    case "t3_thread_wait":
      if (work.runId === null) return { threadId: work.threadId, runId: null, status: "idle", terminal: true, waitTimedOut: false, result: null, error: null, endReason: null };
      return waitForThread(ctx, { threadId: work.threadId, runId: runOfWork(ctx, work.threadId, work.runId)?.run.id ?? work.runId, timeoutMs: 0 }, UNOBSERVED_WAIT);
    case "t3_background_wait":
      return waitForBackgroundWork(ctx, caller, { threadId: work.threadId, timeoutMs: 0 }, UNOBSERVED_WAIT, work.taskIds);
    case "t3_thread_send": {
      const run = work.runId === null ? undefined : runOfWork(ctx, work.threadId, work.runId)?.run;
      const { threadId, messageId, runId, delivery, commandId, sequence } = work;
      return { threadId, messageId, runId, delivery, runStatus: run?.status ?? null, commandId, sequence };
    }
  }
}
