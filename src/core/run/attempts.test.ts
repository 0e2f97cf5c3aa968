import { describe, expect, it } from "vitest";
import type { Run } from "../../contracts/entities/runs.js";
import { providerSessionEvent, providerThreadEvent, providerTurnEvent } from "../../contracts/events.js";
import { derive } from "../ids.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, aSession, after, anAttempt, attemptCreated, attemptUpdated, runCreated, runUpdated, sessionAttached } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given } from "../testing/scenario.js";

/** Run attempts (spec 004 §2): one per hand-over to a provider session, closed with the run, carrying usage. */

const A = "thread:a";
const R0 = "run:0";
const S1 = "provider-session:1";
const S2 = "provider-session:2";
const thread = aProviderThread(A, "steerable");
const session = aSession(A, { id: S1 });
const starting = aRun(thread, { id: R0, status: "starting" });

function history(run: Run = starting) {
  return [existing(thread), runCreated(run), sessionAttached(session)];
}

const attemptStarted = (providerSessionId = S1) => cmd("provider-runtime.attempt-started", { threadId: A, runId: R0, providerSessionId });
const first = anAttempt(starting, 1, S1, NOW);

describe("provider-runtime.attempt-started", () => {
  it("opens attempt 1 of a starting run, bound to the session it was handed to", () => {
    const state = given(...history()).when(attemptStarted()).then([attemptCreated(first)]);
    expect(state.runAttempts.get(R0)).toEqual([first.id]);
    expect(first.id).toBe(derive.runAttemptFromOrdinal({ runId: R0, attemptOrdinal: 1 }));
  });

  it("abandons an open attempt when the run is handed to a session again", () => {
    given(...history(), attemptCreated(first))
      .when(attemptStarted())
      .then([attemptUpdated(after(first, { status: "abandoned", endedAt: NOW })), attemptCreated(anAttempt(starting, 2, S1, NOW))]);
  });

  it("refuses a run that is not starting and a session the thread does not hold", () => {
    given(...history(aRun(thread, { id: R0, status: "running" }))).when(attemptStarted()).thenRejects(RejectionCode.runNotActive);
    given(...history()).when(attemptStarted(S2)).thenRejects(RejectionCode.sessionNotFound);
    const released = providerSessionEvent("provider-session.detached", after(session, { status: "released", releasedAt: NOW, releaseReason: "crashed" }));
    given(...history(), released).when(attemptStarted()).thenRejects(RejectionCode.sessionNotFound);
  });
});

describe("provider-runtime.turn-started with native ids", () => {
  it("runs the attempt and records the provider's thread and turn", () => {
    const providerThreadId = derive.providerThread({ driver: "scripted", providerInstanceId: "steerable", threadId: A, nativeThreadId: "native-thread" });
    const providerTurnId = derive.providerTurn({ providerThreadId, nativeTurnId: "native-turn" });
    const state = given(...history(), attemptCreated(first))
      .when(cmd("provider-runtime.turn-started", { threadId: A, runId: R0, providerSessionId: S1, nativeThreadId: "native-thread", nativeTurnId: "native-turn" }))
      .then([
        providerThreadEvent({ id: providerThreadId, threadId: A, providerSessionId: S1, providerInstanceId: "steerable", driver: "scripted", nativeThreadId: "native-thread", createdAt: NOW, updatedAt: NOW }),
        providerTurnEvent({ id: providerTurnId, providerThreadId, threadId: A, runId: R0, runAttemptId: first.id, nativeTurnId: "native-turn", status: "running", startedAt: NOW, updatedAt: NOW, endedAt: null }),
        attemptUpdated(after(first, { status: "running", providerThreadId, providerTurnId })),
        runUpdated(after(starting, { status: "running", startedAt: NOW })),
      ]);
    expect(state.providerTurns.get(providerTurnId)?.status).toBe("running");
  });
});

describe("usage", () => {
  const running = after(starting, { status: "running", startedAt: NOW });
  const open = after(first, { status: "running" });

  it("records cumulative usage on the open attempt; the same usage again writes nothing", () => {
    const usage = { inputTokens: 1200, outputTokens: 80, cachedInputTokens: 1000, costUsd: 0.01 };
    const recorded = after(open, { usage: { inputTokens: 1200, outputTokens: 80, cachedInputTokens: 1000, reasoningOutputTokens: null, costUsd: 0.01 } });
    given(...history(running), attemptCreated(open))
      .when(cmd("provider-runtime.usage-reported", { threadId: A, runId: R0, usage }))
      .then([attemptUpdated(recorded)]);
    given(...history(running), attemptCreated(recorded)).when(cmd("provider-runtime.usage-reported", { threadId: A, runId: R0, usage })).then([]);
  });

  it("refuses usage for a run with no attempt in progress", () => {
    given(...history(running)).when(cmd("provider-runtime.usage-reported", { threadId: A, runId: R0, usage: { inputTokens: 1, outputTokens: 1 } })).thenRejects(RejectionCode.runNotActive);
  });

  it("closes the attempt with the turn's final usage when the turn completes", () => {
    const withUsage = after(open, { usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: null, reasoningOutputTokens: null, costUsd: null } });
    const state = given(...history(running), attemptCreated(open))
      .when(cmd("provider-runtime.turn-completed", { threadId: A, runId: R0, status: "completed", error: null, usage: { inputTokens: 10, outputTokens: 5 } }))
      .thenIncludes(attemptUpdated(after(withUsage, { status: "completed", endedAt: NOW })));
    expect(state.attempts.get(first.id)?.usage?.inputTokens).toBe(10);
  });
});

describe("runs end with their attempts", () => {
  const running = after(starting, { status: "running", startedAt: NOW });
  const open = after(first, { status: "running" });

  it("a failed turn fails its attempt with the provider's error", () => {
    given(...history(running), attemptCreated(open))
      .when(cmd("provider-runtime.turn-completed", { threadId: A, runId: R0, status: "failed", error: "rate limited" }))
      .thenIncludes(attemptUpdated(after(open, { status: "failed", failure: { code: "provider_error", message: "rate limited" }, endedAt: NOW })));
  });

  it("a run lost with its process abandons its attempt", () => {
    given(...history(running), attemptCreated(open))
      .when(cmd("provider-runtime.run-lost", { threadId: A, runId: R0, status: "interrupted", reason: "server_restarted", message: "Loom restarted" }))
      .thenIncludes(attemptUpdated(after(open, { status: "abandoned", endedAt: NOW })));
  });

  it("a session release interrupts only the run whose open attempt is on that session", () => {
    const otherSession = aSession(A, { id: S2 });
    const onOther = after(first, { status: "running", providerSessionId: S2 });
    // The run's attempt is on S2: releasing S1 (an older session of the thread) leaves it running.
    const state = given(...history(running), sessionAttached(otherSession), attemptCreated(onOther))
      .when(cmd("provider-runtime.session-released", { threadId: A, providerSessionId: S1, reason: "idle_reaped", message: "reaped" }))
      .thenHistory();
    expect(fold(...state).runs.get(R0)?.status).toBe("running");
    // Releasing S2 interrupts it and closes its attempt.
    given(...state)
      .when(cmd("provider-runtime.session-released", { threadId: A, providerSessionId: S2, reason: "crashed", message: "it crashed" }))
      .thenIncludes(attemptUpdated(after(onOther, { status: "interrupted", endedAt: NOW })));
  });
});
