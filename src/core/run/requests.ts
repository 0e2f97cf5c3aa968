import { EffectKind } from "../../contracts/effects.js";
import type { RuntimeRequestRespondCommand, ThreadUserInputDismissCommand } from "../../contracts/commands/runCommands.js";
import type { RuntimeRequest } from "../../contracts/entities/runtimeRequests.js";
import { type DecideContext, type Decision, type Rejected, reject } from "../decision.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";
import { Changes } from "./changes.js";
import { cancelQuestionNotices } from "../delegation/notices.js";
import { findRequestItem } from "./lifecycle.js";

type Found = { kind: "found"; changes: Changes; request: RuntimeRequest } | Rejected;

function pendingRequest(state: OrchestrationState, ctx: DecideContext, threadId: string, requestId: string): Found {
  const found = liveThread(state, threadId);
  if (found.kind === "rejected") return found;
  const request = state.runtimeRequests.get(requestId);
  if (request === undefined || request.threadId !== threadId) {
    return reject("request_not_found", `request ${requestId} does not exist in thread ${threadId}`);
  }
  if (request.status !== "pending") return reject("request_not_pending", `request ${requestId} is already ${request.status}`);
  return { kind: "found", changes: new Changes(state, ctx), request };
}

/** After a blocking request is settled, the run works again unless another one still blocks it. */
function resumeRun(changes: Changes, request: RuntimeRequest): void {
  const run = changes.run(request.runId);
  if (run === undefined || (run.status !== "waiting_on_approval" && run.status !== "waiting_on_user_input")) return;
  const stillBlocked = [...changes.state.runtimeRequests.values()].find(
    (other) => other.runId === run.id && other.id !== request.id && other.status === "pending" && other.blocking,
  );
  if (stillBlocked === undefined) changes.updateRun(run, { status: "running" });
  else changes.updateRun(run, { status: stillBlocked.kind === "user_input" ? "waiting_on_user_input" : "waiting_on_approval" });
}

function deliver(changes: Changes, request: RuntimeRequest, response: Record<string, unknown>): void {
  cancelQuestionNotices(changes, request.threadId, request.id);
  changes.effect(
    EffectKind.respondRequest,
    request.threadId,
    { threadId: request.threadId, runId: request.runId, requestId: request.id, nativeRequestId: request.nativeRequestId, response }
  );
}

/** runtime-request.respond: a decision for an approval, answers for a question. */
export function decideRuntimeRequestRespond(state: OrchestrationState, command: RuntimeRequestRespondCommand, ctx: DecideContext): Decision {
  const found = pendingRequest(state, ctx, command.data.threadId, command.data.requestId);
  if (found.kind === "rejected") return found;
  const { changes, request } = found;
  const response = command.data.response;
  const item = findRequestItem(changes, request.threadId, request.id);
  if (request.kind === "user_input") {
    if (!("answers" in response)) return reject("invalid_response", `request ${request.id} is a question: respond with answers`);
    if (item?.type === "user_input_request") changes.updateItem(item, { status: "answered", answers: response.answers });
  } else {
    if (!("decision" in response)) return reject("invalid_response", `request ${request.id} is an approval: respond with a decision`);
    if (item?.type === "approval_request") changes.updateItem(item, { status: "resolved", decision: response.decision });
  }
  changes.putRequest({ ...request, status: "resolved", resolution: response, updatedAt: ctx.now, resolvedAt: ctx.now });
  resumeRun(changes, request);
  deliver(changes, request, response);
  return changes.done();
}

/** thread.user-input.dismiss: close a question without an answer; the agent carries on without one. */
export function decideUserInputDismiss(state: OrchestrationState, command: ThreadUserInputDismissCommand, ctx: DecideContext): Decision {
  const found = pendingRequest(state, ctx, command.data.threadId, command.data.requestId);
  if (found.kind === "rejected") return found;
  const { changes, request } = found;
  if (request.kind !== "user_input") return reject("invalid_response", `request ${request.id} is an approval, not a question`);
  const item = findRequestItem(changes, request.threadId, request.id);
  if (item?.type === "user_input_request") changes.updateItem(item, { status: "dismissed" });
  changes.putRequest({ ...request, status: "cancelled", resolution: { dismissed: true }, updatedAt: ctx.now, resolvedAt: ctx.now });
  resumeRun(changes, request);
  deliver(changes, request, { dismissed: true });
  return changes.done();
}
