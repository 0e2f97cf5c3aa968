import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { activeRunOf } from "../../engine/queries.js";
import type { McpInvocationScope } from "../credentialRegistry.js";
import type { LinkPullRequestInput, ThreadInterruptInput, ThreadSendInput, ThreadUpdateInput, UnlinkPullRequestInput } from "../toolkits/threads/schemas.js";
import { type ThreadToolsContext, dispatchOrFail, fail, requestIds } from "./context.js";
import { type Caller, callerOf, checkCeiling, requireLiveRunFor } from "./policy.js";
import { liveThreadOrFail } from "./reads.js";
import { titleFromText } from "./views.js";

/** The caller may change the target: a live run for another thread, and the privilege ceiling. */
function authorize(ctx: ThreadToolsContext, scope: McpInvocationScope, threadId: string | undefined) {
  const caller = callerOf(ctx.orchestrator.state, scope);
  const targetId = threadId ?? caller.thread?.id ?? fail("invalid_request", "threadId is required for a caller outside a thread");
  const target = liveThreadOrFail(ctx, targetId);
  requireLiveRunFor(caller, target.id);
  if (target.id !== caller.thread?.id) checkCeiling(caller, target);
  return { caller, target };
}

function actorOf(caller: Caller) {
  return { createdBy: caller.kind === "thread" ? ("agent" as const) : ("user" as const), creationSource: "mcp" as const };
}

/** t3_thread_send: the send modes of spec 000; the result says which path the message took. */
export { actorOf };

export async function sendToThread(ctx: ThreadToolsContext, scope: McpInvocationScope, input: ThreadSendInput) {
  const { caller, target } = authorize(ctx, scope, input.threadId);
  const ids = requestIds(caller, "t3_thread_send", input.clientRequestId);
  const messageId = ids.message();
  const receipt = await dispatchOrFail(ctx, {
    type: "message.dispatch",
    commandId: ids.command(),
    data: { threadId: target.id, text: input.message, mode: input.mode ?? "auto", messageId, runId: ids.run(), ...actorOf(caller) },
  });
  const state = ctx.orchestrator.state;
  const item = (state.turnItems.get(target.id) ?? []).find(
    (candidate): candidate is Extract<TurnItem, { type: "user_message" }> => candidate?.type === "user_message" && candidate.messageId === messageId,
  );
  const run = item?.runId ? state.runs.get(item.runId) : undefined;
  const delivery = run === undefined ? "queued" : run.messageId !== item?.messageId ? "steered" : run.status === "queued" ? "queued" : "started";
  return {
    threadId: target.id,
    messageId: item?.messageId ?? null,
    runId: run?.id ?? null,
    delivery: input.mode === "restart" && delivery !== "steered" ? "restarted" : delivery,
    runStatus: run?.status ?? null,
    commandId: receipt.commandId,
    sequence: receipt.sequence,
  };
}

/**
 * t3_thread_interrupt: interrupt the selected run, or the newest interruptible
 * one. A terminal run is returned unchanged; no active turn → no_active_run.
 */
export async function interruptThread(ctx: ThreadToolsContext, scope: McpInvocationScope, input: ThreadInterruptInput) {
  const { caller, target } = authorize(ctx, scope, input.threadId);
  const state = ctx.orchestrator.state;
  const run = input.runId === undefined ? activeRunOf(state, target.id) : state.runs.get(input.runId);
  if (input.runId !== undefined && (run === undefined || run?.threadId !== target.id)) fail("run_not_found", `run ${input.runId} does not exist in thread ${target.id}`);
  if (run === null || run === undefined) return { threadId: target.id, runId: null, outcome: "no_active_run", status: null };
  if (isTerminalRunStatus(run.status)) return { threadId: target.id, runId: run.id, outcome: "already_terminal", status: run.status };
  if (run.interruptRequestedAt !== null) return { threadId: target.id, runId: run.id, outcome: "interrupt_requested", status: run.status };
  const ids = requestIds(caller, "t3_thread_interrupt", undefined);
  await dispatchOrFail(ctx, { type: "run.interrupt", commandId: ids.command(), data: { threadId: target.id, runId: run.id, requestedBy: actorOf(caller).createdBy } });
  return { threadId: target.id, runId: run.id, outcome: "interrupt_requested", status: ctx.orchestrator.state.runs.get(run.id)!.status };
}

function metadataResult(ctx: ThreadToolsContext, threadId: string, receipt: { commandId: string; sequence: number }) {
  const thread = ctx.orchestrator.state.threads.get(threadId)!;
  const linked = thread.pullRequests.find((pr) => pr.unlinkedAt === null) ?? null;
  return {
    threadId,
    commandId: receipt.commandId,
    sequence: receipt.sequence,
    title: thread.title,
    titleRegenerating: thread.titleRegenerating,
    pullRequest: linked === null ? null : { url: linked.url, number: linked.number, title: linked.title },
  };
}

/** A title from the thread's first user message: its first line, at most 60 characters. */
export function titleFromMessages(items: readonly (TurnItem | undefined)[]): string | null {
  const first = items.find((item) => item?.type === "user_message");
  return first?.type === "user_message" ? titleFromText(first.text) : null;
}

/** t3_thread_update: rename (title required) or regenerate_title (title refused). */
export async function updateThread(ctx: ThreadToolsContext, scope: McpInvocationScope, input: ThreadUpdateInput) {
  const { caller, target } = authorize(ctx, scope, input.threadId);
  let title: string;
  if (input.action === "rename") {
    title = input.title ?? fail("invalid_request", "rename requires a title");
  } else {
    if (input.title !== undefined) fail("invalid_request", "regenerate_title takes no title");
    title = titleFromMessages(ctx.orchestrator.state.turnItems.get(target.id) ?? []) ?? fail("invalid_request", `thread ${target.id} has no message to make a title from`);
  }
  const ids = requestIds(caller, `t3_thread_update:${input.action}:${target.id}`, input.clientRequestId);
  const receipt = await dispatchOrFail(ctx, { type: "thread.metadata.update", commandId: ids.command(), data: { threadId: target.id, title } });
  return metadataResult(ctx, target.id, receipt);
}

export async function linkPullRequest(ctx: ThreadToolsContext, scope: McpInvocationScope, input: LinkPullRequestInput) {
  const { caller, target } = authorize(ctx, scope, input.threadId);
  const ids = requestIds(caller, `link_pull_request:${target.id}`, input.clientRequestId);
  const receipt = await dispatchOrFail(ctx, {
    type: "thread.pull-request.link",
    commandId: ids.command(),
    data: { threadId: target.id, url: input.url, ...(input.number === undefined ? {} : { number: input.number }), ...(input.title === undefined ? {} : { title: input.title }) },
  });
  return metadataResult(ctx, target.id, receipt);
}

export async function unlinkPullRequest(ctx: ThreadToolsContext, scope: McpInvocationScope, input: UnlinkPullRequestInput) {
  const { caller, target } = authorize(ctx, scope, input.threadId);
  const url = input.url ?? target.pullRequests.find((pr) => pr.unlinkedAt === null)?.url ?? fail("invalid_request", `thread ${target.id} has no linked pull request`);
  const ids = requestIds(caller, `unlink_pull_request:${target.id}`, input.clientRequestId);
  const receipt = await dispatchOrFail(ctx, { type: "thread.pull-request.unlink", commandId: ids.command(), data: { threadId: target.id, url } });
  return metadataResult(ctx, target.id, receipt);
}
