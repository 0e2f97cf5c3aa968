import { describe, expect, it } from "vitest";
import type { Run } from "../../contracts/entities/runs.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRequest, aRun, aUserMessage, after, anItem, itemEvent, requestEvent, runCreated, runUpdated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given, testContext } from "../testing/scenario.js";

const A = "thread:a";
const R0 = "run:0";
const thread = aProviderThread(A, "steerable");
const running = aRun(thread, { id: R0, messageId: "message:0" });
const waiting: Run = { ...running, status: "waiting_on_approval" };
const base = [existing(thread), runCreated(running), itemEvent(aUserMessage(A, R0, 0, "turn-item:0", "message:0", "do it"))];

const request = aRequest(running, { id: "runtime-request:a", kind: "command", nativeRequestId: "native-a" });
const item: TurnItem = anItem(A, R0, 1, "turn-item:a", {
  type: "approval_request",
  requestId: "runtime-request:a",
  requestKind: "command",
  title: "Run npm test",
  detail: "npm test",
  status: "pending",
  decision: null,
});
const pending = [...base, runUpdated(waiting), requestEvent(request), itemEvent(item)];

const respond = cmd("runtime-request.respond", { threadId: A, requestId: request.id, response: { decision: "accept" } });
const fail = (callbackGone: boolean, requestId = request.id) =>
  cmd("runtime-request.delivery.fail", { threadId: A, requestId, reason: "the agent closed the callback", callbackGone });

/** The history after the approval was answered (and the answer sent), with the shared ctx. */
function answered() {
  const ctx = testContext();
  return { history: given(...pending).when(respond, ctx).thenHistory(), ctx };
}

describe("runtime-request.delivery.fail", () => {
  it("re-opens an answered request while its run lives: pending again with the reason, the item pending, the run waiting", () => {
    const { history, ctx } = answered();
    const state = given(...history)
      .when(fail(false), ctx)
      .then([
        requestEvent(after(request, { status: "pending", resolution: { deliveryFailed: "the agent closed the callback" }, resolvedAt: null })),
        itemEvent(after(item, { status: "pending", decision: null })),
        runUpdated(after(waiting, { status: "waiting_on_approval" })),
      ]);
    expect(state.runtimeRequests.get(request.id)?.status).toBe("pending");
    expect(state.runs.get(R0)?.status).toBe("waiting_on_approval");
    // Open again, it takes an answer as before.
    given(...given(...history).when(fail(false), ctx).thenHistory())
      .when(cmd("runtime-request.respond", { threadId: A, requestId: request.id, response: { decision: "decline" } }), ctx)
      .thenIncludes(requestEvent(after(request, { status: "resolved", resolution: { decision: "decline" }, resolvedAt: NOW })));
  });

  it("expires the request with the reason when the callback is gone", () => {
    const { history, ctx } = answered();
    const state = given(...history)
      .when(fail(true), ctx)
      .then([
        requestEvent(after(request, { status: "expired", resolution: { deliveryFailed: "the agent closed the callback" }, resolvedAt: NOW })),
        itemEvent(after(item, { status: "expired", decision: "accept" })),
      ]);
    expect(state.runs.get(R0)?.status).toBe("running");
  });

  it("expires the request when its run has ended, whatever the callback", () => {
    const { history, ctx } = answered();
    const ended: Run = { ...running, status: "completed", endedAt: NOW };
    const state = given(...history, runUpdated(ended)).when(fail(false), ctx).thenIncludes(
      requestEvent(after(request, { status: "expired", resolution: { deliveryFailed: "the agent closed the callback" }, resolvedAt: NOW })),
    );
    expect(state.runtimeRequests.get(request.id)?.status).toBe("expired");
  });

  it("refuses a request that was never answered, and one that does not exist, writing nothing", () => {
    expect(given(...pending).when(fail(false)).thenRejects(RejectionCode.requestNotAnswered).message).toMatch(/is pending/);
    given(...pending).when(fail(false, "runtime-request:nope")).thenRejects(RejectionCode.requestNotFound);
  });
});
