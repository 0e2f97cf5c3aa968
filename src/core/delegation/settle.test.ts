import { describe, expect, it } from "vitest";
import type { DomainEvent } from "../../contracts/events.js";
import { contextTransferEvent, nodeEvent, subagentEvent } from "../../contracts/events.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { RejectionCode } from "../rejections.js";
import { cmd } from "../testing/fixtures.js";
import {
  ROOT,
  ROOT_RUN,
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
import { after, itemEvent, runUpdated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";

const w = (prefix: string, n: number) => labelled("w", prefix, n);
const CHILD = "thread:t1";
const CHILD_RUN = "run:t1";
const TASK = "subagent:t1";
const GRANDCHILD = "thread:g1";
const GRANDCHILD_RUN = "run:g1";

/** Root with a running turn that delegated t1; the child's turn is running and said two things. */
function childWorking(overrides: Parameters<typeof delegate>[3] = {}): { history: DomainEvent[]; ctx: ReturnType<typeof setupContext> } {
  const ctx = setupContext();
  const history = steps(rootWithRun(), [delegate("t1", ROOT, ROOT_RUN, overrides), says(CHILD, CHILD_RUN, "a1", "Half way."), says(CHILD, CHILD_RUN, "a2", "All done.")], ctx);
  return { history, ctx };
}

function subagentItem(history: readonly DomainEvent[], taskId: string, threadId: string): Extract<TurnItem, { type: "subagent" }> {
  const item = fold(history)
    .turnItems.get(threadId)!
    .find((candidate) => candidate.type === "subagent" && candidate.subagentId === taskId);
  return item as Extract<TurnItem, { type: "subagent" }>;
}

describe("settling a task when its child run ends", () => {
  it("finalizes in the same decision: task, result transfer, subagent, both nodes and the parent's item", () => {
    const { history } = childWorking();
    const before = fold(history);
    const task = before.tasks.get(TASK)!;
    const subagent = before.subagents.get(TASK)!;
    const run = before.runs.get(CHILD_RUN)!;
    const transferId = w("context-transfer", 1);
    const state = given(...history)
      .when(turnEnds(CHILD, CHILD_RUN), labelledContext("w"))
      .then([
        runUpdated(after(run, { status: "completed", endReason: "completed", endedAt: NOW })),
        contextTransferEvent("context-transfer.created", {
          id: transferId,
          threadId: ROOT,
          sourceThreadId: CHILD,
          kind: "subagent_result",
          status: "pending",
          subagentId: TASK,
          runId: CHILD_RUN,
          text: "All done.",
          createdAt: NOW,
          updatedAt: NOW,
          consumedAt: null,
        }),
        subagentEvent(
          after(subagent, { status: "completed", result: "All done.", endedAt: NOW }),
          after(task, { status: "completed", summary: "All done.", resultContextTransferId: transferId, completionDelivery: "pending" }),
        ),
        nodeEvent(after(before.nodes.get(task.parentNodeId)!, { status: "completed", endedAt: NOW })),
        nodeEvent(after(before.nodes.get(task.childNodeId)!, { status: "completed", endedAt: NOW })),
        itemEvent(after(subagentItem(history, TASK, ROOT), { status: "completed", result: "All done." })),
      ]);
    expect(state.runs.get(ROOT_RUN)?.status).toBe("running");
  });

  it("keeps the delivery pending for the parent by default, and disposes it when the wake policy is never", () => {
    const pending = childWorking();
    expect(fold(step(pending.history, turnEnds(CHILD, CHILD_RUN), pending.ctx)).tasks.get(TASK)).toMatchObject({ status: "completed", completionDelivery: "pending" });
    const never = childWorking({ wakePolicy: "never" });
    expect(fold(step(never.history, turnEnds(CHILD, CHILD_RUN), never.ctx)).tasks.get(TASK)).toMatchObject({ status: "completed", completionDelivery: "disposed" });
  });

  it("a failed run publishes its provider error before any progress text", () => {
    const { history, ctx } = childWorking();
    const state = fold(step(history, turnEnds(CHILD, CHILD_RUN, "failed", "rate limited"), ctx));
    const task = state.tasks.get(TASK)!;
    expect(task).toMatchObject({ status: "failed", summary: "Error: rate limited\n\nAll done.", completionDelivery: "pending" });
    expect(state.transfers.get(task.resultContextTransferId!)?.text).toBe("Error: rate limited\n\nAll done.");
    expect(state.subagents.get(TASK)).toMatchObject({ status: "failed", result: "Error: rate limited\n\nAll done." });
    expect(state.nodes.get(task.parentNodeId)?.status).toBe("failed");
    expect(state.nodes.get(task.childNodeId)?.status).toBe("failed");
  });

  it("a failed run with no text publishes the error alone", () => {
    const ctx = setupContext();
    const history = step(rootWithRun(), delegate("t1"), ctx);
    const state = fold(step(history, turnEnds(CHILD, CHILD_RUN, "failed", "no credits"), ctx));
    expect(state.tasks.get(TASK)).toMatchObject({ status: "failed", summary: "Error: no credits" });
  });

  it("a run lost to a restart settles the task as interrupted when the delegation says onCrash fail", () => {
    const { history, ctx } = childWorking({ onCrash: "fail" });
    const state = fold(
      step(history, cmd("provider-runtime.run-lost", { threadId: CHILD, runId: CHILD_RUN, status: "interrupted", reason: "server_restarted", message: "Loom restarted" }), ctx),
    );
    expect(state.tasks.get(TASK)).toMatchObject({ status: "interrupted", summary: "All done.", completionDelivery: "pending" });
    expect(state.subagents.get(TASK)?.status).toBe("interrupted");
  });

  it("a released session interrupts the child's run and settles the task", () => {
    const { history, ctx } = childWorking();
    const opened = step(history, cmd("provider-runtime.session-opened", { threadId: CHILD, providerSessionId: "provider-session:c", providerInstanceId: "steerable", driver: "scripted" }), ctx);
    const state = fold(step(opened, cmd("provider-runtime.session-released", { threadId: CHILD, providerSessionId: "provider-session:c", reason: "crashed", message: "it crashed" }), ctx));
    expect(state.tasks.get(TASK)?.status).toBe("interrupted");
  });

  it("a cancel-requested task whose run then completes settles as interrupted, with delivery disposed", () => {
    const { history, ctx } = childWorking();
    const stopped = step(history, cmd("subagent.stop", { taskId: TASK }), ctx);
    const state = fold(step(stopped, turnEnds(CHILD, CHILD_RUN, "completed"), ctx));
    expect(state.tasks.get(TASK)).toMatchObject({ status: "interrupted", summary: "All done.", completionDelivery: "disposed" });
  });

  it("a cancel-requested task whose run then fails stays failed", () => {
    const { history, ctx } = childWorking();
    const stopped = step(history, cmd("subagent.stop", { taskId: TASK }), ctx);
    const state = fold(step(stopped, turnEnds(CHILD, CHILD_RUN, "failed", "boom"), ctx));
    expect(state.tasks.get(TASK)).toMatchObject({ status: "failed", summary: "Error: boom\n\nAll done.", completionDelivery: "disposed" });
  });

  it("a queued-run.cancel of the child's only, still queued run settles the task as cancelled", () => {
    const ctx = setupContext();
    const history = step(rootWithRun(), delegate("t1"), ctx);
    // The child's run never started (e.g. it was still waiting in the child's queue).
    const run = fold(history).runs.get(CHILD_RUN)!;
    const queued = [...history, runUpdated({ ...run, status: "queued", queueRank: 0 })];
    const state = fold(step(queued, cmd("queued-run.cancel", { threadId: CHILD, runId: CHILD_RUN }), ctx));
    expect(state.runs.get(CHILD_RUN)?.status).toBe("cancelled");
    expect(state.tasks.get(TASK)).toMatchObject({ status: "cancelled", summary: null, completionDelivery: "pending" });
  });

  it("a thread.stop that ends a stubborn child's turn outright settles the task as interrupted", () => {
    const ctx = setupContext();
    const history = step(rootWithRun(), delegate("t1", ROOT, ROOT_RUN, { providerInstanceId: "stubborn" }), ctx);
    const state = fold(step(history, cmd("thread.stop", { threadId: CHILD }), ctx));
    expect(state.runs.get(CHILD_RUN)?.endReason).toBe("stopped_by_session_release");
    expect(state.tasks.get(TASK)?.status).toBe("interrupted");
  });

  it("a cancelled follow-up queued behind the task's turn does not replace its result", () => {
    const { history, ctx } = childWorking();
    // Someone queues a follow-up in the child, then cancels it before it starts.
    const queued = step(history, cmd("message.dispatch", { threadId: CHILD, text: "also this", mode: "queue", runId: "run:follow" }), ctx);
    const cancelled = step(queued, cmd("queued-run.cancel", { threadId: CHILD, runId: "run:follow" }), ctx);
    expect(fold(cancelled).tasks.get(TASK)?.status).toBe("running");
    const state = fold(step(cancelled, turnEnds(CHILD, CHILD_RUN), ctx));
    const task = state.tasks.get(TASK)!;
    expect(task).toMatchObject({ status: "completed", summary: "All done." });
    expect(state.transfers.get(task.resultContextTransferId!)?.runId).toBe(CHILD_RUN);
  });

  it("does not settle while another queued turn in the child will still run, and settles on that turn's text", () => {
    const { history, ctx } = childWorking();
    const queued = step(history, cmd("message.dispatch", { threadId: CHILD, text: "and then this", mode: "queue", runId: "run:follow" }), ctx);
    const first = step(queued, turnEnds(CHILD, CHILD_RUN), ctx);
    expect(fold(first).tasks.get(TASK)?.status).toBe("running");
    expect(fold(first).runs.get("run:follow")?.status).toBe("starting");
    const state = fold(steps(first, finish(CHILD, "run:follow", "Both done."), ctx));
    expect(state.tasks.get(TASK)).toMatchObject({ status: "completed", summary: "Both done." });
  });
});

describe("a child waiting for its own children", () => {
  /** Root → t1 → g1; t1's turn has ended. */
  function waiting(grandchild: Parameters<typeof delegate>[3] = {}) {
    const ctx = setupContext();
    const history = steps(rootWithRun(), [delegate("t1"), delegate("g1", CHILD, CHILD_RUN, grandchild), ...finish(CHILD, CHILD_RUN, "Started g1, waiting.")], ctx);
    return { history, ctx };
  }

  it("does not finalize when its run ends while a task of its own is unfinished", () => {
    const ctx = setupContext();
    const history = steps(rootWithRun(), [delegate("t1"), delegate("g1", CHILD, CHILD_RUN), says(CHILD, CHILD_RUN, "a1", "Started g1, waiting.")], ctx);
    const run = fold(history).runs.get(CHILD_RUN)!;
    const state = given(...history)
      .when(turnEnds(CHILD, CHILD_RUN), labelledContext("w"))
      .then([runUpdated(after(run, { status: "completed", endReason: "completed", endedAt: NOW }))]);
    expect(state.tasks.get(TASK)).toMatchObject({ status: "running", resultContextTransferId: null, completionDelivery: "not_ready" });
  });

  it("finalizes after the grandchild settles, its result reaches the child, and the child's follow-up run ends", () => {
    const { history, ctx } = waiting();
    // The grandchild completes: its result is pending for the child, the child is still not final.
    const grandchildDone = steps(history, finish(GRANDCHILD, GRANDCHILD_RUN, "g1 found it."), ctx);
    let state = fold(grandchildDone);
    expect(state.tasks.get("subagent:g1")).toMatchObject({ status: "completed", completionDelivery: "pending" });
    expect(state.tasks.get(TASK)?.resultContextTransferId).toBeNull();
    // The result wakes the idle child with a follow-up run.
    const delivered = step(grandchildDone, deliverCompletion("subagent:g1"), ctx);
    state = fold(delivered);
    const followUp = state.tasks.get("subagent:g1")!.notices[0]!.runId!;
    expect(state.runs.get(followUp)).toMatchObject({ threadId: CHILD, kind: "system_follow_up", status: "starting" });
    expect(state.tasks.get(TASK)?.status).toBe("running");
    // The follow-up ends: now the child's task is final, with the follow-up's text.
    state = fold(steps(delivered, finish(CHILD, followUp, "Integrated g1's result."), ctx));
    const task = state.tasks.get(TASK)!;
    expect(task).toMatchObject({ status: "completed", summary: "Integrated g1's result.", completionDelivery: "pending" });
    expect(state.transfers.get(task.resultContextTransferId!)).toMatchObject({ runId: followUp, threadId: ROOT, text: "Integrated g1's result." });
    // The published original run id does not change.
    expect(task.childRunId).toBe(CHILD_RUN);
  });

  it("finalizes in the grandchild's decision when nothing will be delivered to it (wake policy never)", () => {
    const { history, ctx } = waiting({ wakePolicy: "never" });
    const state = fold(steps(history, finish(GRANDCHILD, GRANDCHILD_RUN, "g1 found it."), ctx));
    expect(state.tasks.get("subagent:g1")).toMatchObject({ status: "completed", completionDelivery: "disposed" });
    expect(state.tasks.get(TASK)).toMatchObject({ status: "completed", summary: "Started g1, waiting." });
  });

  it.each([
    ["disposed", cmd("delegated_task.completion-delivery.dispose", { taskId: "subagent:g1" })],
    ["acknowledged", cmd("delegated_task.completion-delivery.acknowledge", { taskId: "subagent:g1" })],
    ["made never to wake", cmd("delegated_task.wake-policy", { taskId: "subagent:g1", wakePolicy: "never" })],
  ])("finalizes when the grandchild's pending result is %s instead of delivered", (_what, command) => {
    const { history, ctx } = waiting();
    const grandchildDone = steps(history, finish(GRANDCHILD, GRANDCHILD_RUN, "g1 found it."), ctx);
    const state = fold(step(grandchildDone, command, ctx));
    expect(state.tasks.get(TASK)).toMatchObject({ status: "completed", summary: "Started g1, waiting." });
  });

  it("finalizes when the grandchild's result is delivered but no run can carry it (the child's provider is gone)", () => {
    const { history, ctx } = waiting();
    const grandchildDone = steps(history, finish(GRANDCHILD, GRANDCHILD_RUN, "g1 found it."), ctx);
    const withoutProvider = { ...ctx, providers: (id: string) => (id === "steerable" ? null : ctx.providers(id)) };
    const state = fold(step(grandchildDone, deliverCompletion("subagent:g1"), withoutProvider));
    expect(state.tasks.get("subagent:g1")).toMatchObject({ completionDelivery: "delivered", notices: [{ kind: "completion", requestId: null, runId: null, delivery: "queued" }] });
    expect(state.tasks.get(TASK)).toMatchObject({ status: "completed", summary: "Started g1, waiting." });
  });
});

describe("delegated-task.finalize", () => {
  it("settles a task whose run ended without settling (replayed after a restart), with the same events as a live settle", () => {
    const { history } = childWorking();
    const run = fold(history).runs.get(CHILD_RUN)!;
    // An older log: the run ended, nothing settled the task.
    const ended = [...history, runUpdated(after(run, { status: "completed", endReason: "completed", endedAt: NOW }))];
    const live = given(...history).when(turnEnds(CHILD, CHILD_RUN), labelledContext("w")).decision;
    expect(live.kind).toBe("accepted");
    const liveEvents = live.kind === "accepted" ? live.events.slice(1) : [];
    const state = given(...ended).when(cmd("delegated-task.finalize", { taskId: TASK }), labelledContext("w")).then(liveEvents);
    expect(state.tasks.get(TASK)).toMatchObject({ status: "completed", summary: "All done." });
  });

  it("is idempotent: a second finalize is rejected and writes nothing", () => {
    const { history, ctx } = childWorking();
    const done = step(history, turnEnds(CHILD, CHILD_RUN), ctx);
    const rejection = given(...done).when(cmd("delegated-task.finalize", { taskId: TASK })).thenRejects(RejectionCode.deliveryNotPending);
    expect(rejection.message).toContain("already final");
  });

  it("rejects a task that still has work, and an unknown task", () => {
    const { history } = childWorking();
    given(...history).when(cmd("delegated-task.finalize", { taskId: TASK })).thenRejects(RejectionCode.taskStillWorking);
    given(...history).when(cmd("delegated-task.finalize", { taskId: "subagent:nope" })).thenRejects(RejectionCode.taskNotFound);
  });

  it("never changes a published result: a later follow-up in the child leaves the task alone", () => {
    const { history, ctx } = childWorking();
    const done = step(history, turnEnds(CHILD, CHILD_RUN), ctx);
    const published = fold(done).tasks.get(TASK)!;
    const followUp = steps(done, [cmd("message.dispatch", { threadId: CHILD, text: "one more thing", runId: "run:more" }), ...finish(CHILD, "run:more", "Something else.")], ctx);
    const state = fold(followUp);
    const { followUps, ...rest } = state.tasks.get(TASK)!;
    expect(rest).toEqual({ ...published, updatedAt: rest.updatedAt });
    // The follow-up is tracked on the parent beside the result, and ended with its run.
    expect(followUps).toEqual([{ runId: "run:more", status: "completed", createdAt: rest.updatedAt, endedAt: rest.updatedAt }]);
    given(...followUp).when(cmd("delegated-task.finalize", { taskId: TASK })).thenRejects(RejectionCode.deliveryNotPending);
  });
});
