import { describe, expect, it } from "vitest";
import type { Command } from "../../contracts/commands.js";
import type { NewOutboxEffect } from "../../contracts/envelopes.js";
import type { DomainEvent } from "../../contracts/events.js";
import type { AppThread, PendingBackgroundTask } from "../../contracts/thread.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, aSession, runCreated, sessionAttached } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given, testContext } from "../testing/scenario.js";
import type { OrchestrationState } from "../state.js";
import { backgroundTaskId } from "./backgroundWork.js";

const A = "thread:a";
const R0 = "run:0";

function setup(provider = "steerable") {
  const thread = aProviderThread(A, provider);
  const run = aRun(thread, { id: R0 });
  return [existing(thread), runCreated(run)];
}

const report = (nativeTaskId: string, status: "started" | "ended", extra: { kind?: PendingBackgroundTask["kind"]; awaited?: boolean } = {}) =>
  cmd("provider-runtime.background-task", {
    threadId: A,
    runId: R0,
    driver: "scripted",
    nativeTaskId,
    kind: extra.kind ?? "background_task",
    awaited: extra.awaited ?? false,
    status,
    title: `sleep for ${nativeTaskId}`,
  });
const turnCompleted = cmd("provider-runtime.turn-completed", { threadId: A, runId: R0, status: "completed", error: null });
const settle = (timedOut: boolean) => cmd("thread.background-work.settle", { threadId: A, runId: R0, timedOut });
const ID = (nativeTaskId: string) => backgroundTaskId("scripted", R0, nativeTaskId);

/** Decide the commands one after another on one context: the history they leave and its state. */
function steps(history: DomainEvent[], ...commands: Command[]): { history: DomainEvent[]; state: OrchestrationState } {
  const ctx = testContext();
  let events = history;
  for (const command of commands) events = given(...events).when(command, ctx).thenHistory();
  return { history: events, state: fold(...events) };
}

const thread = (state: OrchestrationState): AppThread => state.threads.get(A)!;
const effectsOf = (history: DomainEvent[], command: Command): readonly NewOutboxEffect[] => {
  const decision = given(...history).when(command).decision;
  if (decision.kind !== "accepted") throw new Error(`${command.type} was refused`);
  return decision.effects;
};

describe("provider-runtime.background-task", () => {
  it("records started work on the thread once, with its run, kind, native id and title", () => {
    const { history, state } = steps(setup(), report("bg-1", "started", { awaited: true }));
    expect(thread(state).pendingBackgroundTasks).toEqual([{ id: ID("bg-1"), kind: "background_task", awaited: true, runId: R0, nativeTaskId: "bg-1", title: "sleep for bg-1" }]);
    given(...history).when(report("bg-1", "started", { awaited: true })).then([]);
  });

  it("takes an end whenever it comes, an unknown one changing nothing", () => {
    const { history, state } = steps(setup(), report("bg-1", "started"), report("bg-1", "ended"));
    expect(thread(state).pendingBackgroundTasks).toEqual([]);
    given(...history).when(report("bg-2", "ended")).then([]);
  });

  it("refuses work started by a run that is over, or by a run the thread does not have, writing nothing", () => {
    const { history } = steps(setup(), turnCompleted);
    given(...history).when(report("bg-1", "started")).thenRejects(RejectionCode.runNotActive);
    given(...setup()).when({ ...report("bg-1", "started"), data: { ...report("bg-1", "started").data, runId: "run:other" } }).thenRejects(RejectionCode.runNotFound);
  });
});

describe("a turn that completes while awaited work runs", () => {
  it("settles instead of completing, bounded 30 minutes from now; the work's end completes it and its attempt", () => {
    const settling = steps(setup(), report("bg-1", "started"), turnCompleted);
    const run = settling.state.runs.get(R0)!;
    expect(run).toMatchObject({ status: "settling_background_work", endedAt: null, backgroundSettleBy: new Date(Date.parse(NOW) + 30 * 60_000).toISOString() });
    const done = steps(settling.history, report("bg-1", "ended"));
    expect(done.state.runs.get(R0)).toMatchObject({ status: "completed", endReason: "completed", endedAt: NOW });
    expect(thread(done.state).pendingBackgroundTasks).toEqual([]);
  });

  it("completes at once when only a command it does not await runs; the command stays pending and holds nothing", () => {
    const { state } = steps(setup(), report("dev-server", "started", { kind: "command" }), turnCompleted);
    expect(state.runs.get(R0)?.status).toBe("completed");
    expect(thread(state).pendingBackgroundTasks.map((task) => task.id)).toEqual([ID("dev-server")]);
  });

  it("settles on an awaited command and keeps settling until the last awaited task ends", () => {
    const { history } = steps(setup(), report("a", "started", { kind: "command", awaited: true }), report("b", "started", { kind: "subagent" }), turnCompleted, report("a", "ended"));
    const state = steps(history).state;
    expect(state.runs.get(R0)?.status).toBe("settling_background_work");
    expect(steps(history, report("b", "ended")).state.runs.get(R0)?.status).toBe("completed");
  });
});

describe("thread.background-work.settle", () => {
  const settling = () => steps(setup(), report("bg-1", "started"), report("dev", "started", { kind: "command" }), turnCompleted).history;

  it("refuses a run that is not settling, and a settle while awaited work is pending, writing nothing", () => {
    given(...setup()).when(settle(false)).thenRejects(RejectionCode.runNotSettling);
    expect(given(...settling()).when(settle(false)).thenRejects(RejectionCode.backgroundWorkPending).message).toMatch(/sleep for bg-1/);
    given(...setup()).when({ ...settle(true), data: { threadId: A, runId: "run:nope", timedOut: true } }).thenRejects(RejectionCode.runNotFound);
  });

  it("timed out: cancels the awaited work (the driver told), completes the run with a notice, leaves the command it did not await", () => {
    const history = settling();
    expect(effectsOf(history, settle(true))).toEqual([
      { kind: "provider.background-work.cancel", streamId: A, payload: { threadId: A, runId: R0, nativeTaskIds: ["bg-1"] }, replaySafe: true },
    ]);
    const decision = given(...history).when(settle(true)).decision;
    if (decision.kind !== "accepted") throw new Error("refused");
    const cancelled = decision.events.find((event) => event.type === "run.background-work-cancelled");
    expect(cancelled?.data).toMatchObject({ runId: R0, reason: "settle_timed_out", cancelled: [{ id: ID("bg-1") }] });
    const state = steps(history, settle(true)).state;
    expect(state.runs.get(R0)).toMatchObject({ status: "completed", endReason: "background_work_timed_out" });
    expect(thread(state).pendingBackgroundTasks.map((task) => task.id)).toEqual([ID("dev")]);
    const notice = [...(state.turnItems.get(A) ?? [])].find((item) => item?.type === "system_notice");
    expect(notice).toMatchObject({ level: "warning", text: expect.stringContaining("stopped waiting for this run's background work after 30 minutes") });
  });
});

describe("cancelling a settling run", () => {
  const settling = (provider = "steerable") => steps(setup(provider), report("bg-1", "started"), report("bg-2", "started", { kind: "monitor", awaited: true }), turnCompleted).history;

  it.each([
    ["run.interrupt", cmd("run.interrupt", { threadId: A, runId: R0 })],
    ["thread.stop", cmd("thread.stop", { threadId: A })],
  ] as const)("%s cancels every task it started (the driver told) and ends it interrupted, even where the provider cannot interrupt a turn", (_name, command) => {
    for (const provider of ["steerable", "stubborn"]) {
      const history = settling(provider);
      const decision = given(...history).when(command).decision;
      if (decision.kind !== "accepted") throw new Error(`${command.type} was refused on ${provider}`);
      const cancelled = decision.events.find((event) => event.type === "run.background-work-cancelled");
      expect(cancelled?.data).toMatchObject({ runId: R0, reason: "interrupted_by_user", cancelled: [{ id: ID("bg-1") }, { id: ID("bg-2") }] });
      expect(decision.effects).toEqual([
        { kind: "provider.background-work.cancel", streamId: A, payload: { threadId: A, runId: R0, nativeTaskIds: ["bg-1", "bg-2"] }, replaySafe: true },
      ]);
      const state = steps(history, command).state;
      expect(state.runs.get(R0)).toMatchObject({ status: "interrupted", endReason: "interrupted_by_user" });
      expect(thread(state).pendingBackgroundTasks).toEqual([]);
    }
  });

  it("a restart-mode send is refused: the turn is over", () => {
    given(...settling()).when(cmd("message.dispatch", { threadId: A, text: "again", mode: "restart" })).thenRejects(RejectionCode.threadNotSendable);
  });

  it("an interrupt during the turn cancels the work it awaited when the turn ends", () => {
    const { history } = steps(setup(), report("bg-1", "started"), cmd("run.interrupt", { threadId: A, runId: R0 }));
    const state = steps(history, turnCompleted).state;
    expect(state.runs.get(R0)?.status).toBe("completed");
    expect(thread(state).pendingBackgroundTasks).toEqual([]);
  });
});

describe("a settling run whose work is lost", () => {
  const session = aSession(A, { id: "provider-session:a", providerInstanceId: "steerable" });
  const settling = () => steps([...setup(), sessionAttached(session)], report("bg-1", "started"), report("dev", "started", { kind: "command" }), turnCompleted).history;

  it("with its session completes with a notice; every pending task of the thread is recorded cancelled", () => {
    const released = cmd("provider-runtime.session-released", { threadId: A, providerSessionId: session.id, reason: "idle_reaped", message: "reaped" });
    const state = steps(settling(), released).state;
    expect(state.runs.get(R0)).toMatchObject({ status: "completed", endReason: "background_work_lost" });
    expect(thread(state).pendingBackgroundTasks).toEqual([]);
    const decision = given(...settling()).when(released).decision;
    if (decision.kind !== "accepted") throw new Error("refused");
    expect(decision.events.filter((event) => event.type === "run.background-work-cancelled").map((event) => event.data)).toMatchObject([
      { runId: R0, reason: "session_idle_reaped", cancelled: [{ id: ID("bg-1") }, { id: ID("dev") }] },
    ]);
  });

  it("with its server completes instead of starting its turn again", () => {
    const lost = cmd("provider-runtime.run-lost", { threadId: A, runId: R0, status: "interrupted", reason: "server_restarted", message: "Loom restarted" });
    const state = steps(settling(), lost).state;
    expect(state.runs.get(R0)).toMatchObject({ status: "completed", endReason: "background_work_lost" });
    expect(state.runs.get(R0)?.resumes).toBeUndefined();
    expect(thread(state).pendingBackgroundTasks).toEqual([]);
  });
});
