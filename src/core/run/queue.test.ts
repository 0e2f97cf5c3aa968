import { describe, expect, it } from "vitest";
import type { Run } from "../../contracts/entities/runs.js";
import type { AppThread } from "../../contracts/thread.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, aUserMessage, after, effects, itemEvent, itemEvents, runCreated, runUpdated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given, testContext } from "../testing/scenario.js";

const A = "thread:a";
const B = "thread:b";
const EARLIER = "2026-03-01T11:59:00.000Z";

const messageOf = (thread: AppThread, run: Run, position: number) => aUserMessage(thread.id, run.id, position, `turn-item:${run.id}`, run.messageId!, `text of ${run.id}`);

/** The thread and its runs, each with its message item at the run's index. */
function withRuns(thread: AppThread, ...runs: Run[]) {
  return [existing(thread), ...runs.flatMap((run, index) => [runCreated(run), itemEvent(messageOf(thread, run, index))])];
}

const queued = (thread: AppThread, n: number, fields: Partial<Run> = {}): Run =>
  aRun(thread, { id: `run:${n}`, ordinal: n + 1, status: "queued", queueRank: n - 1, messageId: `message:${n}`, ...fields });

describe("queued-run.start", () => {
  const thread = aProviderThread(A, "plain");
  const q1 = queued(thread, 1);
  const q2 = queued(thread, 2);

  it("starts the chosen queued run on an idle thread, ahead of its turn", () => {
    const state = given(...withRuns(thread, q1, q2))
      .when(cmd("queued-run.start", { threadId: A, runId: "run:2" }))
      .then([runUpdated(after(q2, { status: "starting", queueRank: null }))], [effects.startTurn(A, "run:2")]);
    expect(state.threads.get(A)?.queuedRuns).toEqual([{ runId: "run:1", held: false }]);
  });

  it("starts a held run and releases it", () => {
    const held = queued(thread, 1, { held: true });
    given(...withRuns(thread, held))
      .when(cmd("queued-run.start", { threadId: A, runId: "run:1" }))
      .then([runUpdated(after(held, { status: "starting", queueRank: null, held: false }))], [effects.startTurn(A, "run:1")]);
  });

  it("rejects while another run is active", () => {
    const active = aRun(thread, { id: "run:0", ordinal: 1, status: "waiting_on_approval" });
    given(...withRuns(thread, active, q1))
      .when(cmd("queued-run.start", { threadId: A, runId: "run:1" }))
      .thenRejects(RejectionCode.threadBusy);
  });

  it("rejects a run that is not queued", () => {
    const running = aRun(thread, { id: "run:0" });
    given(...withRuns(thread, running))
      .when(cmd("queued-run.start", { threadId: A, runId: "run:0" }))
      .thenRejects(RejectionCode.runNotQueued);
    const cancelled = queued(thread, 1, { status: "cancelled", queueRank: null, endReason: "cancelled", endedAt: EARLIER });
    given(...withRuns(thread, cancelled))
      .when(cmd("queued-run.start", { threadId: A, runId: "run:1" }))
      .thenRejects(RejectionCode.runNotQueued);
  });

  it("rejects an unknown run and another thread's run", () => {
    given(...withRuns(thread, q1)).when(cmd("queued-run.start", { threadId: A, runId: "run:9" })).thenRejects(RejectionCode.runNotFound);
    const other = aProviderThread(B, "plain");
    given(existing(thread), ...withRuns(other, queued(other, 1)))
      .when(cmd("queued-run.start", { threadId: A, runId: "run:1" }))
      .thenRejects(RejectionCode.runNotFound);
  });
});

describe("queued-run.reorder", () => {
  const thread = aProviderThread(A, "plain");
  const active = aRun(thread, { id: "run:0", ordinal: 1, messageId: "message:0" });
  const q1 = queued(thread, 1);
  const q2 = queued(thread, 2);
  const q3 = queued(thread, 3);
  const history = withRuns(thread, active, q1, q2, q3);

  it("renumbers the queue in the given order", () => {
    const state = given(...history)
      .when(cmd("queued-run.reorder", { threadId: A, runIds: ["run:3", "run:1", "run:2"] }))
      .then([runUpdated(after(q3, { queueRank: 0 })), runUpdated(after(q1, { queueRank: 1 })), runUpdated(after(q2, { queueRank: 2 }))]);
    expect(state.threads.get(A)?.queuedRuns.map((q) => q.runId)).toEqual(["run:3", "run:1", "run:2"]);
  });

  it("updates only the runs whose rank changes", () => {
    given(...history)
      .when(cmd("queued-run.reorder", { threadId: A, runIds: ["run:1", "run:3", "run:2"] }))
      .then([runUpdated(after(q3, { queueRank: 1 })), runUpdated(after(q2, { queueRank: 2 }))]);
  });

  it("closes the gaps a cancel left", () => {
    const gapped = [existing(thread), runCreated(q1), runCreated({ ...q3, queueRank: 2 })];
    given(...gapped)
      .when(cmd("queued-run.reorder", { threadId: A, runIds: ["run:3", "run:1"] }))
      .then([runUpdated(after(q3, { queueRank: 0 })), runUpdated(after(q1, { queueRank: 1 }))]);
  });

  it.each<[string, string[]]>([
    ["a missing run", ["run:1", "run:2"]],
    ["an extra run", ["run:1", "run:2", "run:3", "run:4"]],
    ["a run twice", ["run:1", "run:2", "run:2"]],
    ["a run that is not queued", ["run:0", "run:1", "run:2"]],
    ["an unknown run", ["run:1", "run:2", "run:9"]],
  ])("rejects a list with %s", (_what, runIds) => {
    given(...history).when(cmd("queued-run.reorder", { threadId: A, runIds })).thenRejects(RejectionCode.invalidReorder);
  });

  it("rejects the current order", () => {
    const rejection = given(...history)
      .when(cmd("queued-run.reorder", { threadId: A, runIds: ["run:1", "run:2", "run:3"] }))
      .thenRejects(RejectionCode.invalidReorder);
    expect(rejection.message).toMatch(/already in that order/);
  });

  it("rejects reordering an empty queue", () => {
    given(existing(thread)).when(cmd("queued-run.reorder", { threadId: A, runIds: [] })).thenRejects(RejectionCode.invalidReorder);
  });
});

describe("queued-run.cancel", () => {
  const thread = aProviderThread(A, "plain");
  const active = aRun(thread, { id: "run:0", ordinal: 1, messageId: "message:0" });
  const q1 = queued(thread, 1);
  const q2 = queued(thread, 2, { held: true });

  it("ends the run cancelled without starting it; its message stays in the timeline", () => {
    const state = given(...withRuns(thread, active, q1, q2))
      .when(cmd("queued-run.cancel", { threadId: A, runId: "run:1" }))
      .then([runUpdated(after(q1, { status: "cancelled", queueRank: null, endReason: "cancelled", endedAt: NOW }))]);
    expect(state.threads.get(A)?.queuedRuns).toEqual([{ runId: "run:2", held: true }]);
    expect(state.turnItems.get(A)?.[1]).toEqual(messageOf(thread, q1, 1));
  });

  it("cancels a held run and clears held", () => {
    given(...withRuns(thread, active, q1, q2))
      .when(cmd("queued-run.cancel", { threadId: A, runId: "run:2" }))
      .then([runUpdated(after(q2, { status: "cancelled", queueRank: null, held: false, endReason: "cancelled", endedAt: NOW }))]);
  });

  it("rejects the active run", () => {
    given(...withRuns(thread, active)).when(cmd("queued-run.cancel", { threadId: A, runId: "run:0" })).thenRejects(RejectionCode.runNotQueued);
  });

  it("rejects a run it already cancelled", () => {
    const history = given(...withRuns(thread, active, q1)).when(cmd("queued-run.cancel", { threadId: A, runId: "run:1" })).thenHistory();
    given(...history).when(cmd("queued-run.cancel", { threadId: A, runId: "run:1" })).thenRejects(RejectionCode.runNotQueued);
  });
});

describe("queued-run.edit", () => {
  const thread = aProviderThread(A, "plain");
  const active = aRun(thread, { id: "run:0", ordinal: 1, messageId: "message:0" });
  const q1 = queued(thread, 1);

  it("replaces the message text in place: same item id and position", () => {
    const state = given(...withRuns(thread, active, q1))
      .when(cmd("queued-run.edit", { threadId: A, runId: "run:1", text: "better words" }))
      .then([...itemEvents(after(messageOf(thread, q1, 1), { text: "better words" }))]);
    const items = state.turnItems.get(A)!;
    expect(items).toHaveLength(2);
    expect(items[1]).toMatchObject({ id: "turn-item:run:1", position: 1, text: "better words", runId: "run:1" });
  });

  it("rejects the same text", () => {
    given(...withRuns(thread, active, q1))
      .when(cmd("queued-run.edit", { threadId: A, runId: "run:1", text: "text of run:1" }))
      .thenRejects(RejectionCode.messageUnchanged);
  });

  it("rejects a run that already started", () => {
    given(...withRuns(thread, active))
      .when(cmd("queued-run.edit", { threadId: A, runId: "run:0", text: "too late" }))
      .thenRejects(RejectionCode.runNotQueued);
  });
});

describe("queued-message.promote-to-steer", () => {
  const thread = aProviderThread(A, "steerable");
  const active = aRun(thread, { id: "run:0", ordinal: 1, messageId: "message:0" });
  const q1 = queued(thread, 1);
  const q2 = queued(thread, 2);

  it("cancels the queued run and moves its message into the running turn with a steer effect", () => {
    const state = given(...withRuns(thread, active, q1, q2))
      .when(cmd("queued-message.promote-to-steer", { threadId: A, runId: "run:1" }))
      .then(
        [
          runUpdated(after(q1, { status: "cancelled", queueRank: null, endReason: "promoted_to_steer", endedAt: NOW })),
          ...itemEvents(after(messageOf(thread, q1, 1), { runId: "run:0" })),
        ],
        [effects.steerTurn(A, "run:0", "message:1", "text of run:1")],
      );
    expect(state.threads.get(A)?.queuedRuns).toEqual([{ runId: "run:2", held: false }]);
    expect(state.turnItems.get(A)?.[1]).toMatchObject({ position: 1, runId: "run:0" });
  });

  it("steers with the edited text", () => {
    const ctx = testContext();
    const edited = given(...withRuns(thread, active, q1))
      .when(cmd("queued-run.edit", { threadId: A, runId: "run:1", text: "edited" }), ctx)
      .thenHistory();
    given(...edited)
      .when(cmd("queued-message.promote-to-steer", { threadId: A, runId: "run:1" }), ctx)
      .then(
        [
          runUpdated(after(q1, { status: "cancelled", queueRank: null, endReason: "promoted_to_steer", endedAt: NOW })),
          ...itemEvents(after(messageOf(thread, q1, 1), { runId: "run:0", text: "edited" })),
        ],
        [effects.steerTurn(A, "run:0", "message:1", "edited")],
      );
  });

  it.each<[string, AppThread, Partial<Run> | null]>([
    ["the provider cannot steer", aProviderThread(A, "plain"), {}],
    ["the active turn is still starting", thread, { status: "starting" }],
    ["the active turn waits on an approval", thread, { status: "waiting_on_approval" }],
    ["a stop reached the active turn", thread, { interruptRequestedAt: EARLIER }],
    ["nothing is running", thread, null],
  ])("rejects when %s", (_what, on, activeFields) => {
    const runs = activeFields === null ? [queued(on, 1)] : [aRun(on, { id: "run:0", ordinal: 1, messageId: "message:0", ...activeFields }), queued(on, 1)];
    given(...withRuns(on, ...runs))
      .when(cmd("queued-message.promote-to-steer", { threadId: A, runId: "run:1" }))
      .thenRejects(RejectionCode.threadNotSendable);
  });

  it("rejects a run that is not queued", () => {
    given(...withRuns(thread, active))
      .when(cmd("queued-message.promote-to-steer", { threadId: A, runId: "run:0" }))
      .thenRejects(RejectionCode.runNotQueued);
  });
});
