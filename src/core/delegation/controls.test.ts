import { describe, expect, it } from "vitest";
import { contextTransferEvent, subagentEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { cmd } from "../testing/fixtures.js";
import {
  ROOT,
  ROOT_RUN,
  SETUP_AT,
  delegate,
  deliverCompletion,
  finish,
  fold,
  labelled,
  labelledContext,
  rootWithRun,
  says,
  setupContext,
  step,
  steps,
  turnEnds,
} from "../testing/delegationFixtures.js";
import { after, anItem, effects, itemEvent, runUpdated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";

const w = (prefix: string, n: number) => labelled("w", prefix, n);
const LATER = "2026-03-01T12:05:00.000Z";
const CHILD = "thread:t1";
const CHILD_RUN = "run:t1";
const TASK = "subagent:t1";
const GRANDCHILD = "thread:g1";
const GRANDCHILD_RUN = "run:g1";

const wakePolicy = (taskId: string, policy: "never" | "on_completion") => cmd("delegated_task.wake-policy", { taskId, wakePolicy: policy });
const acknowledge = (taskId: string) => cmd("delegated_task.completion-delivery.acknowledge", { taskId });
const dispose = (taskId: string) => cmd("delegated_task.completion-delivery.dispose", { taskId });
const stop = (taskId: string, reason?: string) => cmd("subagent.stop", reason === undefined ? { taskId } : { taskId, reason });

/** Root (on `provider`) delegated t1; t1's turn is running and said something. */
function running(provider = "steerable") {
  const ctx = setupContext();
  return { ctx, history: steps(rootWithRun(provider), [delegate("t1"), says(CHILD, CHILD_RUN, "a1", "All done.")], ctx) };
}

/** As `running`, and t1 completed: its delivery is pending. */
function pending(provider = "steerable") {
  const { ctx, history } = running(provider);
  return { ctx, history: step(history, turnEnds(CHILD, CHILD_RUN), ctx) };
}

/** As `pending` on a busy parent that cannot steer, and the result was delivered as a queued notice run. */
function deliveredQueued() {
  const { ctx, history } = pending("plain");
  const delivered = step(history, deliverCompletion(TASK), ctx);
  return { ctx, history: delivered, noticeRunId: fold(delivered).tasks.get(TASK)!.notices[0]!.runId! };
}

describe("delegated_task.wake-policy", () => {
  it("setting never disposes a pending delivery", () => {
    const { history } = pending();
    const before = fold(history);
    given(...history)
      .when(wakePolicy(TASK, "never"), labelledContext("w"))
      .then([subagentEvent(after(before.subagents.get(TASK)!, {}), after(before.tasks.get(TASK)!, { wakePolicy: "never", completionDelivery: "disposed" }))]);
  });

  it("on a running task only records the policy; completion then disposes the delivery", () => {
    const { ctx, history } = running();
    const before = fold(history);
    const changed = given(...history)
      .when(wakePolicy(TASK, "never"), labelledContext("w"))
      .then([subagentEvent(after(before.subagents.get(TASK)!, {}), after(before.tasks.get(TASK)!, { wakePolicy: "never" }))]);
    expect(changed.tasks.get(TASK)?.completionDelivery).toBe("not_ready");
    const never = step(history, wakePolicy(TASK, "never"), ctx);
    expect(fold(step(never, turnEnds(CHILD, CHILD_RUN), ctx)).tasks.get(TASK)?.completionDelivery).toBe("disposed");
  });

  it("setting on_completion again does not revive a disposed delivery", () => {
    const { ctx, history } = pending();
    const never = step(history, wakePolicy(TASK, "never"), ctx);
    const state = fold(step(never, wakePolicy(TASK, "on_completion"), ctx));
    expect(state.tasks.get(TASK)).toMatchObject({ wakePolicy: "on_completion", completionDelivery: "disposed" });
  });

  it("rejects an unchanged policy and an unknown task", () => {
    const { history } = running();
    given(...history).when(wakePolicy(TASK, "on_completion")).thenRejects(RejectionCode.wakePolicyUnchanged);
    given(...history).when(wakePolicy("subagent:nope", "never")).thenRejects(RejectionCode.taskNotFound);
  });
});

describe("delegated_task.completion-delivery.acknowledge", () => {
  it("a pending result is acknowledged and its transfer consumed", () => {
    const { history } = pending();
    const before = fold(history);
    const task = before.tasks.get(TASK)!;
    const transfer = before.transfers.get(task.resultContextTransferId!)!;
    given(...history)
      .when(acknowledge(TASK), labelledContext("w"))
      .then([
        contextTransferEvent("context-transfer.updated", { ...transfer, status: "consumed", updatedAt: NOW, consumedAt: NOW }),
        subagentEvent(after(before.subagents.get(TASK)!, {}), after(task, { completionDelivery: "acknowledged" })),
      ]);
  });

  it("a result delivered as a queued notice is acknowledged and the notice run that has not started is cancelled", () => {
    const { history, noticeRunId } = deliveredQueued();
    const before = fold(history);
    const state = given(...history)
      .when(acknowledge(TASK), labelledContext("w"))
      .then([
        runUpdated(after(before.runs.get(noticeRunId)!, { status: "cancelled", queueRank: null, held: false, endReason: "result_acknowledged", endedAt: NOW })),
        subagentEvent(after(before.subagents.get(TASK)!, {}), after(before.tasks.get(TASK)!, { completionDelivery: "acknowledged" })),
      ]);
    expect(state.threads.get(ROOT)?.queuedRuns).toEqual([]);
  });

  it("a result steered into the parent's turn is acknowledged with nothing else to undo", () => {
    const { ctx, history } = pending("steerable");
    const delivered = step(history, deliverCompletion(TASK), ctx);
    const before = fold(delivered);
    given(...delivered)
      .when(acknowledge(TASK), labelledContext("w"))
      .then([subagentEvent(after(before.subagents.get(TASK)!, {}), after(before.tasks.get(TASK)!, { completionDelivery: "acknowledged" }))]);
  });

  it("rejects a task not ready yet, already acknowledged or disposed: delivery_not_pending; and an unknown task", () => {
    const { ctx, history } = pending();
    given(...running().history).when(acknowledge(TASK)).thenRejects(RejectionCode.deliveryNotPending);
    given(...step(history, acknowledge(TASK), ctx)).when(acknowledge(TASK)).thenRejects(RejectionCode.deliveryNotPending);
    given(...step(history, dispose(TASK), ctx)).when(acknowledge(TASK)).thenRejects(RejectionCode.deliveryNotPending);
    given(...history).when(acknowledge("subagent:nope")).thenRejects(RejectionCode.taskNotFound);
  });
});

describe("delegated_task.completion-delivery.dispose", () => {
  it("disposes a pending delivery; the result stays pending in its transfer", () => {
    const { history } = pending();
    const before = fold(history);
    const state = given(...history)
      .when(dispose(TASK), labelledContext("w"))
      .then([subagentEvent(after(before.subagents.get(TASK)!, {}), after(before.tasks.get(TASK)!, { completionDelivery: "disposed" }))]);
    expect(state.transfers.get(state.tasks.get(TASK)!.resultContextTransferId!)?.status).toBe("pending");
  });

  it("cancels a queued completion notice that has not started", () => {
    const { history, noticeRunId } = deliveredQueued();
    const before = fold(history);
    given(...history)
      .when(dispose(TASK), labelledContext("w"))
      .then([
        runUpdated(after(before.runs.get(noticeRunId)!, { status: "cancelled", queueRank: null, held: false, endReason: "delivery_disposed", endedAt: NOW })),
        subagentEvent(after(before.subagents.get(TASK)!, {}), after(before.tasks.get(TASK)!, { completionDelivery: "disposed" })),
      ]);
  });

  it("disposed before the task finishes, the delivery stays disposed when it does", () => {
    const { ctx, history } = running();
    const disposed = step(history, dispose(TASK), ctx);
    expect(fold(disposed).tasks.get(TASK)?.completionDelivery).toBe("disposed");
    const state = fold(step(disposed, turnEnds(CHILD, CHILD_RUN), ctx));
    expect(state.tasks.get(TASK)).toMatchObject({ status: "completed", completionDelivery: "disposed" });
    given(...step(disposed, turnEnds(CHILD, CHILD_RUN), ctx)).when(deliverCompletion(TASK)).thenRejects(RejectionCode.deliveryNotPending);
  });

  it("rejects a delivery already disposed or acknowledged, and an unknown task", () => {
    const { ctx, history } = pending();
    given(...step(history, dispose(TASK), ctx)).when(dispose(TASK)).thenRejects(RejectionCode.deliveryNotPending);
    given(...step(history, acknowledge(TASK), ctx)).when(dispose(TASK)).thenRejects(RejectionCode.deliveryNotPending);
    given(...history).when(dispose("subagent:nope")).thenRejects(RejectionCode.taskNotFound);
  });
});

describe("subagent.stop (task_cancel)", () => {
  /** Root → t1 → g1, both turns running; t1 has a follow-up queued behind its turn. */
  function tree() {
    const ctx = setupContext();
    const history = steps(
      rootWithRun(),
      [
        delegate("t1"),
        delegate("g1", CHILD, CHILD_RUN),
        says(GRANDCHILD, GRANDCHILD_RUN, "b1", "Grandchild progress."),
        says(CHILD, CHILD_RUN, "a1", "Child progress."),
        cmd("message.dispatch", { threadId: CHILD, text: "later, also this", mode: "queue", runId: "run:queued" }),
      ],
      ctx,
    );
    return { ctx, history };
  }

  it("settles a task whose child run ended and whose only work left is a queued turn the stop holds", () => {
    const ctx = setupContext();
    // t1's run fails while a follow-up waits behind it under a paused budget, so nothing runs and the task is still working.
    const history = steps(
      rootWithRun(),
      [
        cmd("thread.budget.set", { threadId: ROOT, budget: { tokens: 100, onExceeded: "pause" } }),
        delegate("t1"),
        cmd("provider-runtime.turn-started", { threadId: CHILD, runId: CHILD_RUN }),
        cmd("message.dispatch", { threadId: CHILD, text: "later, also this", mode: "queue", runId: "run:queued" }),
        cmd("provider-runtime.usage-reported", { threadId: CHILD, runId: CHILD_RUN, usage: { inputTokens: 150, outputTokens: 50 } }),
        turnEnds(CHILD, CHILD_RUN, "failed", "boom"),
      ],
      ctx,
    );
    expect(fold(history).runs.get("run:queued")!.status).toBe("queued");
    expect(fold(history).tasks.get(TASK)!.status).toBe("running");
    const stopped = fold(step(history, stop(TASK, "enough"), ctx));
    expect(stopped.runs.get("run:queued")).toMatchObject({ status: "queued", held: true });
    // It settles on its last run, which failed.
    expect(stopped.tasks.get(TASK)).toMatchObject({ status: "failed", cancelReason: "enough" });
    expect(stopped.tasks.get(TASK)!.resultContextTransferId).not.toBeNull();
  });

  it("stops the child's own tasks first, then the child thread (interrupt, hold the queue), and disposes the delivery", () => {
    const { history } = tree();
    const before = fold(history);
    const g1 = after(before.tasks.get("subagent:g1")!, { cancelRequestedAt: NOW, cancelReason: "not needed" });
    const t1 = after(before.tasks.get(TASK)!, { cancelRequestedAt: NOW, cancelReason: "not needed" });
    const interrupt = (threadId: string, runId: string, id: string) =>
      itemEvent(anItem(threadId, runId, before.turnItems.get(threadId)!.length, id, { type: "run_interrupt_request", requestedBy: "user", reason: "not needed" }, { createdAt: NOW }));
    const state = given(...history)
      .when(stop(TASK, "not needed"), labelledContext("w"))
      .then(
        [
          subagentEvent(after(before.subagents.get("subagent:g1")!, {}), g1),
          runUpdated(after(before.runs.get(GRANDCHILD_RUN)!, { interruptRequestedAt: NOW })),
          interrupt(GRANDCHILD, GRANDCHILD_RUN, w("turn-item", 1)),
          subagentEvent(after(before.subagents.get(TASK)!, {}), t1),
          runUpdated(after(before.runs.get("run:queued")!, { held: true })),
          runUpdated(after(before.runs.get(CHILD_RUN)!, { interruptRequestedAt: NOW })),
          interrupt(CHILD, CHILD_RUN, w("turn-item", 2)),
          subagentEvent(after(before.subagents.get(TASK)!, {}), after(t1, { completionDelivery: "disposed" })),
        ],
        [effects.interruptTurn(GRANDCHILD, GRANDCHILD_RUN), effects.interruptTurn(CHILD, CHILD_RUN)],
      );
    expect(state.threads.get(CHILD)?.queuedRuns).toEqual([{ runId: "run:queued", held: true }]);
  });

  it("the tasks settle as their interrupted turns end: grandchild first, then the child; the held follow-up stays held", () => {
    const { ctx, history } = tree();
    const stopped = step(history, stop(TASK), ctx);
    const grandchildEnded = step(stopped, turnEnds(GRANDCHILD, GRANDCHILD_RUN, "interrupted"), ctx);
    let state = fold(grandchildEnded);
    expect(state.tasks.get("subagent:g1")).toMatchObject({ status: "interrupted", completionDelivery: "disposed", summary: "Grandchild progress." });
    expect(state.tasks.get(TASK)?.status).toBe("running");
    state = fold(step(grandchildEnded, turnEnds(CHILD, CHILD_RUN, "interrupted"), ctx));
    expect(state.tasks.get(TASK)).toMatchObject({ status: "interrupted", completionDelivery: "disposed", summary: "Child progress.", cancelReason: "cancelled" });
    expect(state.runs.get("run:queued")).toMatchObject({ status: "queued", held: true });
  });

  it("settles the same when the child's turn ends before the grandchild's", () => {
    const { ctx, history } = tree();
    const stopped = step(history, stop(TASK), ctx);
    const childEnded = step(stopped, turnEnds(CHILD, CHILD_RUN, "interrupted"), ctx);
    expect(fold(childEnded).tasks.get(TASK)?.status).toBe("running");
    const state = fold(step(childEnded, turnEnds(GRANDCHILD, GRANDCHILD_RUN, "interrupted"), ctx));
    expect(state.tasks.get("subagent:g1")?.status).toBe("interrupted");
    expect(state.tasks.get(TASK)).toMatchObject({ status: "interrupted", summary: "Child progress." });
  });

  it("a grandchild result still pending for the cancelled child is disposed, so it does not wake the child again", () => {
    const ctx = setupContext();
    const history = steps(rootWithRun(), [delegate("t1"), delegate("g1", CHILD, CHILD_RUN), ...finish(GRANDCHILD, GRANDCHILD_RUN, "g1 done.")], ctx);
    expect(fold(history).tasks.get("subagent:g1")?.completionDelivery).toBe("pending");
    const stopped = step(history, stop(TASK), ctx);
    expect(fold(stopped).tasks.get("subagent:g1")).toMatchObject({ status: "completed", completionDelivery: "disposed", cancelRequestedAt: null });
    given(...stopped).when(deliverCompletion("subagent:g1")).thenRejects(RejectionCode.deliveryNotPending);
    const state = fold(step(stopped, turnEnds(CHILD, CHILD_RUN, "interrupted"), ctx));
    expect(state.tasks.get(TASK)?.status).toBe("interrupted");
    expect(state.threadRuns.get(CHILD)).toEqual([CHILD_RUN]);
  });

  it("cancels the task's own queued turn, even though the stop held it, and settles the task as cancelled", () => {
    const ctx = setupContext();
    const history = step(rootWithRun(), delegate("t1"), ctx);
    const run = fold(history).runs.get(CHILD_RUN)!;
    const queued = [...history, runUpdated({ ...run, status: "queued", queueRank: 0 })];
    const decision = given(...queued).when(stop(TASK), labelledContext("w")).decision;
    expect(decision.kind === "accepted" && decision.events.filter((event) => event.type === "run.updated").map((event) => (event.data).run)).toEqual([
      after(run, { status: "queued", queueRank: 0, held: true }),
      after(run, { status: "cancelled", queueRank: null, held: false, endReason: "cancelled", endedAt: NOW }),
    ]);
    const state = fold(step(queued, stop(TASK), ctx));
    expect(state.tasks.get(TASK)).toMatchObject({ status: "cancelled", completionDelivery: "disposed", summary: null });
    expect(state.threads.get(CHILD)?.queuedRuns).toEqual([]);
  });

  it("ends a turn its provider cannot interrupt at once, releases the session, and settles the task as interrupted", () => {
    const ctx = setupContext();
    const history = steps(rootWithRun(), [delegate("t1", ROOT, ROOT_RUN, { providerInstanceId: "stubborn" }), says(CHILD, CHILD_RUN, "a1", "Partial.")], ctx);
    const decision = given(...history).when(stop(TASK), labelledContext("w")).decision;
    expect(decision.kind === "accepted" && decision.effects.map((effect) => effect.kind)).toEqual(["provider.session.release"]);
    const state = fold(step(history, stop(TASK), ctx));
    expect(state.runs.get(CHILD_RUN)).toMatchObject({ status: "interrupted", endReason: "stopped_by_session_release" });
    expect(state.tasks.get(TASK)).toMatchObject({ status: "interrupted", completionDelivery: "disposed", summary: "Partial." });
  });

  it("a terminal task is accepted: it keeps its result, its delivery is disposed and the child's later run is stopped", () => {
    const { ctx, history } = pending();
    const followUp = step(history, cmd("message.dispatch", { threadId: CHILD, text: "one more", runId: "run:more" }), ctx);
    const before = fold(followUp);
    const state = given(...followUp)
      .when(stop(TASK), labelledContext("w"))
      .then(
        [
          runUpdated(after(before.runs.get("run:more")!, { interruptRequestedAt: NOW })),
          itemEvent(anItem(CHILD, "run:more", before.turnItems.get(CHILD)!.length, w("turn-item", 1), { type: "run_interrupt_request", requestedBy: "user", reason: "cancelled" }, { createdAt: NOW })),
          subagentEvent(after(before.subagents.get(TASK)!, {}), after(before.tasks.get(TASK)!, { completionDelivery: "disposed" })),
        ],
        [effects.interruptTurn(CHILD, "run:more")],
      );
    expect(state.tasks.get(TASK)).toMatchObject({ status: "completed", summary: "All done.", cancelRequestedAt: null });
  });

  it("a terminal task with nothing running and nothing pending is accepted with no events", () => {
    const { ctx, history } = pending();
    const acknowledged = step(history, acknowledge(TASK), ctx);
    given(...acknowledged).when(stop(TASK)).then([]);
  });

  it("a repeated stop keeps the first request's time and reason", () => {
    const { ctx, history } = running();
    const stopped = step(history, stop(TASK, "first"), ctx);
    const again = fold(step(stopped, stop(TASK, "second"), labelledContext("w", { now: LATER })));
    expect(again.tasks.get(TASK)).toMatchObject({ cancelRequestedAt: SETUP_AT, cancelReason: "first" });
  });

  it("rejects a nonterminal task with nothing to stop: task_not_cancellable", () => {
    const { history } = running();
    const run = fold(history).runs.get(CHILD_RUN)!;
    // The turn ended but the task was not settled yet (finalize is still to come).
    const ended = [...history, runUpdated(after(run, { status: "completed", endReason: "completed", endedAt: NOW }))];
    given(...ended).when(stop(TASK)).thenRejects(RejectionCode.taskNotCancellable);
  });

  it("accepts a nonterminal task whose turn is over but that waits for its own task, and stops that task", () => {
    const ctx = setupContext();
    const history = steps(rootWithRun(), [delegate("t1"), delegate("g1", CHILD, CHILD_RUN), ...finish(CHILD, CHILD_RUN, "Waiting for g1.")], ctx);
    const stopped = step(history, stop(TASK), ctx);
    expect(fold(stopped).runs.get(GRANDCHILD_RUN)?.interruptRequestedAt).toBe(SETUP_AT);
    const state = fold(step(stopped, turnEnds(GRANDCHILD, GRANDCHILD_RUN, "interrupted"), ctx));
    expect(state.tasks.get("subagent:g1")?.status).toBe("interrupted");
    expect(state.tasks.get(TASK)).toMatchObject({ status: "interrupted", summary: "Waiting for g1.", completionDelivery: "disposed" });
  });

  it("rejects an unknown task: task_not_found", () => {
    given(...rootWithRun()).when(stop("subagent:nope")).thenRejects(RejectionCode.taskNotFound);
  });

  it("leaves the parent's own turn alone", () => {
    const { ctx, history } = running();
    const state = fold(step(history, stop(TASK), ctx));
    expect(state.runs.get(ROOT_RUN)).toMatchObject({ status: "running", interruptRequestedAt: null });
  });
});
