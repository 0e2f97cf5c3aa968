import { describe, expect, it } from "vitest";
import { RejectionCode } from "../rejections.js";
import { cmd } from "../testing/fixtures.js";
import {
  ROOT,
  ROOT_RUN,
  asks,
  delegate,
  deliverCompletion,
  deliverQuestion,
  finish,
  fold,
  labelledContext,
  pendingRequestId,
  rootWithRun,
  setupContext,
  step,
  steps,
  turnEnds,
} from "../testing/delegationFixtures.js";
import { after, itemEvent, runUpdated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";
import type { DomainEvent } from "../../contracts/events.js";
import { subagentEvent } from "../../contracts/events.js";

const TASK = "subagent:t1";
const CHILD = "thread:t1";

/** Root on `provider` delegated t1, which completed; its completion notice was delivered. */
function noticed(provider: string): DomainEvent[] {
  const ctx = setupContext();
  return steps(rootWithRun(provider), [delegate("t1"), ...finish(CHILD, "run:t1", "All done."), deliverCompletion(TASK)], ctx);
}

function noticeItem(history: readonly DomainEvent[]) {
  const item = fold(history).turnItems.get(ROOT)!.find((candidate) => candidate.type === "notification");
  if (item?.type !== "notification") throw new Error("no notification");
  return item;
}

describe("notification.delivery.accept", () => {
  it("cancels the queued follow-up run of a completion notice, marks it accepted and acknowledges the result", () => {
    const history = noticed("plain");
    const before = fold(history);
    const item = noticeItem(history);
    expect(item.delivery).toBe("queued");
    const run = before.runs.get(item.runId!)!;
    const task = before.tasks.get(TASK)!;
    const state = given(...history)
      .when(cmd("notification.delivery.accept", { threadId: ROOT, itemId: item.id }), labelledContext("w"))
      .then([
        runUpdated(after(run, { status: "cancelled", queueRank: null, held: false, endReason: "notification_accepted", endedAt: NOW })),
        itemEvent(after(item, { delivery: "accepted" })),
        subagentEvent(after(before.subagents.get(TASK)!, {}), after(task, { completionDelivery: "acknowledged" })),
      ]);
    expect(state.threads.get(ROOT)?.queuedRuns).toEqual([]);
  });

  it("accepting a question notice leaves the task alone", () => {
    const ctx = setupContext();
    const history = steps(rootWithRun("plain"), [delegate("t1"), asks(CHILD, "run:t1", "native-q", "Which branch?")], ctx);
    const routed = step(history, deliverQuestion(TASK, pendingRequestId(history, CHILD)), ctx);
    const item = noticeItem(routed);
    const state = fold(given(...routed).when(cmd("notification.delivery.accept", { threadId: ROOT, itemId: item.id })).thenHistory());
    expect(state.runs.get(item.runId!)?.status).toBe("cancelled");
    expect(state.tasks.get(TASK)).toEqual(fold(routed).tasks.get(TASK));
  });

  it("refuses a steered notice, one whose run already started, and an item that is not a notification of the thread", () => {
    const steered = noticed("steerable");
    given(...steered)
      .when(cmd("notification.delivery.accept", { threadId: ROOT, itemId: noticeItem(steered).id }))
      .thenRejects(RejectionCode.deliveryNotPending);
    const started = step(noticed("plain"), turnEnds(ROOT, ROOT_RUN), setupContext());
    expect(fold(started).runs.get(noticeItem(started).runId!)?.status).toBe("starting");
    given(...started)
      .when(cmd("notification.delivery.accept", { threadId: ROOT, itemId: noticeItem(started).id }))
      .thenRejects(RejectionCode.deliveryNotPending);
    given(...started).when(cmd("notification.delivery.accept", { threadId: ROOT, itemId: "turn-item:root" })).thenRejects(RejectionCode.notificationNotFound);
    given(...started).when(cmd("notification.delivery.accept", { threadId: CHILD, itemId: noticeItem(started).id })).thenRejects(RejectionCode.notificationNotFound);
  });
});
