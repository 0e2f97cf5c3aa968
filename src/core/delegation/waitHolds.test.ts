import { describe, expect, it } from "vitest";
import type { DomainEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { cmd } from "../testing/fixtures.js";
import { ROOT, ROOT_RUN, asks, delegate, deliverCompletion, deliverQuestion, finish, fold, pendingRequestId, rootWithRun, setupContext, step, steps, turnEnds } from "../testing/delegationFixtures.js";
import { given } from "../testing/scenario.js";
import { TOOL_TASK_BOUNDS } from "../../contracts/entities/toolTasks.js";

/**
 * Task holds (docs/delegation.md, "Waits and notices"): a wait records that
 * it holds its tasks before it looks at them; while it holds, core refuses
 * the completion notice and the blocking question's notice; its end takes
 * what it handed over in the same decision. Exactly one delivery, whichever
 * node's reactor asks.
 */

const TASK = "subagent:t1";
const CHILD = "thread:t1";
const CHILD_RUN = "run:t1";
const ctx = setupContext();

const hold = (waitId: string, runId: string | null = ROOT_RUN, holder = "node:a") => cmd("delegated-task.wait-hold", { waitId, taskIds: [TASK], runId, holder });
const release = (waitId: string, took: string[] = [], owed: string[] = []) => cmd("delegated-task.wait-release", { waitId, taskIds: [TASK], took, owed });

function delegated(): DomainEvent[] {
  return steps(rootWithRun(), [delegate("t1"), cmd("provider-runtime.turn-started", { threadId: CHILD, runId: CHILD_RUN })], ctx);
}

describe("task holds", () => {
  it("a held task's result is refused as a notice; the wait's end takes it and acknowledges it in one decision", () => {
    const held = steps(delegated(), [hold("wait:1"), ...finish(CHILD, CHILD_RUN, "All done.")], ctx);
    expect(fold(held).tasks.get(TASK)).toMatchObject({ completionDelivery: "pending", heldBy: [{ waitId: "wait:1", runId: ROOT_RUN, holder: "node:a" }] });
    given(...held).when(deliverCompletion(TASK)).thenRejects(RejectionCode.deliveryHeld);
    const ended = step(held, release("wait:1", [TASK]), ctx);
    const task = fold(ended).tasks.get(TASK)!;
    expect(task).toMatchObject({ completionDelivery: "acknowledged", heldBy: [], notices: [] });
    expect(fold(ended).transfers.get(task.resultContextTransferId!)?.status).toBe("consumed");
    given(...ended).when(deliverCompletion(TASK)).thenRejects(RejectionCode.deliveryNotPending);
  });

  it("a wait that ends without the result leaves it pending, and the notice goes out then", () => {
    const held = steps(delegated(), [hold("wait:1"), ...finish(CHILD, CHILD_RUN, "All done."), release("wait:1")], ctx);
    expect(fold(held).tasks.get(TASK)).toMatchObject({ completionDelivery: "pending", heldBy: [] });
    expect(fold(step(held, deliverCompletion(TASK), ctx)).tasks.get(TASK)!.completionDelivery).toBe("delivered");
  });

  it("a result a notice delivered before the wait began stays that delivery: the wait's end does not acknowledge it too", () => {
    const delivered = steps(delegated(), [...finish(CHILD, CHILD_RUN, "All done."), deliverCompletion(TASK), hold("wait:1"), release("wait:1", [TASK])], ctx);
    expect(fold(delivered).tasks.get(TASK)).toMatchObject({ completionDelivery: "delivered", heldBy: [] });
  });

  it("while two waits hold the task, the end of one still holds it", () => {
    const held = steps(delegated(), [hold("wait:1"), hold("wait:2", null, "node:b"), ...finish(CHILD, CHILD_RUN, "All done."), release("wait:1")], ctx);
    expect(fold(held).tasks.get(TASK)!.heldBy).toEqual([{ waitId: "wait:2", runId: null, holder: "node:b" }]);
    given(...held).when(deliverCompletion(TASK)).thenRejects(RejectionCode.deliveryHeld);
  });

  it("a blocking question goes through the holding wait; cut short, the wait owes it to its run", () => {
    const asked = steps(delegated(), [hold("wait:1"), asks(CHILD, CHILD_RUN, "native-q", "Which branch?")], ctx);
    const requestId = pendingRequestId(asked, CHILD);
    given(...asked).when(deliverQuestion(TASK, requestId)).thenRejects(RejectionCode.deliveryHeld);
    const owed = step(asked, release("wait:1", [], [TASK]), ctx);
    expect(fold(owed).tasks.get(TASK)).toMatchObject({ heldBy: [], questionsOwedTo: ROOT_RUN });
    expect(fold(step(owed, deliverQuestion(TASK, requestId), ctx)).tasks.get(TASK)!.notices).toMatchObject([{ kind: "question", requestId }]);
  });

  it("the end of the run that waits releases its holds (a wait cut off with its turn)", () => {
    const held = steps(delegated(), [hold("wait:1"), ...finish(CHILD, CHILD_RUN, "All done."), turnEnds(ROOT, ROOT_RUN, "interrupted")], ctx);
    expect(fold(held).tasks.get(TASK)!.heldBy).toEqual([]);
    expect(fold(step(held, deliverCompletion(TASK), ctx)).tasks.get(TASK)!.completionDelivery).toBe("delivered");
  });

  it("a lost node's holds end, and only its own; every holder's after a single node's restart", () => {
    const held = steps(delegated(), [hold("wait:1", null, "node:a"), hold("wait:2", null, "node:b")], ctx);
    const lostA = step(held, cmd("delegated-task.waits-lost", { holder: "node:a" }), ctx);
    expect(fold(lostA).tasks.get(TASK)!.heldBy).toEqual([{ waitId: "wait:2", runId: null, holder: "node:b" }]);
    given(...lostA).when(cmd("delegated-task.waits-lost", { holder: "node:a" })).thenRejects(RejectionCode.waitNotFound);
    expect(fold(step(lostA, cmd("delegated-task.waits-lost", { holder: null }), ctx)).tasks.get(TASK)!.heldBy).toEqual([]);
  });

  it("refuses a hold on an unknown task, by a run that is over, or recorded twice", () => {
    given(...delegated())
      .when(cmd("delegated-task.wait-hold", { waitId: "wait:1", taskIds: ["subagent:nope"], runId: null, holder: "node:a" }))
      .thenRejects(RejectionCode.taskNotFound);
    given(...steps(delegated(), [turnEnds(ROOT, ROOT_RUN)], ctx))
      .when(hold("wait:1"))
      .thenRejects(RejectionCode.runNotActive);
    given(...step(delegated(), hold("wait:1"), ctx))
      .when(hold("wait:1"))
      .thenRejects(RejectionCode.waitAlreadyRecorded);
    given(...delegated()).when(release("wait:9")).thenRejects(RejectionCode.waitNotFound);
    expect(fold(delegated()).tasks.get(TASK)!.heldBy).toBeUndefined();
  });
});

describe("a delegation made as an MCP task", () => {
  const timing = { ttlMs: TOOL_TASK_BOUNDS.ttlMs.default, pollIntervalMs: TOOL_TASK_BOUNDS.pollIntervalMs.default };
  const asTask = () => steps(rootWithRun(), [delegate("t1", ROOT, ROOT_RUN, { toolTask: timing }), cmd("provider-runtime.turn-started", { threadId: CHILD, runId: CHILD_RUN })], ctx);
  const acknowledge = cmd("delegated_task.completion-delivery.acknowledge", { taskId: TASK });

  it("hands its result over through tasks/result while the calling run is in its turn: no completion notice, and the read acknowledges it", () => {
    const done = steps(asTask(), finish(CHILD, CHILD_RUN, "All done."), ctx);
    expect(fold(done).tasks.get(TASK)).toMatchObject({ completionDelivery: "pending", notices: [] });
    given(...done).when(deliverCompletion(TASK)).thenRejects(RejectionCode.deliveryHeld);
    expect(fold(step(done, acknowledge, ctx)).tasks.get(TASK)).toMatchObject({ completionDelivery: "acknowledged", notices: [] });
  });

  it("a result nobody read when the calling run ends is noticed then, as for any async delegation", () => {
    const ended = steps(asTask(), [...finish(CHILD, CHILD_RUN, "All done."), turnEnds(ROOT, ROOT_RUN)], ctx);
    expect(fold(step(ended, deliverCompletion(TASK), ctx)).tasks.get(TASK)!.completionDelivery).toBe("delivered");
  });

  it("a child's question is noticed regardless: the agent answers it with t3_pending_request_respond", () => {
    const asked = steps(asTask(), [asks(CHILD, CHILD_RUN, "native-q", "Which branch?")], ctx);
    const requestId = pendingRequestId(asked, CHILD);
    expect(fold(step(asked, deliverQuestion(TASK, requestId), ctx)).tasks.get(TASK)!.notices).toMatchObject([{ kind: "question", requestId }]);
  });

  it("a delegation made by a plain call is noticed at once", () => {
    const done = steps(delegated(), finish(CHILD, CHILD_RUN, "All done."), ctx);
    expect(fold(step(done, deliverCompletion(TASK), ctx)).tasks.get(TASK)!.completionDelivery).toBe("delivered");
  });
});
