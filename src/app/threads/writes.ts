import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type {
  LinkPullRequestInput,
  ThreadInterruptInput,
  ThreadInterruptOutput,
  ThreadMetadataOutput,
  ThreadSendInput,
  ThreadSendOutput,
  ThreadUpdateInput,
  UnlinkPullRequestInput,
} from "../../contracts/tools/threadTools.js";
import { activeRunOf } from "../../engine/queries.js";
import { type Caller, ceilingOf, traceField } from "../caller.js";
import { type AppContext, type Executed, execute, requestIds } from "../context.js";
import { fail } from "../errors.js";
import { checkClaim, claimField, claimRequest } from "../idempotency.js";
import { touched } from "../touched.js";
import { authorizeChange } from "./authorize.js";
import { actorOf, sentMessage } from "./sent.js";
import { linkedPullRequest } from "./views.js";
import { regenerateTitle } from "./titleRegeneration.js";

/** t3_thread_send: the send modes of spec 000; the result says which path the message took. */
export async function sendToThread(ctx: AppContext, caller: Caller, input: ThreadSendInput): Promise<ThreadSendOutput> {
  const { acting, target } = authorizeChange(ctx, caller, input.threadId, "t3_thread_send");
  const claim = claimRequest(ctx, acting.requestScope, "t3_thread_send", input);
  const ids = requestIds(acting, "t3_thread_send", input.clientRequestId, ctx.random);
  const messageId = ids.message();
  const executed = await execute(ctx, {
    type: "message.dispatch",
    commandId: ids.command(),
    ...claimField(claim),
    ...traceField(acting.identity),
    data: { threadId: target.id, text: input.message, mode: input.mode ?? "auto", messageId, runId: ids.run(), ...actorOf(acting.kind), ceiling: ceilingOf(acting) },
  });
  checkClaim(ctx, claim);
  const { item, run } = sentMessage(ctx, executed, target.id, messageId);
  const delivery: ThreadSendOutput["delivery"] = run === null ? "queued" : run.messageId !== item?.messageId ? "steered" : run.status === "queued" ? "queued" : "started";
  return {
    threadId: target.id,
    messageId: item?.messageId ?? null,
    runId: run?.id ?? null,
    delivery: input.mode === "restart" && delivery !== "steered" ? "restarted" : delivery,
    runStatus: run?.status ?? null,
    commandId: executed.receipt.commandId,
    sequence: executed.receipt.sequence,
  };
}

/**
 * t3_thread_interrupt: interrupt the selected run, or the newest interruptible
 * one. A terminal run is returned unchanged; no active turn → no_active_run.
 */
export async function interruptThread(ctx: AppContext, caller: Caller, input: ThreadInterruptInput): Promise<ThreadInterruptOutput> {
  const { acting, target } = authorizeChange(ctx, caller, input.threadId, "t3_thread_interrupt");
  const state = ctx.orchestrator.state;
  const run = input.runId === undefined ? activeRunOf(state, target.id) : state.runs.get(input.runId);
  if (input.runId !== undefined && (run === undefined || run?.threadId !== target.id)) fail("run_not_found", `run ${input.runId} does not exist in thread ${target.id}`);
  if (run === null || run === undefined) return { threadId: target.id, runId: null, outcome: "no_active_run", status: null };
  if (isTerminalRunStatus(run.status)) return { threadId: target.id, runId: run.id, outcome: "already_terminal", status: run.status };
  if (run.interruptRequestedAt !== null) return { threadId: target.id, runId: run.id, outcome: "interrupt_requested", status: run.status };
  const ids = requestIds(acting, "t3_thread_interrupt", undefined, ctx.random);
  const executed = await execute(ctx, {
    type: "run.interrupt",
    commandId: ids.command(),
    data: { threadId: target.id, runId: run.id, requestedBy: actorOf(acting.kind).createdBy, ceiling: ceilingOf(acting) },
  });
  const after = touched(executed.events).runs.get(run.id) ?? ctx.orchestrator.state.runs.get(run.id)!;
  return { threadId: target.id, runId: run.id, outcome: "interrupt_requested", status: after.status };
}

function metadataResult(ctx: AppContext, threadId: string, executed: Executed): ThreadMetadataOutput {
  const thread = touched(executed.events).threads.get(threadId) ?? ctx.orchestrator.state.threads.get(threadId)!;
  return {
    threadId,
    commandId: executed.receipt.commandId,
    sequence: executed.receipt.sequence,
    title: thread.title,
    titleRegenerating: thread.titleRegenerating,
    pullRequest: linkedPullRequest(thread),
  };
}

/**
 * t3_thread_update: rename (title required) or regenerate_title (title
 * refused): a titling turn on a provider (titleRegeneration.ts) whose result
 * arrives later; the answer shows the interim title and titleRegenerating.
 */
export async function updateThread(ctx: AppContext, caller: Caller, input: ThreadUpdateInput) {
  const { acting, target } = authorizeChange(ctx, caller, input.threadId, "t3_thread_update");
  const claim = claimRequest(ctx, acting.requestScope, "t3_thread_update", input);
  if (input.action === "set_budget") {
    if (input.title !== undefined) fail("invalid_request", "set_budget takes no title");
    if (input.budget === undefined) fail("invalid_request", "set_budget requires a budget (null clears it)");
    if (acting.kind === "thread") fail("capability_denied", "only the owner sets a root thread's budget; an agent can only narrow its own (delegate_task, t3_workflow_start)");
    if (target.lineage.parentThreadId !== null) fail("invalid_request", `thread ${target.id} is not a root thread: its budget comes from the task or workflow that made it`);
    const ids = requestIds(acting, `t3_thread_update:${input.action}:${target.id}`, input.clientRequestId, ctx.random);
    const executed = await execute(ctx, { type: "thread.budget.set", commandId: ids.command(), ...claimField(claim), data: { threadId: target.id, budget: input.budget } });
    checkClaim(ctx, claim);
    return metadataResult(ctx, target.id, executed);
  }
  if (input.budget !== undefined) fail("invalid_request", `${input.action} takes no budget`);
  if (input.action === "regenerate_title") {
    if (input.title !== undefined) fail("invalid_request", "regenerate_title takes no title");
    return metadataResult(ctx, target.id, await regenerateTitle(ctx, acting, target, input.clientRequestId));
  }
  const title = input.title ?? fail("invalid_request", "rename requires a title");
  const ids = requestIds(acting, `t3_thread_update:${input.action}:${target.id}`, input.clientRequestId, ctx.random);
  const executed = await execute(ctx, { type: "thread.metadata.update", commandId: ids.command(), ...claimField(claim), data: { threadId: target.id, title, ceiling: ceilingOf(acting) } });
  checkClaim(ctx, claim);
  return metadataResult(ctx, target.id, executed);
}

export async function linkPullRequest(ctx: AppContext, caller: Caller, input: LinkPullRequestInput) {
  const { acting, target } = authorizeChange(ctx, caller, input.threadId, "link_pull_request");
  const claim = claimRequest(ctx, acting.requestScope, "link_pull_request", input);
  const ids = requestIds(acting, `link_pull_request:${target.id}`, input.clientRequestId, ctx.random);
  const executed = await execute(ctx, {
    type: "thread.pull-request.link",
    commandId: ids.command(),
    ...claimField(claim),
    data: {
      threadId: target.id,
      url: input.url,
      ...(input.number === undefined ? {} : { number: input.number }),
      ...(input.title === undefined ? {} : { title: input.title }),
      ceiling: ceilingOf(acting),
    },
  });
  checkClaim(ctx, claim);
  return metadataResult(ctx, target.id, executed);
}

export async function unlinkPullRequest(ctx: AppContext, caller: Caller, input: UnlinkPullRequestInput) {
  const { acting, target } = authorizeChange(ctx, caller, input.threadId, "unlink_pull_request");
  const claim = claimRequest(ctx, acting.requestScope, "unlink_pull_request", input);
  const url = input.url ?? target.pullRequests.find((pr) => pr.unlinkedAt === null)?.url ?? fail("invalid_request", `thread ${target.id} has no linked pull request`);
  const ids = requestIds(acting, `unlink_pull_request:${target.id}`, input.clientRequestId, ctx.random);
  const executed = await execute(ctx, { type: "thread.pull-request.unlink", commandId: ids.command(), ...claimField(claim), data: { threadId: target.id, url, ceiling: ceilingOf(acting) } });
  checkClaim(ctx, claim);
  return metadataResult(ctx, target.id, executed);
}
