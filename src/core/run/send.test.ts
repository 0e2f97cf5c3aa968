import { describe, expect, it } from "vitest";
import type { Run } from "../../contracts/entities/runs.js";
import type { AppThread } from "../../contracts/thread.js";
import { RejectionCode } from "../rejections.js";
import { aThread, cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, aUserMessage, after, anItem, effects, itemEvent, itemEvents, runCreated, runUpdated, testId } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";

const A = "thread:a";
const B = "thread:b";
const R0 = "run:0";
const M0 = "message:0";
const I0 = "turn-item:0";

/** The ids a send allocates on a fresh context: run, message, then the message item. */
const R = testId("run", 1);
const M = testId("message", 2);
const I = testId("turn-item", 3);

/** The run a send creates: queued, created now, on the thread's provider and modes. */
function sent(thread: AppThread, id: string, messageId: string, fields: Partial<Run> = {}): Run {
  return aRun(thread, { id, status: "queued", messageId, createdAt: NOW, updatedAt: NOW, ...fields });
}

/** A thread with one run (R0, ordinal 1) and its message at position 0. */
function busy(thread: AppThread, fields: Partial<Run> = {}) {
  const run = aRun(thread, { id: R0, messageId: M0, ...fields });
  return { run, history: [existing(thread), runCreated(run), itemEvent(aUserMessage(thread.id, R0, 0, I0, M0, "first"))] };
}

const dispatch = (text: string, data: Partial<Parameters<typeof cmd<"message.dispatch">>[1]> = {}) => cmd("message.dispatch", { threadId: A, text, ...data });

describe("message.dispatch, auto", () => {
  it("starts a run on an idle thread: created queued, message at position 0, then starting with a start effect", () => {
    const thread = aProviderThread(A, "steerable");
    const created = sent(thread, R, M);
    const message = aUserMessage(A, R, 0, I, M, "hello", { createdAt: NOW });
    const state = given(existing(thread))
      .when(dispatch("hello"))
      .then([runCreated(created), ...itemEvents(message), runUpdated({ ...created, status: "starting" })], [effects.startTurn(A, R)]);
    expect(state.runs.get(R)?.status).toBe("starting");
    expect(state.turnItems.get(A)).toEqual([message]);
    expect(state.threadRuns.get(A)).toEqual([R]);
    expect(state.threads.get(A)?.queuedRuns).toEqual([]);
  });

  it("steers a running turn on a steerable provider: the message joins the active run, no new run", () => {
    const thread = aProviderThread(A, "steerable");
    const { history } = busy(thread);
    const message = aUserMessage(A, R0, 1, testId("turn-item", 2), testId("message", 1), "also this", { createdAt: NOW });
    const state = given(...history)
      .when(dispatch("also this"))
      .then([...itemEvents(message)], [effects.steerTurn(A, R0, testId("message", 1), "also this")]);
    expect([...state.runs.keys()]).toEqual([R0]);
    expect(state.turnItems.get(A)?.[1]?.runId).toBe(R0);
  });

  it("queues behind a running turn on a provider that cannot steer", () => {
    const thread = aProviderThread(A, "plain");
    const { history } = busy(thread);
    const created = sent(thread, R, M, { ordinal: 2 });
    const state = given(...history)
      .when(dispatch("next"))
      .then([runCreated(created), ...itemEvents(aUserMessage(A, R, 1, I, M, "next", { createdAt: NOW })), runUpdated({ ...created, queueRank: 0 })]);
    expect(state.runs.get(R0)?.status).toBe("running");
    expect(state.threads.get(A)?.queuedRuns).toEqual([{ runId: R, held: false }]);
  });

  it.each<[string, Partial<Run>]>([
    ["starting", { status: "starting" }],
    ["waiting_on_approval", { status: "waiting_on_approval" }],
    ["waiting_on_user_input", { status: "waiting_on_user_input" }],
    ["running with a stop requested", { status: "running", interruptRequestedAt: "2026-03-01T11:59:00.000Z" }],
  ])("queues on a steerable provider while the active run is %s", (_what, fields) => {
    const thread = aProviderThread(A, "steerable");
    const { history } = busy(thread, fields);
    const created = sent(thread, R, M, { ordinal: 2 });
    given(...history)
      .when(dispatch("next"))
      .then([runCreated(created), ...itemEvents(aUserMessage(A, R, 1, I, M, "next", { createdAt: NOW })), runUpdated({ ...created, queueRank: 0 })]);
  });

  it("queues behind the runs already queued, with the next ordinal", () => {
    const thread = aProviderThread(A, "plain");
    const { history } = busy(thread);
    const queued = aRun(thread, { id: "run:1", ordinal: 2, status: "queued", queueRank: 0, messageId: "message:1" });
    const created = sent(thread, R, M, { ordinal: 3 });
    const state = given(...history, runCreated(queued), itemEvent(aUserMessage(A, "run:1", 1, "turn-item:1", "message:1", "second")))
      .when(dispatch("third"))
      .then([runCreated(created), ...itemEvents(aUserMessage(A, R, 2, I, M, "third", { createdAt: NOW })), runUpdated({ ...created, queueRank: 1 })]);
    expect(state.threads.get(A)?.queuedRuns).toEqual([
      { runId: "run:1", held: false },
      { runId: R, held: false },
    ]);
  });

  it("numbers a new run after every earlier run, terminal ones included", () => {
    const thread = aProviderThread(A, "steerable");
    const done = aRun(thread, { id: "run:1", ordinal: 1, status: "completed", endReason: "completed", endedAt: NOW });
    const cancelled = aRun(thread, { id: "run:2", ordinal: 2, status: "cancelled", endReason: "cancelled", endedAt: NOW });
    const created = sent(thread, R, M, { ordinal: 3 });
    given(existing(thread), runCreated(done), runCreated(cancelled))
      .when(dispatch("again"))
      .then([runCreated(created), ...itemEvents(aUserMessage(A, R, 0, I, M, "again", { createdAt: NOW })), runUpdated({ ...created, status: "starting" })], [effects.startTurn(A, R)]);
  });

  it("starts at once when the only queued runs are held by a Stop; they stay held", () => {
    const thread = aProviderThread(A, "plain");
    const held = aRun(thread, { id: "run:1", ordinal: 1, status: "queued", queueRank: 0, held: true, messageId: "message:1" });
    const created = sent(thread, R, M, { ordinal: 2 });
    const state = given(existing(thread), runCreated(held), itemEvent(aUserMessage(A, "run:1", 0, "turn-item:1", "message:1", "held")))
      .when(dispatch("now"))
      .then([runCreated(created), ...itemEvents(aUserMessage(A, R, 1, I, M, "now", { createdAt: NOW })), runUpdated({ ...created, status: "starting" })], [effects.startTurn(A, R)]);
    expect(state.threads.get(A)?.queuedRuns).toEqual([{ runId: "run:1", held: true }]);
  });

  it("reads the running turn's provider, not a selection the thread switched to since", () => {
    // The run was started on `steerable`; the thread now points at `plain`.
    const { history } = busy(aProviderThread(A, "steerable"));
    const switched = aProviderThread(A, "plain");
    given(...history, existing(switched))
      .when(dispatch("steer me"))
      .then(
        [...itemEvents(aUserMessage(A, R0, 1, testId("turn-item", 2), testId("message", 1), "steer me", { createdAt: NOW }))],
        [effects.steerTurn(A, R0, testId("message", 1), "steer me")],
      );
  });

  it("queues on a thread switched to a steerable provider while its turn runs on one that is not", () => {
    const { history } = busy(aProviderThread(A, "plain"));
    const switched = aProviderThread(A, "steerable");
    const created = sent(switched, R, M, { ordinal: 2 });
    given(...history, existing(switched))
      .when(dispatch("next"))
      .then([runCreated(created), ...itemEvents(aUserMessage(A, R, 1, I, M, "next", { createdAt: NOW })), runUpdated({ ...created, queueRank: 0 })]);
  });
});

describe("message.dispatch, queue", () => {
  it("starts at once on an idle thread", () => {
    const thread = aProviderThread(A, "steerable");
    const created = sent(thread, R, M);
    given(existing(thread))
      .when(dispatch("hello", { mode: "queue" }))
      .then([runCreated(created), ...itemEvents(aUserMessage(A, R, 0, I, M, "hello", { createdAt: NOW })), runUpdated({ ...created, status: "starting" })], [effects.startTurn(A, R)]);
  });

  it("makes a separate follow-up run even when the running turn could be steered", () => {
    const thread = aProviderThread(A, "steerable");
    const { history } = busy(thread);
    const created = sent(thread, R, M, { ordinal: 2 });
    given(...history)
      .when(dispatch("later", { mode: "queue" }))
      .then([runCreated(created), ...itemEvents(aUserMessage(A, R, 1, I, M, "later", { createdAt: NOW })), runUpdated({ ...created, queueRank: 0 })]);
  });
});

describe("message.dispatch, steer", () => {
  it("steers a running steerable turn", () => {
    const { history } = busy(aProviderThread(A, "steerable"));
    given(...history)
      .when(dispatch("turn left", { mode: "steer" }))
      .then(
        [...itemEvents(aUserMessage(A, R0, 1, testId("turn-item", 2), testId("message", 1), "turn left", { createdAt: NOW }))],
        [effects.steerTurn(A, R0, testId("message", 1), "turn left")],
      );
  });

  it("rejects a thread with no active turn", () => {
    const rejection = given(existing(aProviderThread(A, "steerable")))
      .when(dispatch("hi", { mode: "steer" }))
      .thenRejects(RejectionCode.threadNotSendable);
    expect(rejection.message).toMatch(/no active turn/);
  });

  it("rejects a provider that cannot steer", () => {
    const { history } = busy(aProviderThread(A, "plain"));
    const rejection = given(...history).when(dispatch("hi", { mode: "steer" })).thenRejects(RejectionCode.threadNotSendable);
    expect(rejection.message).toMatch(/does not support steering/);
  });

  it("rejects a turn that has not started yet", () => {
    const { history } = busy(aProviderThread(A, "steerable"), { status: "starting" });
    const rejection = given(...history).when(dispatch("hi", { mode: "steer" })).thenRejects(RejectionCode.threadNotSendable);
    expect(rejection.message).toMatch(/it is starting/);
  });

  it("rejects a turn a stop has already reached", () => {
    const { history } = busy(aProviderThread(A, "steerable"), { interruptRequestedAt: "2026-03-01T11:59:00.000Z" });
    const rejection = given(...history).when(dispatch("hi", { mode: "steer" })).thenRejects(RejectionCode.threadNotSendable);
    expect(rejection.message).toMatch(/stop has already reached/);
  });
});

describe("message.dispatch, restart", () => {
  /** Ids of a restart: the interrupt item comes first, then run, message and message item. */
  const interruptItem = testId("turn-item", 1);
  const RR = testId("run", 2);
  const RM = testId("message", 3);
  const RI = testId("turn-item", 4);

  it("interrupts the active run and puts the new run at the front of the queue", () => {
    const thread = aProviderThread(A, "steerable");
    const { run, history } = busy(thread);
    const q1 = aRun(thread, { id: "run:1", ordinal: 2, status: "queued", queueRank: 0, messageId: "message:1" });
    const q2 = aRun(thread, { id: "run:2", ordinal: 3, status: "queued", queueRank: 1, messageId: "message:2" });
    const created = sent(thread, RR, RM, { ordinal: 4 });
    const state = given(
      ...history,
      runCreated(q1),
      itemEvent(aUserMessage(A, "run:1", 1, "turn-item:1", "message:1", "second")),
      runCreated(q2),
      itemEvent(aUserMessage(A, "run:2", 2, "turn-item:2", "message:2", "third")),
    )
      .when(dispatch("start over", { mode: "restart" }))
      .then(
        [
          runUpdated(after(run, { interruptRequestedAt: NOW })),
          ...itemEvents(
            anItem(A, R0, 3, interruptItem, { type: "run_interrupt_request", requestedBy: "user", reason: "restarted with a new message" }, { createdAt: NOW }),
          ),
          runCreated(created),
          ...itemEvents(aUserMessage(A, RR, 4, RI, RM, "start over", { createdAt: NOW })),
          runUpdated(after(q1, { queueRank: 1 })),
          runUpdated(after(q2, { queueRank: 2 })),
          runUpdated({ ...created, queueRank: 0 }),
        ],
        [effects.interruptTurn(A, R0)],
      );
    expect(state.threads.get(A)?.queuedRuns.map((q) => q.runId)).toEqual([RR, "run:1", "run:2"]);
    expect(state.runs.get(R0)?.status).toBe("running");
  });

  it("works on a provider that can stop a turn but not steer it", () => {
    const thread = aProviderThread(A, "plain");
    const { run, history } = busy(thread);
    const created = sent(thread, RR, RM, { ordinal: 2 });
    given(...history)
      .when(dispatch("start over", { mode: "restart", createdBy: "agent" }))
      .then(
        [
          runUpdated(after(run, { interruptRequestedAt: NOW })),
          ...itemEvents(anItem(A, R0, 1, interruptItem, { type: "run_interrupt_request", requestedBy: "agent", reason: "restarted with a new message" }, { createdAt: NOW })),
          runCreated(created),
          ...itemEvents({ ...aUserMessage(A, RR, 2, RI, RM, "start over", { createdAt: NOW }), createdBy: "agent" }),
          runUpdated({ ...created, queueRank: 0 }),
        ],
        [effects.interruptTurn(A, R0)],
      );
  });

  it("rejects a provider that cannot stop a turn", () => {
    const { history } = busy(aProviderThread(A, "stubborn"));
    const rejection = given(...history).when(dispatch("again", { mode: "restart" })).thenRejects(RejectionCode.threadNotSendable);
    expect(rejection.message).toMatch(/cannot stop a turn/);
  });

  it("reads the running turn's provider: a run on a stubborn provider cannot restart after the thread switched", () => {
    const { history } = busy(aProviderThread(A, "stubborn"));
    given(...history, existing(aProviderThread(A, "steerable")))
      .when(dispatch("again", { mode: "restart" }))
      .thenRejects(RejectionCode.threadNotSendable);
  });

  it("rejects a turn a stop has already reached", () => {
    const { history } = busy(aProviderThread(A, "steerable"), { interruptRequestedAt: "2026-03-01T11:59:00.000Z" });
    const rejection = given(...history).when(dispatch("again", { mode: "restart" })).thenRejects(RejectionCode.threadNotSendable);
    expect(rejection.message).toMatch(/stop has already reached/);
  });

  it("rejects an idle thread", () => {
    given(existing(aProviderThread(A, "steerable")))
      .when(dispatch("again", { mode: "restart" }))
      .thenRejects(RejectionCode.threadNotSendable);
  });
});

describe("message.dispatch, ids and provenance", () => {
  it("uses the given messageId, runId, run kind and provenance; only the item id is allocated", () => {
    const thread = aProviderThread(A, "steerable");
    const created = sent(thread, "run:client", "message:client", { kind: "system_follow_up" });
    const message = { ...aUserMessage(A, "run:client", 0, testId("turn-item", 1), "message:client", "hi", { createdAt: NOW }), createdBy: "agent" as const, creationSource: "mcp" as const };
    given(existing(thread))
      .when(dispatch("hi", { messageId: "message:client", runId: "run:client", runKind: "system_follow_up", createdBy: "agent", creationSource: "mcp" }))
      .then([runCreated(created), ...itemEvents(message), runUpdated({ ...created, status: "starting" })], [effects.startTurn(A, "run:client")]);
  });

  it("uses the given messageId when steering", () => {
    const { history } = busy(aProviderThread(A, "steerable"));
    given(...history)
      .when(dispatch("more", { messageId: "message:client" }))
      .then([...itemEvents(aUserMessage(A, R0, 1, testId("turn-item", 1), "message:client", "more", { createdAt: NOW }))], [effects.steerTurn(A, R0, "message:client", "more")]);
  });

  it("rejects a runId that already exists", () => {
    const { history } = busy(aProviderThread(A, "plain"));
    given(...history)
      .when(dispatch("again", { runId: R0 }))
      .thenRejects(RejectionCode.threadNotSendable);
  });
});

describe("message.dispatch, refusals", () => {
  it.each<[string, AppThread, RejectionCode]>([
    ["a thread without provider", aProviderThread(A, null), RejectionCode.providerNotSet],
    ["a provider instance that is not configured", aProviderThread(A, "ghost"), RejectionCode.providerUnavailable],
    ["a deleted thread", aProviderThread(A, "steerable", { deletedAt: NOW }), RejectionCode.threadDeleted],
  ])("rejects %s", (_what, thread, code) => {
    given(existing(thread)).when(dispatch("hi")).thenRejects(code);
  });

  it("falls back to the thread's providerInstanceId when it has no model selection", () => {
    const thread = aThread({ id: A, providerInstanceId: "plain" });
    const created = sent(thread, R, M, { providerInstanceId: "plain", modelSelection: null });
    given(existing(thread))
      .when(dispatch("hi"))
      .then([runCreated(created), ...itemEvents(aUserMessage(A, R, 0, I, M, "hi", { createdAt: NOW })), runUpdated({ ...created, status: "starting" })], [effects.startTurn(A, R)]);
  });

  it("rejects a thread that does not exist", () => {
    given(existing(aProviderThread(B))).when(dispatch("hi")).thenRejects(RejectionCode.threadNotFound);
  });
});
