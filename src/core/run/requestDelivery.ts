import type { RuntimeRequestDeliveryFailCommand } from "../../contracts/commands/runCommands.js";
import type { RuntimeRequest } from "../../contracts/entities/runtimeRequests.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";
import { Changes } from "./changes.js";
import { findRequestItem } from "./lifecycle.js";

/** Statuses a request reaches once an answer or a dismissal is sent to its provider callback. */
const DELIVERED: ReadonlySet<RuntimeRequest["status"]> = new Set(["resolved", "cancelled"]);

/** The request is open again: whoever answered may answer once more, and a blocking request holds its run again. */
function reopen(changes: Changes, request: RuntimeRequest, reason: string): void {
  changes.putRequest({ ...request, status: "pending", resolution: { deliveryFailed: reason }, updatedAt: changes.ctx.now, resolvedAt: null });
  const item = findRequestItem(changes, request.threadId, request.id);
  if (item?.type === "approval_request") changes.updateItem(item, { status: "pending", decision: null });
  if (item?.type === "user_input_request") changes.updateItem(item, { status: "pending", answers: null });
  const run = changes.run(request.runId);
  if (request.blocking && run?.status === "running") {
    changes.updateRun(run, { status: request.kind === "user_input" ? "waiting_on_user_input" : "waiting_on_approval" });
  }
}

/** The callback is gone: nothing can take an answer for the request any more. */
function expire(changes: Changes, request: RuntimeRequest, reason: string): void {
  changes.putRequest({ ...request, status: "expired", resolution: { deliveryFailed: reason }, updatedAt: changes.ctx.now, resolvedAt: changes.ctx.now });
  const item = findRequestItem(changes, request.threadId, request.id);
  if (item?.type === "approval_request" || item?.type === "user_input_request") changes.updateItem(item, { status: "expired" });
}

/**
 * runtime-request.delivery.fail: an answer could not reach the provider's
 * callback. The request is never left resolved as if it had arrived: it is
 * open again while its run lives and the callback may still take an answer,
 * and expired with the reason otherwise.
 */
export function decideRequestDeliveryFail(state: OrchestrationState, command: RuntimeRequestDeliveryFailCommand, ctx: DecideContext): Decision {
  const { threadId, requestId, reason, callbackGone } = command.data;
  const found = liveThread(state, threadId);
  if (found.kind === "rejected") return found;
  const request = state.runtimeRequests.get(requestId);
  if (request === undefined || request.threadId !== threadId) {
    return reject("request_not_found", `request ${requestId} does not exist in thread ${threadId}`);
  }
  if (!DELIVERED.has(request.status)) return reject("request_not_answered", `request ${requestId} is ${request.status}: no answer was sent to it`);
  const changes = new Changes(state, ctx);
  const run = changes.run(request.runId);
  if (callbackGone || run === undefined || run.endedAt !== null) expire(changes, request, reason);
  else reopen(changes, request, reason);
  return changes.done();
}
