import { describe, expect, it } from "vitest";
import type { ContextHandoff } from "../../contracts/entities/contextTransfers.js";
import type { Run } from "../../contracts/entities/runs.js";
import { contextHandoffEvent, threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import type { DomainEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, aUserMessage, after, anItem, effects, itemEvent, runCreated, testId } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given, testContext } from "../testing/scenario.js";

const A = "thread:a";
const ENDED = "2026-03-01T11:30:00.000Z";

/** Thread A on `steerable` with `n` completed runs, each with a user message and an assistant reply. */
function history(thread: AppThread, n: number, fields: (k: number) => Partial<Run> = () => ({})): { events: DomainEvent[]; runs: Run[] } {
  const events: DomainEvent[] = [existing(thread)];
  const runs: Run[] = [];
  for (let k = 1; k <= n; k++) {
    const run = aRun(thread, { id: `run:${k}`, ordinal: k, status: "completed", messageId: `message:${k}`, endedAt: ENDED, endReason: "completed", ...fields(k) });
    runs.push(run);
    events.push(
      runCreated(run),
      itemEvent(aUserMessage(A, run.id, 2 * (k - 1), `user:${k}`, `message:${k}`, `question ${k}`)),
      itemEvent(anItem(A, run.id, 2 * (k - 1) + 1, `reply:${k}`, { type: "assistant_message", messageId: `reply:${k}`, text: `answer ${k}`, streaming: false, createdBy: "agent", creationSource: "provider" })),
    );
  }
  return { events, runs };
}

const thread = aProviderThread(A, "steerable");

function pendingHandoff(overrides: Partial<ContextHandoff> = {}): ContextHandoff {
  return {
    id: testId("context-handoff", 1),
    threadId: A,
    sourceProviderInstanceId: "steerable",
    targetProviderInstanceId: "plain",
    strategy: "full_thread_summary",
    status: "pending",
    coveredRunOrdinals: { from: 1, to: 2 },
    summaryText: null,
    history: [],
    delivery: null,
    createdAt: NOW,
    updatedAt: NOW,
    ...overrides,
  };
}

describe("provider.switch", () => {
  it("moves a thread without runs to the target, with nothing to hand over", () => {
    const fresh = aProviderThread(A, "steerable");
    given(existing(fresh))
      .when(cmd("provider.switch", { threadId: A, providerInstanceId: "plain", model: "m1" }))
      .then([threadEvent("thread.provider-switched", after(fresh, { providerInstanceId: "plain", modelSelection: { providerInstanceId: "plain", model: "m1" } }))]);
  });

  it("records a pending full_thread_summary handoff and a handoff item when the target never saw the thread", () => {
    const { events } = history(thread, 2);
    given(...events)
      .when(cmd("provider.switch", { threadId: A, providerInstanceId: "plain" }))
      .then([
        threadEvent("thread.provider-switched", after(thread, { providerInstanceId: "plain", modelSelection: { providerInstanceId: "plain", model: null } })),
        contextHandoffEvent(pendingHandoff()),
        itemEvent(
          anItem(A, null, 4, testId("turn-item", 2), { type: "handoff", handoffId: testId("context-handoff", 1), fromProvider: "steerable", toProvider: "plain", strategy: "full_thread_summary", status: "pending" }, { createdAt: NOW }),
        ),
      ]);
  });

  it("uses delta_since_target_last_seen covering only the runs after the target's last run", () => {
    const { events } = history(thread, 3, (k) => (k === 1 ? { providerInstanceId: "plain" } : {}));
    const decision = given(...events).when(cmd("provider.switch", { threadId: A, providerInstanceId: "plain" })).decision;
    expect(decision.kind).toBe("accepted");
    const handoff = decision.kind === "accepted" ? decision.events.find((e) => e.type === "context-handoff.updated") : undefined;
    expect(handoff?.data).toMatchObject({ handoff: { strategy: "delta_since_target_last_seen", coveredRunOrdinals: { from: 2, to: 3 } } });
  });

  it("re-targets queued runs, which have not started, and supersedes a handoff still pending", () => {
    const { events } = history(thread, 2);
    const queued = aRun(thread, { id: "run:3", ordinal: 3, status: "queued", queueRank: 0, messageId: "message:3" });
    const earlier = pendingHandoff({ id: "context-handoff:old", targetProviderInstanceId: "other" });
    const earlierItem = anItem(A, null, 4, "turn-item:old", { type: "handoff", handoffId: "context-handoff:old", fromProvider: "steerable", toProvider: "other", strategy: "full_thread_summary", status: "pending" });
    const state = given(...events, runCreated(queued), contextHandoffEvent(earlier), itemEvent(earlierItem))
      .when(cmd("provider.switch", { threadId: A, providerInstanceId: "plain", model: "m1" }))
      .thenIncludes(contextHandoffEvent(after(earlier, { status: "superseded" })));
    expect(state.runs.get("run:3")).toMatchObject({ providerInstanceId: "plain", modelSelection: { providerInstanceId: "plain", model: "m1" }, status: "queued" });
    expect(state.turnItems.get(A)![4]).toMatchObject({ handoffId: "context-handoff:old", status: "superseded" });
    expect([...state.handoffs.values()].map((h) => [h.targetProviderInstanceId, h.status])).toEqual([
      ["other", "superseded"],
      ["plain", "pending"],
    ]);
  });

  it("rejects the thread's own provider, an unavailable one, and an unknown thread", () => {
    given(existing(thread)).when(cmd("provider.switch", { threadId: A, providerInstanceId: "steerable" })).thenRejects(RejectionCode.providerUnchanged);
    given(existing(thread)).when(cmd("provider.switch", { threadId: A, providerInstanceId: "nowhere" })).thenRejects(RejectionCode.providerUnavailable);
    given().when(cmd("provider.switch", { threadId: A, providerInstanceId: "plain" })).thenRejects(RejectionCode.threadNotFound);
  });
});

describe("handoff delivery", () => {
  const ctx = testContext();
  const { events } = history(thread, 2);
  const switched = given(...events).when(cmd("provider.switch", { threadId: A, providerInstanceId: "plain" }), ctx).thenHistory();

  it("builds the transcript into the target's first run when it starts, and marks the handoff ready", () => {
    const state = fold(...given(...switched).when(cmd("message.dispatch", { threadId: A, text: "go on", runId: "run:3", messageId: "message:3" }), ctx).thenHistory());
    const handoff = [...state.handoffs.values()][0]!;
    expect(handoff).toMatchObject({ status: "ready", coveredRunOrdinals: { from: 1, to: 2 }, delivery: { runId: "run:3", deliveredAt: NOW } });
    expect(handoff.summaryText).toContain('<handoff id="context-handoff:00000000-0000-4000-8000-000000000001" strategy="full_thread_summary"');
    expect(handoff.summaryText).toContain("<user>question 1</user>");
    expect(handoff.summaryText).toContain("<assistant>answer 2</assistant>");
    expect(handoff.summaryText).not.toContain("go on");
    expect(handoff.history.map((entry) => entry.text)).toEqual(["question 1", "answer 1", "question 2", "answer 2"]);
    expect(state.runs.get("run:3")).toMatchObject({ providerInstanceId: "plain", status: "starting" });
    expect((state.turnItems.get(A) ?? []).find((item) => item?.type === "handoff")).toMatchObject({ status: "ready" });
  });

  it("gives the handoff back when its run ends without ever starting, so the next run receives it", () => {
    const delivered = given(...switched).when(cmd("message.dispatch", { threadId: A, text: "go on", runId: "run:3", messageId: "message:3" }), ctx).thenHistory();
    const lost = given(...delivered)
      .when(cmd("provider-runtime.run-lost", { threadId: A, runId: "run:3", status: "interrupted", reason: "server_restarted", message: "restarted" }), ctx)
      .thenHistory();
    expect([...fold(...lost).handoffs.values()][0]).toMatchObject({ status: "pending", delivery: null, summaryText: null });
    expect((fold(...lost).turnItems.get(A) ?? []).find((item) => item?.type === "handoff")).toMatchObject({ status: "pending" });
    const state = fold(...given(...lost).when(cmd("message.dispatch", { threadId: A, text: "again", runId: "run:4", messageId: "message:4" }), ctx).thenHistory());
    const handoff = [...state.handoffs.values()][0]!;
    expect(handoff).toMatchObject({ status: "ready", delivery: { runId: "run:4" } });
    // Run 3 never started: it is covered now, as interrupted, with its message.
    expect(handoff.coveredRunOrdinals).toEqual({ from: 1, to: 3 });
    expect(handoff.summaryText).toContain('<run ordinal="3" kind="user_turn" status="interrupted">');
  });

  it("keeps the handoff delivered when its run started before it ended", () => {
    const delivered = given(...switched).when(cmd("message.dispatch", { threadId: A, text: "go on", runId: "run:3", messageId: "message:3" }), ctx).thenHistory();
    const started = given(...delivered).when(cmd("provider-runtime.turn-started", { threadId: A, runId: "run:3" }), ctx).thenHistory();
    const state = fold(...given(...started).when(cmd("provider-runtime.turn-completed", { threadId: A, runId: "run:3", status: "completed", error: null }), ctx).thenHistory());
    expect(state.runs.get("run:3")!.status).toBe("completed");
    expect([...state.handoffs.values()][0]).toMatchObject({ status: "ready", delivery: { runId: "run:3" } });
  });
});

describe("queued runs and the start effect", () => {
  it("a switched thread's queued run starts on the target with the handoff", () => {
    const { events } = history(thread, 1);
    const active = aRun(thread, { id: "run:2", ordinal: 2, messageId: "message:2" });
    const queued = aRun(thread, { id: "run:3", ordinal: 3, status: "queued", queueRank: 0, messageId: "message:3" });
    const ctx = testContext();
    const switched = given(...events, runCreated(active), runCreated(queued)).when(cmd("provider.switch", { threadId: A, providerInstanceId: "plain" }), ctx).thenHistory();
    const decision = given(...switched).when(cmd("provider-runtime.turn-completed", { threadId: A, runId: "run:2", status: "completed", error: null }), ctx).decision;
    expect(decision.kind === "accepted" && decision.effects).toEqual([effects.startTurn(A, "run:3")]);
    const handoffs = decision.kind === "accepted" ? decision.events.filter((e) => e.type === "context-handoff.updated") : [];
    expect(handoffs.map((e) => (e.data).handoff)).toEqual([
      expect.objectContaining({ status: "ready", coveredRunOrdinals: { from: 1, to: 2 }, delivery: { runId: "run:3", deliveredAt: NOW } }),
    ]);
  });
});
