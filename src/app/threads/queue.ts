import type { Command } from "../../contracts/commands.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { ToolName } from "../../contracts/tools/toolContracts.js";
import type {
  QueueCancelInput,
  QueueChangeOutput,
  QueueEditInput,
  QueueListInput,
  QueueListOutput,
  QueuePromoteInput,
  QueueReadInput,
  QueueReadOutput,
  QueueReorderInput,
  QueuedRunView,
} from "../../contracts/tools/queueTools.js";
import { queuedRunsOf } from "../../core/state.js";
import { activeRunOf } from "../../engine/queries.js";
import type { Ceiling } from "../../contracts/modes.js";
import { type Caller, ceilingOf } from "../caller.js";
import { type AppContext, type Executed, execute, requestIds } from "../context.js";
import { fail } from "../errors.js";
import { touched } from "../touched.js";
import { authorizeChange, liveThreadOrFail } from "./authorize.js";

/**
 * The queue tools (spec 004 §3.5) over the queued-run commands of
 * src/core/run/queue.ts. Reads need only the thread; every change is a
 * change of the target thread, so its command carries the caller's ceiling
 * and the decider refuses it for a thread broader than the caller. Decider rejections reach the caller through the
 * failure table: run_not_found, run_not_queued / message_unchanged /
 * invalid_reorder → invalid_request, no steerable turn → thread_not_sendable.
 */

/** Longest message text a list shows per run; a read shows up to READ_TEXT_LIMIT. */
export const LIST_TEXT_LIMIT = 500;
export const READ_TEXT_LIMIT = 30_000;

function messageText(ctx: AppContext, run: Run): string {
  return run.messageId === null ? "" : (ctx.orchestrator.timeline.userMessage(run.threadId, run.messageId)?.text ?? "");
}

function queuedView(ctx: AppContext, run: Run, position: number, limit: number): QueuedRunView {
  const text = messageText(ctx, run);
  const message = run.messageId === null ? undefined : ctx.orchestrator.timeline.userMessage(run.threadId, run.messageId);
  return {
    runId: run.id,
    position,
    held: run.held,
    kind: run.kind,
    messageId: run.messageId,
    text: text.length > limit ? text.slice(0, limit) : text,
    textLength: text.length,
    truncated: text.length > limit,
    createdBy: message?.createdBy ?? null,
    providerInstanceId: run.providerInstanceId,
    createdAt: run.createdAt,
  };
}

/** The thread's queue in order, as views. */
function queueOf(ctx: AppContext, threadId: string): QueuedRunView[] {
  const state = ctx.orchestrator.state;
  return queuedRunsOf(state, threadId).map((ref, position) => queuedView(ctx, state.runs.get(ref.runId)!, position, LIST_TEXT_LIMIT));
}

/** Whether the active run would take a promoted message now (the decider's canSteer, read-side). */
function steerable(ctx: AppContext, run: Run | null): boolean {
  if (run === null || run.status !== "running" || run.interruptRequestedAt !== null || run.providerInstanceId === null) return false;
  const instance = ctx.registry.instance(run.providerInstanceId);
  const driver = ctx.registry.driverFor(run.providerInstanceId);
  return instance !== null && driver !== null && driver.capabilities(instance).steering;
}

/** t3_queue_list: the runs waiting in a thread's queue, next first. */
export function listQueue(ctx: AppContext, input: QueueListInput): QueueListOutput {
  const thread = liveThreadOrFail(ctx, input.threadId);
  const active = activeRunOf(ctx.orchestrator.state, thread.id);
  return { threadId: thread.id, activeRunId: active?.id ?? null, activeRunStatus: active?.status ?? null, steerable: steerable(ctx, active), runs: queueOf(ctx, thread.id) };
}

/** A queued run of the thread, or run_not_found (unknown, another thread's, or no longer queued). */
function queuedRunOrFail(ctx: AppContext, threadId: string, runId: string): { run: Run; position: number } {
  const state = ctx.orchestrator.state;
  const run = state.runs.get(runId);
  if (run === undefined || run.threadId !== threadId) fail("run_not_found", `run ${runId} does not exist in thread ${threadId}`);
  const position = queuedRunsOf(state, threadId).findIndex((ref) => ref.runId === runId);
  if (position < 0) fail("invalid_request", `run ${runId} is ${run.status}, not queued`);
  return { run, position };
}

/** t3_queue_read: one queued run with its message (up to 30,000 characters). */
export function readQueuedRun(ctx: AppContext, input: QueueReadInput): QueueReadOutput {
  const thread = liveThreadOrFail(ctx, input.threadId);
  const { run, position } = queuedRunOrFail(ctx, thread.id, input.runId);
  return { threadId: thread.id, run: queuedView(ctx, run, position, READ_TEXT_LIMIT) };
}

function changeResult(ctx: AppContext, threadId: string, runId: string | null, executed: Executed, steeredRunId: string | null = null): QueueChangeOutput {
  const run = runId === null ? undefined : (touched(executed.events).runs.get(runId) ?? ctx.orchestrator.state.runs.get(runId));
  return {
    threadId,
    runId,
    runStatus: run?.status ?? null,
    steeredRunId,
    commandId: executed.receipt.commandId,
    sequence: executed.receipt.sequence,
    queue: queueOf(ctx, threadId),
  };
}

/** Authorize the change, then run one queue command with an id derived from clientRequestId (tool, thread and run scoped) and the caller's ceiling. */
async function change(
  ctx: AppContext,
  caller: Caller,
  tool: ToolName,
  threadId: string,
  key: string,
  clientRequestId: string | undefined,
  command: (commandId: string, ceiling: Ceiling) => Command,
): Promise<Executed> {
  const { acting, target } = authorizeChange(ctx, caller, threadId, tool);
  const ids = requestIds(acting, `${tool}:${target.id}:${key}`, clientRequestId);
  return execute(ctx, command(ids.command(), ceilingOf(acting)));
}

/** t3_queue_edit: replace a queued run's message before it starts. */
export async function editQueuedRun(ctx: AppContext, caller: Caller, input: QueueEditInput): Promise<QueueChangeOutput> {
  const executed = await change(ctx, caller, "t3_queue_edit", input.threadId, input.runId, input.clientRequestId, (commandId, ceiling) => ({
    type: "queued-run.edit",
    commandId,
    data: { threadId: input.threadId, runId: input.runId, text: input.message, ceiling },
  }));
  return changeResult(ctx, input.threadId, input.runId, executed);
}

/** t3_queue_cancel: the run ends cancelled without starting; its message stays in the timeline. */
export async function cancelQueuedRun(ctx: AppContext, caller: Caller, input: QueueCancelInput): Promise<QueueChangeOutput> {
  const executed = await change(ctx, caller, "t3_queue_cancel", input.threadId, input.runId, input.clientRequestId, (commandId, ceiling) => ({
    type: "queued-run.cancel",
    commandId,
    data: { threadId: input.threadId, runId: input.runId, ceiling },
  }));
  return changeResult(ctx, input.threadId, input.runId, executed);
}

/** t3_queue_reorder: the whole queue in its new order. */
export async function reorderQueue(ctx: AppContext, caller: Caller, input: QueueReorderInput): Promise<QueueChangeOutput> {
  const executed = await change(ctx, caller, "t3_queue_reorder", input.threadId, "queue", input.clientRequestId, (commandId, ceiling) => ({
    type: "queued-run.reorder",
    commandId,
    data: { threadId: input.threadId, runIds: input.runIds, ceiling },
  }));
  return changeResult(ctx, input.threadId, null, executed);
}

/** t3_queue_promote_to_steer: move a queued message into the running turn as steering input. */
export async function promoteQueuedRun(ctx: AppContext, caller: Caller, input: QueuePromoteInput): Promise<QueueChangeOutput> {
  const executed = await change(ctx, caller, "t3_queue_promote_to_steer", input.threadId, input.runId, input.clientRequestId, (commandId, ceiling) => ({
    type: "queued-message.promote-to-steer",
    commandId,
    data: { threadId: input.threadId, runId: input.runId, ceiling },
  }));
  const moved = [...touched(executed.events).items.values()].find((item) => item.type === "user_message" && item.runId !== input.runId);
  const run = ctx.orchestrator.state.runs.get(input.runId);
  const steered = moved?.runId ?? (run?.messageId == null ? null : (ctx.orchestrator.timeline.userMessage(input.threadId, run.messageId)?.runId ?? null));
  return changeResult(ctx, input.threadId, input.runId, executed, steered);
}
