import { TOOL_TASK_BOUNDS, type ToolTaskWork } from "../../contracts/entities/toolTasks.js";
import type { BackgroundWaitInput } from "../../contracts/tools/backgroundTools.js";
import type { DelegateTaskInput } from "../../contracts/tools/delegationTools.js";
import type { ThreadSendInput, ThreadWaitInput } from "../../contracts/tools/threadTools.js";
import { joinId } from "../../core/ids.js";
import { latestRunOf } from "../../engine/queries.js";
import { type Caller, resolveCaller } from "../caller.js";
import { type AppContext, execute, freshUuid } from "../context.js";
import { delegateAsToolTask } from "../delegation/delegate.js";
import { fail } from "../errors.js";
import { liveThreadOrFail } from "../threads/authorize.js";
import { sendToThread } from "../threads/writes.js";

/**
 * The durable handle of a task-augmented tool call (docs/mcp.md, "Tasks"):
 * the `tool-task.create` command, with the requested ttl and poll interval
 * bounded by TOOL_TASK_BOUNDS. A request out of range is clamped; one that
 * is not a number of milliseconds, 0 or more, is refused before anything is
 * written.
 */

/** The task params of a task-augmented call (MCP `params.task`). */
export interface TaskTimingRequest {
  readonly ttl?: unknown;
  readonly pollInterval?: unknown;
}

export interface TaskTiming {
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
}

export function taskTiming(requested: TaskTimingRequest): TaskTiming {
  const bounded = (field: "ttl" | "pollInterval", value: unknown, bounds: { readonly min: number; readonly max: number; readonly default: number }) => {
    if (value === undefined || value === null) return bounds.default;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) fail("invalid_request", `task.${field} must be a number of milliseconds, 0 or more`);
    return Math.min(bounds.max, Math.max(bounds.min, Math.ceil(value)));
  };
  return { ttlMs: bounded("ttl", requested.ttl, TOOL_TASK_BOUNDS.ttlMs), pollIntervalMs: bounded("pollInterval", requested.pollInterval, TOOL_TASK_BOUNDS.pollIntervalMs) };
}

/** A wait tool's call, to be served as a task: the tool and its parsed input. */
export type WaitTaskStart =
  | { readonly tool: "t3_thread_wait"; readonly input: ThreadWaitInput }
  | { readonly tool: "t3_background_wait"; readonly input: BackgroundWaitInput }
  | { readonly tool: "t3_thread_send"; readonly input: ThreadSendInput };

/**
 * A wait served as a task: what the task-less call would wait on is pinned
 * now (t3_thread_wait's run, the tasks t3_background_wait reports, the run
 * t3_thread_send delivered into, after the send itself) and recorded as the
 * task. The task id of a keyed t3_thread_send is derived from its
 * clientRequestId, so a retried call is the same task. Returns the task id.
 */
export async function startWaitTask(ctx: AppContext, caller: Caller, start: WaitTaskStart, timing: TaskTiming): Promise<string> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, start.tool);
  const ownerThreadId = acting.thread?.id ?? null;
  let taskId = `tool-task:${freshUuid(ctx)}`;
  let work: ToolTaskWork;
  switch (start.tool) {
    case "t3_thread_wait": {
      const thread = liveThreadOrFail(ctx, start.input.threadId);
      const runId = start.input.runId ?? latestRunOf(ctx.orchestrator.state, thread.id)?.id ?? null;
      work = { tool: start.tool, threadId: thread.id, runId };
      break;
    }
    case "t3_background_wait": {
      const threadId = start.input.threadId ?? ownerThreadId ?? fail("invalid_request", "threadId is required for a caller outside a thread");
      liveThreadOrFail(ctx, threadId);
      const taskIds = [...ctx.orchestrator.state.tasks.values()].filter((task) => task.parentThreadId === threadId && task.resultContextTransferId === null).map((task) => task.taskId);
      work = { tool: start.tool, threadId, taskIds };
      break;
    }
    case "t3_thread_send": {
      const sent = await sendToThread(ctx, caller, start.input);
      if (start.input.clientRequestId !== undefined) taskId = joinId("tool-task", acting.requestScope, "t3_thread_send", start.input.clientRequestId);
      work = { tool: start.tool, threadId: sent.threadId, messageId: sent.messageId, runId: sent.runId, delivery: sent.delivery, commandId: sent.commandId, sequence: sent.sequence };
      break;
    }
  }
  await recordHandle(ctx, taskId, ownerThreadId, work, timing);
  return taskId;
}

/**
 * delegate_task served as a task: the delegation records its handle in its
 * own command (one commit). A task a plain call made first (a retry with
 * its clientRequestId) gets its handle now. Returns the task id.
 */
export async function startDelegationTask(ctx: AppContext, caller: Caller, input: DelegateTaskInput, timing: TaskTiming): Promise<string> {
  const { dryRun, ...rest } = input;
  if (dryRun === true) fail("invalid_request", "a dryRun of delegate_task records nothing, so it cannot be a task");
  // The request as given (a dryRun: false stays), so its clientRequestId fingerprint is the plain call's.
  const task = await delegateAsToolTask(ctx, caller, dryRun === undefined ? rest : { ...rest, dryRun }, timing);
  if (!ctx.orchestrator.state.toolTasks.has(task.taskId)) await recordTaskHandle(ctx, caller, "delegate_task", task.taskId, timing);
  return task.taskId;
}

/** delegate_task or t3_workflow_start served as a task: its record exists (the async call made it); the handle keeps the task's timing. */
export async function recordTaskHandle(ctx: AppContext, caller: Caller, tool: "delegate_task" | "t3_workflow_start", taskId: string, timing: TaskTiming): Promise<void> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "task_status");
  await recordHandle(ctx, taskId, acting.thread?.id ?? null, { tool }, timing);
}

async function recordHandle(ctx: AppContext, taskId: string, ownerThreadId: string | null, work: ToolTaskWork, timing: TaskTiming): Promise<void> {
  // One command id per task: a retried call's create is answered with the first one's receipt.
  await execute(ctx, { type: "tool-task.create", commandId: joinId("cmd", "tool-task", taskId, "owner", ownerThreadId ?? "owner"), data: { taskId, ownerThreadId, work, ...timing } });
}
