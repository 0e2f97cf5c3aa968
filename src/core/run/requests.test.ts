import { describe, expect, it } from "vitest";
import type { RuntimeRequest } from "../../contracts/entities/runtimeRequests.js";
import type { ProviderItem } from "../../contracts/providerEvents.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { derive } from "../ids.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRequest, aRun, aUserMessage, after, anItem, effects, itemEvent, requestEvent, runCreated, runUpdated, testId } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given, testContext } from "../testing/scenario.js";

const A = "thread:a";
const B = "thread:b";
const R0 = "run:0";
const thread = aProviderThread(A, "steerable");
const running = aRun(thread, { id: R0, messageId: "message:0" });
const base = [existing(thread), runCreated(running), itemEvent(aUserMessage(A, R0, 0, "turn-item:0", "message:0", "do it"))];

const REQ = testId("runtime-request", 1);
const itemIdOf = (nativeItemId: string, runId = R0) => derive.turnItemFromProviderItem({ driver: "scripted", providerTurnId: runId, nativeItemId });
const completed = (nativeItemId: string, item: ProviderItem, runId = R0) =>
  cmd("provider-runtime.item-completed", { threadId: A, runId, driver: "scripted", nativeItemId, item });

const approval: ProviderItem = { kind: "approval_request", requestId: "native-req-7", requestKind: "file-change", title: "Edit src/a.ts", detail: "+1 -1" };
const question: ProviderItem = { kind: "user_input_request", requestId: "native-req-8", questions: [{ id: "q1", question: "Which branch?" }] };

describe("opening a runtime request (provider-runtime.item-completed)", () => {
  it("an approval item opens a pending blocking request with the provider's id, and the run waits on approval", () => {
    const state = given(...base)
      .when(completed("item-1", approval))
      .then([
        requestEvent({
          id: REQ,
          threadId: A,
          runId: R0,
          nodeId: null,
          kind: "file-change",
          status: "pending",
          blocking: true,
          nativeRequestId: "native-req-7",
          payload: { title: "Edit src/a.ts", detail: "+1 -1", requestKind: "file-change" },
          resolution: null,
          createdAt: NOW,
          updatedAt: NOW,
          resolvedAt: null,
        }),
        runUpdated(after(running, { status: "waiting_on_approval" })),
        itemEvent(
          anItem(
            A,
            R0,
            1,
            itemIdOf("item-1"),
            { type: "approval_request", requestId: REQ, requestKind: "file-change", title: "Edit src/a.ts", detail: "+1 -1", status: "pending", decision: null },
            { createdAt: NOW },
          ),
        ),
      ]);
    expect(state.runtimeRequests.get(REQ)?.status).toBe("pending");
    expect(state.runs.get(R0)?.status).toBe("waiting_on_approval");
  });

  it("a question opens a user_input request and the run waits on user input", () => {
    const starting = aRun(thread, { id: R0, status: "starting" });
    given(existing(thread), runCreated(starting))
      .when(completed("item-2", question))
      .then([
        requestEvent({
          id: REQ,
          threadId: A,
          runId: R0,
          nodeId: null,
          kind: "user_input",
          status: "pending",
          blocking: true,
          nativeRequestId: "native-req-8",
          payload: { questions: [{ id: "q1", question: "Which branch?" }] },
          resolution: null,
          createdAt: NOW,
          updatedAt: NOW,
          resolvedAt: null,
        }),
        // A request proves the turn started, so a run still `starting` gets its startedAt.
        runUpdated(after(starting, { status: "waiting_on_user_input", startedAt: NOW })),
        itemEvent(
          anItem(
            A,
            R0,
            0,
            itemIdOf("item-2"),
            {
              type: "user_input_request",
              requestId: REQ,
              questions: [{ id: "q1", header: null, question: "Which branch?", options: [], multiSelect: false }],
              status: "pending",
              answers: null,
            },
            { createdAt: NOW },
          ),
        ),
      ]);
  });

  it("refuses the same request item twice", () => {
    const opened = given(...base).when(completed("item-1", approval)).thenHistory();
    given(...opened).when(completed("item-1", approval)).thenRejects(RejectionCode.requestNotPending);
  });
});

/** A run waiting on `request`, with the request's item at position 1. */
function waitingOn(request: RuntimeRequest, item: TurnItem, run: Run = running) {
  const waiting: Run = { ...run, status: request.kind === "user_input" ? "waiting_on_user_input" : "waiting_on_approval" };
  return { waiting, history: [...base, runUpdated(waiting), requestEvent(request), itemEvent(item)] };
}

const approvalRequest = aRequest(running, { id: "runtime-request:a", kind: "command", nativeRequestId: "native-a" });
const approvalItem = anItem(A, R0, 1, "turn-item:a", {
  type: "approval_request",
  requestId: "runtime-request:a",
  requestKind: "command",
  title: "Run npm test",
  detail: "npm test",
  status: "pending",
  decision: null,
});
const questionRequest = aRequest(running, {
  id: "runtime-request:q",
  kind: "user_input",
  nativeRequestId: "native-q",
  payload: { questions: [{ id: "q1", question: "Which branch?" }] },
});
const questionItem = anItem(A, R0, 2, "turn-item:q", {
  type: "user_input_request",
  requestId: "runtime-request:q",
  questions: [{ id: "q1", header: null, question: "Which branch?", options: [], multiSelect: false }],
  status: "pending",
  answers: null,
});

describe("runtime-request.respond", () => {
  it("resolves an approval: the item shows the decision, the run works again, the provider gets the answer", () => {
    const { waiting, history } = waitingOn(approvalRequest, approvalItem);
    const state = given(...history)
      .when(cmd("runtime-request.respond", { threadId: A, requestId: "runtime-request:a", response: { decision: "accept" } }))
      .then(
        [
          itemEvent(after(approvalItem, { status: "resolved", decision: "accept" })),
          requestEvent(after(approvalRequest, { status: "resolved", resolution: { decision: "accept" }, resolvedAt: NOW })),
          runUpdated(after(waiting, { status: "running" })),
        ],
        [effects.respondRequest(approvalRequest, { decision: "accept" })],
      );
    expect(state.runs.get(R0)?.status).toBe("running");
    expect(state.runtimeRequests.get("runtime-request:a")?.status).toBe("resolved");
  });

  it("carries the provider's request id in the process-bound effect", () => {
    const { history } = waitingOn(approvalRequest, approvalItem);
    const decision = given(...history).when(cmd("runtime-request.respond", { threadId: A, requestId: "runtime-request:a", response: { decision: "decline" } })).decision;
    expect(decision.kind === "accepted" ? decision.effects : null).toEqual([
      { kind: "provider.request.respond", streamId: A, payload: { threadId: A, runId: R0, requestId: "runtime-request:a", nativeRequestId: "native-a", response: { decision: "decline" } }, replaySafe: false },
    ]);
  });

  it("answers a question", () => {
    const { waiting, history } = waitingOn(questionRequest, { ...questionItem, position: 1 });
    const answers = { q1: ["main"] };
    given(...history)
      .when(cmd("runtime-request.respond", { threadId: A, requestId: "runtime-request:q", response: { answers } }))
      .then(
        [
          itemEvent(after({ ...questionItem, position: 1 }, { status: "answered", answers })),
          requestEvent(after(questionRequest, { status: "resolved", resolution: { answers }, resolvedAt: NOW })),
          runUpdated(after(waiting, { status: "running" })),
        ],
        [effects.respondRequest(questionRequest, { answers })],
      );
  });

  it("keeps the run waiting while another blocking request is pending", () => {
    const { waiting, history } = waitingOn(approvalRequest, approvalItem);
    given(...history, requestEvent(questionRequest), itemEvent(questionItem))
      .when(cmd("runtime-request.respond", { threadId: A, requestId: "runtime-request:a", response: { decision: "accept" } }))
      .then(
        [
          itemEvent(after(approvalItem, { status: "resolved", decision: "accept" })),
          requestEvent(after(approvalRequest, { status: "resolved", resolution: { decision: "accept" }, resolvedAt: NOW })),
          runUpdated(after(waiting, { status: "waiting_on_user_input" })),
        ],
        [effects.respondRequest(approvalRequest, { decision: "accept" })],
      );
  });

  it("rejects answers to an approval and a decision for a question", () => {
    const { history } = waitingOn(approvalRequest, approvalItem);
    given(...history)
      .when(cmd("runtime-request.respond", { threadId: A, requestId: "runtime-request:a", response: { answers: { q1: ["yes"] } } }))
      .thenRejects(RejectionCode.invalidResponse);
    const asked = waitingOn(questionRequest, { ...questionItem, position: 1 }).history;
    given(...asked)
      .when(cmd("runtime-request.respond", { threadId: A, requestId: "runtime-request:q", response: { decision: "accept" } }))
      .thenRejects(RejectionCode.invalidResponse);
  });

  it("rejects a second response", () => {
    const { history } = waitingOn(approvalRequest, approvalItem);
    const ctx = testContext();
    const answered = given(...history)
      .when(cmd("runtime-request.respond", { threadId: A, requestId: "runtime-request:a", response: { decision: "accept" } }), ctx)
      .thenHistory();
    const rejection = given(...answered)
      .when(cmd("runtime-request.respond", { threadId: A, requestId: "runtime-request:a", response: { decision: "decline" } }), ctx)
      .thenRejects(RejectionCode.requestNotPending);
    expect(rejection.message).toMatch(/already resolved/);
  });

  it("rejects an unknown request and another thread's request", () => {
    const { history } = waitingOn(approvalRequest, approvalItem);
    given(...history)
      .when(cmd("runtime-request.respond", { threadId: A, requestId: "runtime-request:nope", response: { decision: "accept" } }))
      .thenRejects(RejectionCode.requestNotFound);
    given(...history, existing(aProviderThread(B)))
      .when(cmd("runtime-request.respond", { threadId: B, requestId: "runtime-request:a", response: { decision: "accept" } }))
      .thenRejects(RejectionCode.requestNotFound);
  });

  it("rejects a request its run's end expired", () => {
    const { history } = waitingOn(approvalRequest, approvalItem);
    const ended = given(...history).when(cmd("provider-runtime.turn-completed", { threadId: A, runId: R0, status: "interrupted", error: null })).thenHistory();
    const rejection = given(...ended)
      .when(cmd("runtime-request.respond", { threadId: A, requestId: "runtime-request:a", response: { decision: "accept" } }))
      .thenRejects(RejectionCode.requestNotPending);
    expect(rejection.message).toMatch(/expired/);
  });
});

describe("thread.user-input.dismiss", () => {
  it("closes a question without an answer; the run works again and the provider hears it was dismissed", () => {
    const item = { ...questionItem, position: 1 };
    const { waiting, history } = waitingOn(questionRequest, item);
    const state = given(...history)
      .when(cmd("thread.user-input.dismiss", { threadId: A, requestId: "runtime-request:q" }))
      .then(
        [
          itemEvent(after(item, { status: "dismissed" })),
          requestEvent(after(questionRequest, { status: "cancelled", resolution: { dismissed: true }, resolvedAt: NOW })),
          runUpdated(after(waiting, { status: "running" })),
        ],
        [effects.respondRequest(questionRequest, { dismissed: true })],
      );
    expect(state.turnItems.get(A)?.[1]).toMatchObject({ type: "user_input_request", status: "dismissed", answers: null });
  });

  it("rejects an approval", () => {
    const { history } = waitingOn(approvalRequest, approvalItem);
    given(...history).when(cmd("thread.user-input.dismiss", { threadId: A, requestId: "runtime-request:a" })).thenRejects(RejectionCode.invalidResponse);
  });

  it("rejects an unknown request and one already dismissed", () => {
    given(...base).when(cmd("thread.user-input.dismiss", { threadId: A, requestId: "runtime-request:q" })).thenRejects(RejectionCode.requestNotFound);
    const dismissed = given(...waitingOn(questionRequest, { ...questionItem, position: 1 }).history)
      .when(cmd("thread.user-input.dismiss", { threadId: A, requestId: "runtime-request:q" }))
      .thenHistory();
    given(...dismissed).when(cmd("thread.user-input.dismiss", { threadId: A, requestId: "runtime-request:q" })).thenRejects(RejectionCode.requestNotPending);
  });

  it("rejects a deleted thread", () => {
    const { history } = waitingOn(questionRequest, { ...questionItem, position: 1 });
    given(...history, existing({ ...thread, deletedAt: NOW }))
      .when(cmd("thread.user-input.dismiss", { threadId: A, requestId: "runtime-request:q" }))
      .thenRejects(RejectionCode.threadDeleted);
  });
});
