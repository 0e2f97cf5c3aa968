import { describe, expect, it } from "vitest";
import type { Run } from "../../contracts/entities/runs.js";
import type { DomainEvent } from "../../contracts/events.js";
import { contextTransferEvent, subagentEvent, threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import type { TurnItem } from "../../contracts/turnItems.js";
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
  labelled,
  labelledContext,
  pendingRequestId,
  permutations,
  rootWithRun,
  setupContext,
  shuffled,
  step,
  steps,
  turnEnds,
} from "../testing/delegationFixtures.js";
import { aRun, after, anItem, effects, itemEvent, runCreated, runUpdated } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";

const w = (prefix: string, n: number) => labelled("w", prefix, n);
const CHILD = "thread:t1";
const CHILD_RUN = "run:t1";
const TASK = "subagent:t1";

const completionText = (taskId: string, childThreadId: string, title: string, status: string, result: string) =>
  [
    `Delegated task "${title}" (taskId ${taskId}, child thread ${childThreadId}) finished: ${status}.`,
    "",
    "Result:",
    result,
    "",
    "Use task_status for details, or t3_thread_send on the child thread for a follow-up.",
  ].join("\n");

const questionText = (requestId: string) =>
  [
    `Delegated task "Task t1" (taskId ${TASK}) asks a question and is blocked until it is answered:`,
    "",
    "- Which branch?",
    "",
    `Answer with t3_pending_request_respond (threadId ${CHILD}, requestId ${requestId}), or ask the user.`,
  ].join("\n");

const COMPLETION_TITLE = 'Task "Task t1" finished: completed';
const QUESTION_TITLE = 'Task "Task t1" asks a question';

/** A notice as the parent's `notification` item: steered into its turn or carried by a follow-up run. */
const notice = (runId: string, position: number, id: string, fields: { title: string; text: string; requestId: string | null; delivery: "steered" | "queued" }) =>
  anItem(ROOT, runId, position, id, { type: "notification", sourceThreadId: CHILD, taskId: TASK, ...fields }, { createdAt: NOW });

/** Root (on `provider`) whose running turn delegated t1, which has completed with "All done.". */
function completed(provider = "steerable", afterDelegate: readonly DomainEvent[] = []): { history: DomainEvent[]; ctx: ReturnType<typeof setupContext> } {
  const ctx = setupContext();
  const delegated = [...step(rootWithRun(provider), delegate("t1"), ctx), ...afterDelegate];
  return { history: steps(delegated, finish(CHILD, CHILD_RUN, "All done."), ctx), ctx };
}

/** The follow-up run a notice allocates with labelledContext("w"): message w-1 (steering only), run w-2; its input is the notification. */
function noticeRun(parent: AppThread, ordinal: number): Run {
  return aRun(parent, { id: w("run", 2), ordinal, kind: "system_follow_up", status: "queued", messageId: null, createdAt: NOW, updatedAt: NOW });
}

describe("delegated-task.deliver-notice: completion", () => {
  it("steers the result into the parent's running steerable turn and marks it delivered and consumed", () => {
    const { history } = completed();
    const before = fold(history);
    const task = before.tasks.get(TASK)!;
    const transfer = before.transfers.get(task.resultContextTransferId!)!;
    const text = completionText(TASK, CHILD, "Task t1", "completed", "All done.");
    const state = given(...history)
      .when(deliverCompletion(TASK), labelledContext("w"))
      .then(
        [
          itemEvent(notice(ROOT_RUN, 3, w("turn-item", 2), { title: COMPLETION_TITLE, text, requestId: null, delivery: "steered" })),
          contextTransferEvent("context-transfer.updated", { ...transfer, status: "consumed", updatedAt: NOW, consumedAt: NOW }),
          subagentEvent(after(before.subagents.get(TASK)!, {}), after(task, { completionDelivery: "delivered", notices: [{ kind: "completion", requestId: null, runId: ROOT_RUN, delivery: "steered" }] })),
        ],
        [effects.steerTurn(ROOT, ROOT_RUN, w("message", 1), text)],
      );
    expect(state.runs.get(ROOT_RUN)?.status).toBe("running");
  });

  it("starts a system follow-up run on an idle parent", () => {
    const ctx = setupContext();
    const delegated = steps(rootWithRun(), [delegate("t1"), turnEnds(ROOT, ROOT_RUN)], ctx);
    const history = steps(delegated, finish(CHILD, CHILD_RUN, "All done."), ctx);
    const before = fold(history);
    const task = before.tasks.get(TASK)!;
    const transfer = before.transfers.get(task.resultContextTransferId!)!;
    const run = noticeRun(before.threads.get(ROOT)!, 2);
    const text = completionText(TASK, CHILD, "Task t1", "completed", "All done.");
    given(...history)
      .when(deliverCompletion(TASK), labelledContext("w"))
      .then(
        [
          runCreated(run),
          itemEvent(notice(run.id, 3, w("turn-item", 3), { title: COMPLETION_TITLE, text, requestId: null, delivery: "queued" })),
          runUpdated(after(run, { status: "starting" })),
          contextTransferEvent("context-transfer.updated", { ...transfer, status: "consumed", updatedAt: NOW, consumedAt: NOW }),
          subagentEvent(after(before.subagents.get(TASK)!, {}), after(task, { completionDelivery: "delivered", notices: [{ kind: "completion", requestId: null, runId: run.id, delivery: "queued" }] })),
        ],
        [effects.startTurn(ROOT, run.id)],
      );
  });

  it("queues a follow-up behind a busy parent whose provider cannot steer; it starts when the parent's turn ends", () => {
    const { history, ctx } = completed("plain");
    const before = fold(history);
    const task = before.tasks.get(TASK)!;
    const transfer = before.transfers.get(task.resultContextTransferId!)!;
    const run = noticeRun(before.threads.get(ROOT)!, 2);
    const text = completionText(TASK, CHILD, "Task t1", "completed", "All done.");
    const state = given(...history)
      .when(deliverCompletion(TASK), labelledContext("w"))
      .then([
        runCreated(run),
        itemEvent(notice(run.id, 3, w("turn-item", 3), { title: COMPLETION_TITLE, text, requestId: null, delivery: "queued" })),
        runUpdated(after(run, { queueRank: 0 })),
        contextTransferEvent("context-transfer.updated", { ...transfer, status: "consumed", updatedAt: NOW, consumedAt: NOW }),
        subagentEvent(after(before.subagents.get(TASK)!, {}), after(task, { completionDelivery: "delivered", notices: [{ kind: "completion", requestId: null, runId: run.id, delivery: "queued" }] })),
      ]);
    expect(state.threads.get(ROOT)?.queuedRuns).toEqual([{ runId: run.id, held: false }]);
    const delivered = given(...history).when(deliverCompletion(TASK), labelledContext("w")).thenHistory();
    expect(fold(step(delivered, turnEnds(ROOT, ROOT_RUN), ctx)).runs.get(run.id)?.status).toBe("starting");
  });

  it.each<[string, Partial<Run>]>([
    ["still starting", { status: "starting", startedAt: null }],
    ["waiting on an approval", { status: "waiting_on_approval" }],
    ["being interrupted", { interruptRequestedAt: NOW }],
  ])("queues instead of steering when the parent's steerable turn is %s", (_what, patch) => {
    const root = fold(rootWithRun()).runs.get(ROOT_RUN)!;
    const { history } = completed("steerable", [runUpdated({ ...root, ...patch })]);
    const state = fold(step(history, deliverCompletion(TASK), labelledContext("w")));
    expect(state.tasks.get(TASK)?.notices).toEqual([{ kind: "completion", requestId: null, runId: w("run", 2), delivery: "queued" }]);
    expect(state.runs.get(w("run", 2))).toMatchObject({ status: "queued", queueRank: 0, kind: "system_follow_up" });
  });

  it("a failed task's notice carries its error", () => {
    const ctx = setupContext();
    const history = steps(step(rootWithRun(), delegate("t1"), ctx), finish(CHILD, CHILD_RUN, "Half way.", "failed", "rate limited"), ctx);
    const state = fold(step(history, deliverCompletion(TASK), labelledContext("w")));
    const message = state.turnItems.get(ROOT)!.find((item) => item.id === w("turn-item", 2)) as Extract<TurnItem, { type: "notification" }>;
    expect(message.title).toBe('Task "Task t1" finished: failed');
    expect(message.text).toBe(completionText(TASK, CHILD, "Task t1", "failed", "Error: rate limited\n\nHalf way."));
  });

  it("rejects a second delivery, a task not ready yet, an unknown task and a deleted parent", () => {
    const { history, ctx } = completed();
    const delivered = step(history, deliverCompletion(TASK), ctx);
    given(...delivered).when(deliverCompletion(TASK)).thenRejects(RejectionCode.deliveryNotPending);
    const running = step(rootWithRun(), delegate("t1"), setupContext());
    given(...running).when(deliverCompletion(TASK)).thenRejects(RejectionCode.deliveryNotPending);
    given(...running).when(deliverCompletion("subagent:nope")).thenRejects(RejectionCode.taskNotFound);
    const root = fold(history).threads.get(ROOT)!;
    given(...history, threadEvent("thread.deleted", { ...root, deletedAt: NOW }))
      .when(deliverCompletion(TASK))
      .thenRejects(RejectionCode.threadNotFound);
  });
});

describe("many siblings completing: one notice each, no cap", () => {
  /** Root delegates `names`; optionally its own turn ends; the children complete in `order`, each delivered right after (or all at the end). */
  function run(names: readonly string[], order: readonly string[], parent: "running" | "idle", delivery: "interleaved" | "batched") {
    const ctx = setupContext();
    let history = steps(rootWithRun(), names.map((name) => delegate(name)), ctx);
    if (parent === "idle") history = step(history, turnEnds(ROOT, ROOT_RUN), ctx);
    for (const name of order) {
      history = steps(history, finish(`thread:${name}`, `run:${name}`, `${name} is done.`), ctx);
      if (delivery === "interleaved") history = step(history, deliverCompletion(`subagent:${name}`), ctx);
    }
    if (delivery === "batched") for (const name of order) history = step(history, deliverCompletion(`subagent:${name}`), ctx);
    return fold(history);
  }

  function check(names: readonly string[], order: readonly string[], parent: "running" | "idle", delivery: "interleaved" | "batched") {
    const state = run(names, order, parent, delivery);
    const messages = state.turnItems.get(ROOT)!.filter((item): item is Extract<TurnItem, { type: "notification" }> => item.type === "notification");
    expect(messages).toHaveLength(names.length);
    for (const name of names) {
      const task = state.tasks.get(`subagent:${name}`)!;
      expect(task.completionDelivery).toBe("delivered");
      expect(task.notices).toHaveLength(1);
      expect(state.transfers.get(task.resultContextTransferId!)?.status).toBe("consumed");
      expect(messages.filter((message) => message.text.includes(`(taskId subagent:${name},`))).toHaveLength(1);
    }
    const noticeRuns = order.map((name) => state.tasks.get(`subagent:${name}`)!.notices[0]!.runId!);
    if (parent === "running") {
      expect(noticeRuns).toEqual(order.map(() => ROOT_RUN));
      expect(state.tasks.get(`subagent:${order[0]}`)!.notices[0]!.delivery).toBe("steered");
    } else {
      // The first notice wakes the parent, the others queue behind it in delivery order.
      const [first, ...rest] = noticeRuns;
      expect(state.runs.get(first!)).toMatchObject({ kind: "system_follow_up", status: "starting" });
      expect(rest.map((id) => state.runs.get(id)?.queueRank)).toEqual(rest.map((_, index) => index));
      expect(state.threads.get(ROOT)?.queuedRuns).toEqual(rest.map((runId) => ({ runId, held: false })));
    }
  }

  const names = (n: number) => Array.from({ length: n }, (_, index) => `c${index + 1}`);

  it.each(["running", "idle"] as const)("one task, parent %s", (parent) => {
    check(names(1), names(1), parent, "interleaved");
  });

  describe.each(["running", "idle"] as const)("three tasks, parent %s", (parent) => {
    it.each(permutations(names(3)).map((order) => [order.join(" → "), order] as const))("completing %s", (_label, order) => {
      check(names(3), order, parent, "interleaved");
      check(names(3), order, parent, "batched");
    });
  });

  describe.each(["running", "idle"] as const)("eight tasks, parent %s", (parent) => {
    it.each([1, 2, 3, 4, 5].map((seed) => [seed, shuffled(names(8), seed)] as const))("shuffle %i", (_seed, order) => {
      check(names(8), order, parent, "interleaved");
      check(names(8), order, parent, "batched");
    });
  });

  it("the shuffles really differ", () => {
    const orders = new Set([1, 2, 3, 4, 5].map((seed) => shuffled(names(8), seed).join(",")));
    expect(orders.size).toBe(5);
  });
});

describe("delegated-task.deliver-notice: question", () => {
  /** Root (on `provider`) delegated t1, whose turn asks "Which branch?". */
  function asking(provider = "plain") {
    const ctx = setupContext();
    const history = steps(rootWithRun(provider), [delegate("t1"), asks(CHILD, CHILD_RUN, "native-q", "Which branch?")], ctx);
    return { history, ctx, requestId: pendingRequestId(history, CHILD) };
  }

  it("queues a notice naming the request and the child thread behind a busy parent that cannot steer", () => {
    const { history, requestId } = asking("plain");
    const before = fold(history);
    const run = noticeRun(before.threads.get(ROOT)!, 2);
    const state = given(...history)
      .when(deliverQuestion(TASK, requestId), labelledContext("w"))
      .then([
        runCreated(run),
        itemEvent(notice(run.id, 3, w("turn-item", 3), { title: QUESTION_TITLE, text: questionText(requestId), requestId, delivery: "queued" })),
        runUpdated(after(run, { queueRank: 0 })),
        subagentEvent(after(before.subagents.get(TASK)!, {}), after(before.tasks.get(TASK)!, { notices: [{ kind: "question", requestId, runId: run.id, delivery: "queued" }] })),
      ]);
    expect(state.tasks.get(TASK)?.completionDelivery).toBe("not_ready");
  });

  it("steers the notice into a running steerable parent turn", () => {
    const { history, requestId } = asking("steerable");
    const before = fold(history);
    given(...history)
      .when(deliverQuestion(TASK, requestId), labelledContext("w"))
      .then(
        [
          itemEvent(notice(ROOT_RUN, 3, w("turn-item", 2), { title: QUESTION_TITLE, text: questionText(requestId), requestId, delivery: "steered" })),
          subagentEvent(after(before.subagents.get(TASK)!, {}), after(before.tasks.get(TASK)!, { notices: [{ kind: "question", requestId, runId: ROOT_RUN, delivery: "steered" }] })),
        ],
        [effects.steerTurn(ROOT, ROOT_RUN, w("message", 1), questionText(requestId))],
      );
  });

  it("rejects routing the same request twice, and a request that is not a pending question of the task", () => {
    const { history, ctx, requestId } = asking();
    const routed = step(history, deliverQuestion(TASK, requestId), ctx);
    given(...routed).when(deliverQuestion(TASK, requestId)).thenRejects(RejectionCode.deliveryNotPending);
    given(...history).when(deliverQuestion(TASK, null)).thenRejects(RejectionCode.requestNotPending);
    given(...history).when(deliverQuestion(TASK, "runtime-request:nope")).thenRejects(RejectionCode.requestNotPending);
    const answered = step(history, cmd("runtime-request.respond", { threadId: CHILD, requestId, response: { answers: { q1: ["main"] } } }), ctx);
    given(...answered).when(deliverQuestion(TASK, requestId)).thenRejects(RejectionCode.requestNotPending);
    // Another task's question is not this task's.
    const other = steps(history, [delegate("t2"), asks("thread:t2", "run:t2", "native-q2", "Which file?")], ctx);
    given(...other).when(deliverQuestion(TASK, pendingRequestId(other, "thread:t2"))).thenRejects(RejectionCode.requestNotPending);
  });

  it("routes an approval only for a task that sends approvals to the parent, and never a question as an approval", () => {
    const { history, requestId } = asking();
    const approval = (id: string | null) => cmd("delegated-task.deliver-notice", { taskId: TASK, kind: "approval", requestId: id });
    // The child's question is not an approval request.
    given(...history).when(approval(requestId)).thenRejects(RejectionCode.requestNotPending);
    given(...history).when(approval(null)).thenRejects(RejectionCode.requestNotPending);
  });

  it("answering the question before the queued notice starts cancels the notice run", () => {
    const { history, ctx, requestId } = asking("plain");
    const routed = step(history, deliverQuestion(TASK, requestId), ctx);
    const before = fold(routed);
    const noticeRunId = before.tasks.get(TASK)!.notices[0]!.runId!;
    const request = before.runtimeRequests.get(requestId)!;
    const item = before.turnItems.get(CHILD)!.find((candidate) => candidate.type === "user_input_request")!;
    const answers = { q1: ["main"] };
    const state = given(...routed)
      .when(cmd("runtime-request.respond", { threadId: CHILD, requestId, response: { answers } }), labelledContext("w"))
      .then(
        [
          itemEvent(after(item, { status: "answered", answers })),
          { type: "runtime-request.updated", streamId: CHILD, data: { request: { ...request, status: "resolved", resolution: { answers }, updatedAt: NOW, resolvedAt: NOW } } },
          runUpdated(after(before.runs.get(CHILD_RUN)!, { status: "running" })),
          runUpdated(after(before.runs.get(noticeRunId)!, { status: "cancelled", queueRank: null, held: false, endReason: "question_resolved", endedAt: NOW })),
        ],
        [effects.respondRequest(request, { answers })],
      );
    expect(state.threads.get(ROOT)?.queuedRuns).toEqual([]);
  });

  it("dismissing the question cancels the queued notice run too", () => {
    const { history, ctx, requestId } = asking("plain");
    const routed = step(history, deliverQuestion(TASK, requestId), ctx);
    const noticeRunId = fold(routed).tasks.get(TASK)!.notices[0]!.runId!;
    const state = fold(step(routed, cmd("thread.user-input.dismiss", { threadId: CHILD, requestId }), ctx));
    expect(state.runs.get(noticeRunId)).toMatchObject({ status: "cancelled", endReason: "question_resolved" });
  });

  it("a notice run that already started is left alone when the question is answered", () => {
    const ctx = setupContext();
    const history = steps(rootWithRun(), [delegate("t1"), turnEnds(ROOT, ROOT_RUN), asks(CHILD, CHILD_RUN, "native-q", "Which branch?")], ctx);
    const requestId = pendingRequestId(history, CHILD);
    const routed = step(history, deliverQuestion(TASK, requestId), ctx);
    const noticeRunId = fold(routed).tasks.get(TASK)!.notices[0]!.runId!;
    expect(fold(routed).runs.get(noticeRunId)?.status).toBe("starting");
    const state = fold(step(routed, cmd("runtime-request.respond", { threadId: CHILD, requestId, response: { answers: { q1: ["main"] } } }), ctx));
    expect(state.runs.get(noticeRunId)?.status).toBe("starting");
  });

  it("answering one question leaves a queued completion notice and other questions' notices alone", () => {
    const ctx = setupContext();
    const history = steps(rootWithRun("plain"), [delegate("t1"), delegate("t2"), ...finish("thread:t2", "run:t2", "t2 done."), deliverCompletion("subagent:t2"), asks(CHILD, CHILD_RUN, "native-q", "Which branch?")], ctx);
    const requestId = pendingRequestId(history, CHILD);
    const routed = step(history, deliverQuestion(TASK, requestId), ctx);
    const completionRun = fold(routed).tasks.get("subagent:t2")!.notices[0]!.runId!;
    const state = fold(step(routed, cmd("runtime-request.respond", { threadId: CHILD, requestId, response: { answers: { q1: ["main"] } } }), ctx));
    expect(state.runs.get(completionRun)?.status).toBe("queued");
  });
});
