import { describe, expect, it } from "vitest";
import type { Run } from "../../contracts/entities/runs.js";
import type { AppThread } from "../../contracts/thread.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, aSession, aUserMessage, after, anItem, effects, itemEvent, runCreated, runUpdated, sessionAttached, testId } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given, testContext } from "../testing/scenario.js";

const A = "thread:a";
const B = "thread:b";
const EARLIER = "2026-03-01T11:59:00.000Z";
const interruptItemId = testId("turn-item", 1);

/** The thread and its runs, each with a message item at the run's index. */
function withRuns(thread: AppThread, ...runs: Run[]) {
  return [
    existing(thread),
    ...runs.flatMap((run, index) => [runCreated(run), itemEvent(aUserMessage(thread.id, run.id, index, `turn-item:m${index}`, `message:${index}`, `message ${index}`))]),
  ];
}

const interruptRequest = (runId: string, position: number, reason: string | null) =>
  itemEvent(anItem(A, runId, position, interruptItemId, { type: "run_interrupt_request", requestedBy: "user", reason }, { createdAt: NOW }));

describe("run.interrupt", () => {
  const thread = aProviderThread(A, "plain");

  it("interrupts the active run when no runId is given: interruptRequestedAt, an interrupt item, a replay-safe effect", () => {
    const run = aRun(thread, { id: "run:0", messageId: "message:0" });
    const state = given(...withRuns(thread, run))
      .when(cmd("run.interrupt", { threadId: A, reason: "wrong branch" }))
      .then([runUpdated(after(run, { interruptRequestedAt: NOW })), interruptRequest("run:0", 1, "wrong branch")], [effects.interruptTurn(A, "run:0")]);
    // The run ends only when the provider reports the turn interrupted.
    expect(state.runs.get("run:0")?.status).toBe("running");
    expect(state.runs.get("run:0")?.interruptRequestedAt).toBe(NOW);
  });

  it("records who asked: an agent's interrupt says so", () => {
    const run = aRun(thread, { id: "run:0", messageId: "message:0" });
    given(...withRuns(thread, run))
      .when(cmd("run.interrupt", { threadId: A, requestedBy: "agent" }))
      .then(
        [
          runUpdated(after(run, { interruptRequestedAt: NOW })),
          itemEvent(anItem(A, "run:0", 1, interruptItemId, { type: "run_interrupt_request", requestedBy: "agent", reason: null }, { createdAt: NOW })),
        ],
        [effects.interruptTurn(A, "run:0")],
      );
  });

  it("picks the active run among terminal and queued ones", () => {
    const done = aRun(thread, { id: "run:0", ordinal: 1, status: "completed", endReason: "completed", endedAt: EARLIER });
    const active = aRun(thread, { id: "run:1", ordinal: 2, status: "waiting_on_approval" });
    const queued = aRun(thread, { id: "run:2", ordinal: 3, status: "queued", queueRank: 0 });
    given(...withRuns(thread, done, active, queued))
      .when(cmd("run.interrupt", { threadId: A }))
      .then([runUpdated(after(active, { interruptRequestedAt: NOW })), interruptRequest("run:1", 3, null)], [effects.interruptTurn(A, "run:1")]);
  });

  it("interrupts the given run", () => {
    const run = aRun(thread, { id: "run:0", status: "starting" });
    given(...withRuns(thread, run))
      .when(cmd("run.interrupt", { threadId: A, runId: "run:0" }))
      .then([runUpdated(after(run, { interruptRequestedAt: NOW })), interruptRequest("run:0", 1, null)], [effects.interruptTurn(A, "run:0")]);
  });

  it("rejects a thread with no active run", () => {
    const queued = aRun(thread, { id: "run:0", status: "queued", queueRank: 0 });
    given(existing(thread)).when(cmd("run.interrupt", { threadId: A })).thenRejects(RejectionCode.noActiveRun);
    given(...withRuns(thread, queued)).when(cmd("run.interrupt", { threadId: A })).thenRejects(RejectionCode.noActiveRun);
  });

  it("rejects a run of another thread, and an unknown run, as not found", () => {
    const other = aProviderThread(B, "plain");
    const theirs = aRun(other, { id: "run:b" });
    given(existing(thread), ...withRuns(other, theirs))
      .when(cmd("run.interrupt", { threadId: A, runId: "run:b" }))
      .thenRejects(RejectionCode.runNotFound);
    given(existing(thread)).when(cmd("run.interrupt", { threadId: A, runId: "run:nope" })).thenRejects(RejectionCode.runNotFound);
  });

  it.each<[string, Partial<Run>]>([
    ["queued", { status: "queued", queueRank: 0 }],
    ["completed", { status: "completed", endReason: "completed", endedAt: EARLIER }],
    ["interrupted", { status: "interrupted", endReason: "interrupted_by_user", endedAt: EARLIER }],
    ["cancelled", { status: "cancelled", endReason: "cancelled", endedAt: EARLIER }],
  ])("rejects a %s run as not active", (_what, fields) => {
    given(...withRuns(thread, aRun(thread, { id: "run:0", ...fields })))
      .when(cmd("run.interrupt", { threadId: A, runId: "run:0" }))
      .thenRejects(RejectionCode.runNotActive);
  });

  it("rejects a second interrupt", () => {
    given(...withRuns(thread, aRun(thread, { id: "run:0", interruptRequestedAt: EARLIER })))
      .when(cmd("run.interrupt", { threadId: A }))
      .thenRejects(RejectionCode.interruptAlreadyRequested);
  });

  it("rejects a run on a provider that cannot interrupt", () => {
    const stubborn = aProviderThread(A, "stubborn");
    given(...withRuns(stubborn, aRun(stubborn, { id: "run:0" })))
      .when(cmd("run.interrupt", { threadId: A }))
      .thenRejects(RejectionCode.threadNotInterruptible);
  });

  it("reads the run's provider, not the thread's current selection", () => {
    const run = aRun(thread, { id: "run:0" }); // on `plain`
    given(...withRuns(thread, run), existing(aProviderThread(A, "stubborn")))
      .when(cmd("run.interrupt", { threadId: A }))
      .then([runUpdated(after(run, { interruptRequestedAt: NOW })), interruptRequest("run:0", 1, null)], [effects.interruptTurn(A, "run:0")]);
  });

  it("rejects a deleted or unknown thread", () => {
    given(existing(aProviderThread(A, "plain", { deletedAt: NOW }))).when(cmd("run.interrupt", { threadId: A })).thenRejects(RejectionCode.threadDeleted);
    given().when(cmd("run.interrupt", { threadId: A })).thenRejects(RejectionCode.threadNotFound);
  });
});

describe("thread.stop", () => {
  const thread = aProviderThread(A, "steerable");

  it("holds the queued runs and interrupts the active one", () => {
    const active = aRun(thread, { id: "run:0", ordinal: 1 });
    const q1 = aRun(thread, { id: "run:1", ordinal: 2, status: "queued", queueRank: 0 });
    const q2 = aRun(thread, { id: "run:2", ordinal: 3, status: "queued", queueRank: 1, held: true });
    const state = given(...withRuns(thread, active, q1, q2))
      .when(cmd("thread.stop", { threadId: A }))
      .then(
        [runUpdated(after(q1, { held: true })), runUpdated(after(active, { interruptRequestedAt: NOW })), interruptRequest("run:0", 3, "stopped")],
        [effects.interruptTurn(A, "run:0")],
      );
    expect(state.threads.get(A)?.queuedRuns).toEqual([
      { runId: "run:1", held: true },
      { runId: "run:2", held: true },
    ]);
  });

  it("records the given reason on the interrupt item", () => {
    const active = aRun(thread, { id: "run:0" });
    given(...withRuns(thread, active))
      .when(cmd("thread.stop", { threadId: A, reason: "enough" }))
      .then([runUpdated(after(active, { interruptRequestedAt: NOW })), interruptRequest("run:0", 1, "enough")], [effects.interruptTurn(A, "run:0")]);
  });

  it("does not interrupt a run twice, but still holds the queue", () => {
    const active = aRun(thread, { id: "run:0", interruptRequestedAt: EARLIER });
    const queued = aRun(thread, { id: "run:1", ordinal: 2, status: "queued", queueRank: 0 });
    given(...withRuns(thread, active, queued))
      .when(cmd("thread.stop", { threadId: A }))
      .then([runUpdated(after(queued, { held: true }))]);
  });

  it("accepts an idle thread with no events and no effects", () => {
    const done = aRun(thread, { id: "run:0", status: "completed", endReason: "completed", endedAt: EARLIER });
    const scenario = given(...withRuns(thread, done)).when(cmd("thread.stop", { threadId: A }));
    scenario.then([], []);
    expect(scenario.decision).toEqual({ kind: "accepted", events: [], effects: [] });
  });

  it("rejects a deleted thread", () => {
    given(existing(aProviderThread(A, "plain", { deletedAt: NOW }))).when(cmd("thread.stop", { threadId: A })).thenRejects(RejectionCode.threadDeleted);
  });

  it("ends a turn its provider cannot interrupt and releases the session", () => {
    const stubborn = aProviderThread(A, "stubborn");
    const active = aRun(stubborn, { id: "run:0" });
    const scenario = given(...withRuns(stubborn, active)).when(cmd("thread.stop", { threadId: A }));
    const state = scenario.then(
      [
        itemEvent(anItem(A, "run:0", 1, testId("turn-item", 1), { type: "system_notice", level: "warning", text: "Stopped. The provider cannot interrupt a turn, so its session was released." }, { createdAt: NOW })),
        runUpdated(after(active, { status: "interrupted", endReason: "stopped_by_session_release", endedAt: NOW })),
      ],
      [{ kind: "provider.session.release", streamId: A, payload: { threadId: A, reason: "detached", message: "released to stop a turn the provider cannot interrupt" }, replaySafe: true }],
    );
    expect(state.runs.get("run:0")?.status).toBe("interrupted");
  });
});

describe("queue.resume", () => {
  const thread = aProviderThread(A, "plain");
  const q1 = aRun(thread, { id: "run:1", ordinal: 1, status: "queued", queueRank: 0, held: true });
  const q2 = aRun(thread, { id: "run:2", ordinal: 2, status: "queued", queueRank: 1, held: true });

  it("releases the held runs and starts the first on an idle thread", () => {
    const state = given(...withRuns(thread, q1, q2))
      .when(cmd("queue.resume", { threadId: A }))
      .then(
        [runUpdated(after(q1, { held: false })), runUpdated(after(q2, { held: false })), runUpdated(after(q1, { held: false, status: "starting", queueRank: null }))],
        [effects.startTurn(A, "run:1")],
      );
    expect(state.threads.get(A)?.queuedRuns).toEqual([{ runId: "run:2", held: false }]);
  });

  it("only releases them while a run is still active", () => {
    const active = aRun(thread, { id: "run:0", ordinal: 3, interruptRequestedAt: EARLIER });
    given(...withRuns(thread, q1, q2, active))
      .when(cmd("queue.resume", { threadId: A }))
      .then([runUpdated(after(q1, { held: false })), runUpdated(after(q2, { held: false }))]);
  });

  it("rejects a queue that nothing holds", () => {
    given(existing(thread)).when(cmd("queue.resume", { threadId: A })).thenRejects(RejectionCode.queueNotHeld);
    const unheld = aRun(thread, { id: "run:1", status: "queued", queueRank: 0 });
    given(...withRuns(thread, aRun(thread, { id: "run:0", ordinal: 2 }), unheld))
      .when(cmd("queue.resume", { threadId: A }))
      .thenRejects(RejectionCode.queueNotHeld);
  });

  it("after a Stop and the stopped turn's end, resuming starts the held runs in order", () => {
    const ctx = testContext();
    const active = aRun(thread, { id: "run:0", ordinal: 1 });
    const queued = aRun(thread, { id: "run:1", ordinal: 2, status: "queued", queueRank: 0 });
    const stopped = given(...withRuns(thread, active, queued)).when(cmd("thread.stop", { threadId: A }), ctx).thenHistory();
    const ended = given(...stopped)
      .when(cmd("provider-runtime.turn-completed", { threadId: A, runId: "run:0", status: "interrupted", error: null }), ctx)
      .thenHistory();
    const state = given(...ended).when(cmd("queue.resume", { threadId: A }), ctx).then(
      [
        runUpdated(after(queued, { held: false })),
        runUpdated(after(queued, { held: false, status: "starting", queueRank: null })),
      ],
      [effects.startTurn(A, "run:1")],
    );
    expect(state.runs.get("run:0")).toMatchObject({ status: "interrupted", endReason: "interrupted_by_user" });
  });
});

describe("provider-session.detach", () => {
  const thread = aProviderThread(A, "steerable");
  const session = aSession(A, { id: "provider-session:1" });

  it("asks the outbox to release the thread's session; nothing changes until it is released", () => {
    given(existing(thread), sessionAttached(session))
      .when(cmd("provider-session.detach", { threadId: A }))
      .then([], [effects.releaseSession(A, "provider-session:1", "detached by request")]);
  });

  it("passes the reason on", () => {
    given(existing(thread), sessionAttached(session))
      .when(cmd("provider-session.detach", { threadId: A, reason: "switching machines" }))
      .then([], [effects.releaseSession(A, "provider-session:1", "switching machines")]);
  });

  it("rejects a thread without an attached session", () => {
    given(existing(thread)).when(cmd("provider-session.detach", { threadId: A })).thenRejects(RejectionCode.sessionNotFound);
    given(existing(thread), sessionAttached({ ...session, status: "released", releasedAt: EARLIER, releaseReason: "idle_reaped" }))
      .when(cmd("provider-session.detach", { threadId: A }))
      .thenRejects(RejectionCode.sessionNotFound);
    given(existing(thread), existing(aProviderThread(B)), sessionAttached(aSession(B, { id: "provider-session:b" })))
      .when(cmd("provider-session.detach", { threadId: A }))
      .thenRejects(RejectionCode.sessionNotFound);
  });
});
