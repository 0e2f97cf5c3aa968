import { APPROVALS_WITHIN_MODE, type ApprovalKind, isApprovalKind, type RuntimeRequest } from "../../contracts/entities/runtimeRequests.js";
import { ApprovalDecision } from "../../contracts/turnItemParts.js";
import type { PendingRequestListInput, PendingRequestReadInput, PendingRequestRespondInput } from "../../contracts/tools/delegationTools.js";
import { type ActingCaller, type Caller, ceilingOf } from "../caller.js";
import { type AppContext, execute, freshUuid } from "../context.js";
import { fail } from "../errors.js";
import { authorizeChange, liveThreadOrFail } from "../threads/authorize.js";

function summarize(request: RuntimeRequest) {
  const questions = (request.payload.questions as { id: string; question: string }[] | undefined) ?? [];
  return {
    requestId: request.id,
    threadId: request.threadId,
    runId: request.runId,
    kind: request.kind,
    status: request.status,
    blocking: request.blocking,
    createdAt: request.createdAt,
    summary: request.kind === "user_input" ? questions.map((q) => q.question).join(" / ") : (typeof request.payload.title === "string" ? request.payload.title : request.kind),
  };
}

/** t3_pending_request_list: the thread's pending requests (questions and approvals). */
export function listPendingRequests(ctx: AppContext, input: PendingRequestListInput) {
  const thread = liveThreadOrFail(ctx, input.threadId);
  const requests = [...ctx.orchestrator.state.runtimeRequests.values()].filter((r) => r.threadId === thread.id && r.status === "pending");
  return { threadId: thread.id, requests: requests.map(summarize) };
}

/** t3_pending_request_read: the fresh full request; the durable record can outlive its provider callback. */
export function readPendingRequest(ctx: AppContext, input: PendingRequestReadInput) {
  liveThreadOrFail(ctx, input.threadId);
  const request = ctx.orchestrator.state.runtimeRequests.get(input.requestId);
  if (request === undefined || request.threadId !== input.threadId) fail("invalid_request", `request ${input.requestId} does not exist in thread ${input.threadId}`);
  return { ...summarize(request), payload: request.payload, resolution: request.resolution, resolvedAt: request.resolvedAt };
}

/**
 * Whether the caller may decide this approval (docs/delegation.md,
 * Approvals). The owner may decide any. An agent only a child's it delegated
 * with approvalRouting parent, and may accept only what its own runtime mode
 * allows without asking; declining is always within reach.
 */
function authorizeDecision(ctx: AppContext, acting: ActingCaller, request: RuntimeRequest, decision: ApprovalDecision): void {
  if (acting.thread === null) return;
  const state = ctx.orchestrator.state;
  const taskId = state.taskByChildThread.get(request.threadId);
  const task = taskId === undefined ? undefined : state.tasks.get(taskId);
  if (task === undefined || task.parentThreadId !== acting.thread.id || task.approvalRouting !== "parent") {
    fail("capability_denied", `approval ${request.id} is the user's to decide: only a parent that delegated with approvalRouting "parent" may decide its child's approvals`);
  }
  const grants = decision === ApprovalDecision.accept || decision === ApprovalDecision.acceptForSession;
  if (grants && !isApprovalKind(request.kind)) fail("capability_denied", `request ${request.id} (${request.kind}) is the user's to decide`);
  if (grants && !APPROVALS_WITHIN_MODE[acting.thread.runtimeMode].includes(request.kind as ApprovalKind)) {
    fail("capability_denied", `your runtime mode ${acting.thread.runtimeMode} does not cover a ${request.kind} approval: decline it, or leave it to the user`);
  }
}

/**
 * t3_pending_request_respond: answer (or dismiss) a question, or decide an
 * approval of a child delegated with approvalRouting parent (within the
 * caller's own runtime mode; spec 000 grants agents no approval authority
 * otherwise).
 */
export async function respondToPendingRequest(ctx: AppContext, caller: Caller, input: PendingRequestRespondInput) {
  const { acting, target: thread } = authorizeChange(ctx, caller, input.threadId, "t3_pending_request_respond");
  const request = ctx.orchestrator.state.runtimeRequests.get(input.requestId);
  if (request === undefined || request.threadId !== thread.id) fail("invalid_request", `request ${input.requestId} does not exist in thread ${thread.id}`);
  if (request.status !== "pending") fail("invalid_request", `request ${request.id} is already ${request.status}`);
  const commandId = `cmd:pending_request_respond:${freshUuid(ctx)}`;
  const ceiling = ceilingOf(acting);
  if (request.kind !== "user_input") {
    if (input.decision === undefined || input.answer !== undefined || input.answers !== undefined || input.dismiss !== undefined) {
      fail("invalid_request", `request ${request.id} is an approval (${request.kind}): give decision ("accept" or "decline") and nothing else`);
    }
    authorizeDecision(ctx, acting, request, input.decision);
    await execute(ctx, { type: "runtime-request.respond", commandId, data: { threadId: thread.id, requestId: request.id, response: { decision: input.decision }, ceiling } });
    return summarize(ctx.orchestrator.state.runtimeRequests.get(request.id)!);
  }
  if (input.decision !== undefined) fail("invalid_request", `request ${request.id} is a question: give answer, answers or dismiss, not decision`);
  if (input.dismiss === true) {
    await execute(ctx, { type: "thread.user-input.dismiss", commandId, data: { threadId: thread.id, requestId: request.id, ceiling } });
  } else {
    const questions = (request.payload.questions as { id: string }[] | undefined) ?? [];
    let answers: Record<string, string[]>;
    if (input.answers !== undefined) {
      answers = Object.fromEntries(Object.entries(input.answers).map(([id, value]) => [id, Array.isArray(value) ? value : [value]]));
      const unknown = Object.keys(answers).filter((id) => !questions.some((q) => q.id === id));
      if (unknown.length > 0) fail("invalid_request", `unknown question id(s): ${unknown.join(", ")}; expected ${questions.map((q) => q.id).join(", ")}`);
    } else if (input.answer !== undefined) {
      if (questions.length !== 1) fail("invalid_request", `request ${request.id} has ${questions.length} questions: use answers keyed by question id`);
      answers = { [questions[0]!.id]: [input.answer] };
    } else {
      fail("invalid_request", "give answers, answer, or dismiss: true");
    }
    await execute(ctx, { type: "runtime-request.respond", commandId, data: { threadId: thread.id, requestId: request.id, response: { answers }, ceiling } });
  }
  return summarize(ctx.orchestrator.state.runtimeRequests.get(request.id)!);
}
