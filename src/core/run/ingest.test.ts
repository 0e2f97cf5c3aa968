import { describe, expect, it } from "vitest";
import type { Run } from "../../contracts/entities/runs.js";
import type { ProviderItem } from "../../contracts/providerEvents.js";
import { providerSessionEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import type { TurnItemBody } from "./changes.js";
import { derive } from "../ids.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import {
  aProviderThread,
  aRequest,
  aRun,
  aSession,
  aUserMessage,
  after,
  anAttempt,
  anItem,
  attemptCreated,
  attemptUpdated,
  effects,
  itemEvent,
  itemEvents,
  requestEvent,
  runCreated,
  runUpdated,
  sessionAttached,
  testId,
} from "../testing/runFixtures.js";
import { TEST_NOW as NOW, given, testContext } from "../testing/scenario.js";

const A = "thread:a";
const B = "thread:b";
const R0 = "run:0";
const EARLIER = "2026-03-01T11:59:00.000Z";
const LATER = "2026-03-01T12:05:00.000Z";
const thread = aProviderThread(A, "steerable");

/** The thread and its runs, each with a message item at the run's index. */
function withRuns(on: AppThread, ...runs: Run[]) {
  return [existing(on), ...runs.flatMap((run, index) => [runCreated(run), itemEvent(aUserMessage(on.id, run.id, index, `turn-item:m${index}`, `message:${index}`, `message ${index}`))])];
}

const itemIdOf = (nativeItemId: string, runId = R0) => derive.turnItemFromProviderItem({ driver: "scripted", providerTurnId: runId, nativeItemId });
const messageIdOf = (nativeItemId: string, runId = R0) => derive.messageFromProviderItem({ driver: "scripted", providerTurnId: runId, nativeItemId });
const completed = (nativeItemId: string, item: ProviderItem, runId = R0, threadId = A) =>
  cmd("provider-runtime.item-completed", { threadId, runId, driver: "scripted", nativeItemId, item });
const turnCompleted = (status: "completed" | "failed" | "interrupted", error: string | null = null, extra: { endReason?: string; runId?: string } = {}) =>
  cmd("provider-runtime.turn-completed", { threadId: A, runId: extra.runId ?? R0, status, error, ...(extra.endReason === undefined ? {} : { endReason: extra.endReason }) });

describe("provider-runtime.session-opened", () => {
  it("attaches a ready session to the thread", () => {
    const state = given(existing(thread))
      .when(cmd("provider-runtime.session-opened", { threadId: A, providerSessionId: "provider-session:1", providerInstanceId: "steerable", driver: "scripted" }))
      .then([sessionAttached(aSession(A, { id: "provider-session:1", startedAt: NOW, updatedAt: NOW }))]);
    expect(state.providerSessions.get("provider-session:1")?.status).toBe("ready");
  });

  it("rejects an unknown thread", () => {
    given()
      .when(cmd("provider-runtime.session-opened", { threadId: A, providerSessionId: "provider-session:1", providerInstanceId: "steerable", driver: "scripted" }))
      .thenRejects(RejectionCode.threadNotFound);
  });
});

describe("provider-runtime.turn-started", () => {
  it("moves a starting run to running and records startedAt", () => {
    const starting = aRun(thread, { id: R0, status: "starting" });
    const state = given(...withRuns(thread, starting))
      .when(cmd("provider-runtime.turn-started", { threadId: A, runId: R0 }))
      .then([attemptCreated(anAttempt(starting, 1, null, NOW, { status: "running" })), runUpdated(after(starting, { status: "running", startedAt: NOW }))]);
    expect(state.runs.get(R0)?.startedAt).toBe(NOW);
  });

  it.each<[string, Partial<Run>, RejectionCode]>([
    ["already running", { status: "running" }, RejectionCode.runNotActive],
    ["queued", { status: "queued", queueRank: 0 }, RejectionCode.runNotActive],
    ["completed", { status: "completed", endReason: "completed", endedAt: EARLIER }, RejectionCode.runNotActive],
  ])("rejects a run that is %s", (_what, fields, code) => {
    given(...withRuns(thread, aRun(thread, { id: R0, ...fields })))
      .when(cmd("provider-runtime.turn-started", { threadId: A, runId: R0 }))
      .thenRejects(code);
  });

  it("rejects an unknown run and another thread's run", () => {
    given(existing(thread)).when(cmd("provider-runtime.turn-started", { threadId: A, runId: R0 })).thenRejects(RejectionCode.runNotFound);
    const other = aProviderThread(B);
    given(existing(thread), ...withRuns(other, aRun(other, { id: R0, status: "starting" })))
      .when(cmd("provider-runtime.turn-started", { threadId: A, runId: R0 }))
      .thenRejects(RejectionCode.runNotFound);
  });
});

describe("provider-runtime.item-completed", () => {
  const running = aRun(thread, { id: R0, messageId: "message:0" });
  const history = withRuns(thread, running);

  it.each<[string, ProviderItem, TurnItemBody]>([
    [
      "assistant_message",
      { kind: "assistant_message", text: "Done." },
      { type: "assistant_message", messageId: messageIdOf("native-1"), text: "Done.", streaming: false, createdBy: "agent", creationSource: "provider" },
    ],
    ["reasoning", { kind: "reasoning", text: "thinking" }, { type: "reasoning", summary: null, text: "thinking", encryptedContentPresent: false }],
    [
      "command_execution that succeeded",
      { kind: "command_execution", command: "npm test", cwd: "/repo", exitCode: 0, outputPreview: "ok", outputTruncated: false, durationMs: 1234.6 },
      { type: "command_execution", command: "npm test", cwd: "/repo", status: "completed", exitCode: 0, durationMs: 1235, outputPreview: "ok", outputTruncated: false, outputStreamId: derive.outputStreamOfItem({ turnItemId: itemIdOf("native-1") }) },
    ],
    [
      "command_execution with a non-zero exit",
      { kind: "command_execution", command: "false", cwd: "/repo", exitCode: 1, outputPreview: "", outputTruncated: true, durationMs: null },
      { type: "command_execution", command: "false", cwd: "/repo", status: "failed", exitCode: 1, durationMs: null, outputPreview: "", outputTruncated: true, outputStreamId: derive.outputStreamOfItem({ turnItemId: itemIdOf("native-1") }) },
    ],
    [
      "command_execution that was killed",
      { kind: "command_execution", command: "sleep 99", cwd: "/repo", exitCode: null, outputPreview: "", outputTruncated: false, durationMs: -3 },
      { type: "command_execution", command: "sleep 99", cwd: "/repo", status: "failed", exitCode: null, durationMs: 0, outputPreview: "", outputTruncated: false, outputStreamId: derive.outputStreamOfItem({ turnItemId: itemIdOf("native-1") }) },
    ],
    [
      "file_change",
      {
        kind: "file_change",
        changes: [
          { path: "a.ts", kind: "add", additions: 3, deletions: 0 },
          { path: "b.ts", kind: "update", additions: 1, deletions: 1 },
          { path: "c.ts", kind: "delete", additions: 0, deletions: 9 },
        ],
      },
      {
        type: "file_change",
        status: "completed",
        changes: [
          { path: "a.ts", kind: "added", diff: null, additions: 3, deletions: 0 },
          { path: "b.ts", kind: "modified", diff: null, additions: 1, deletions: 1 },
          { path: "c.ts", kind: "deleted", diff: null, additions: 0, deletions: 9 },
        ],
      },
    ],
    [
      "todo_list",
      {
        kind: "todo_list",
        items: [
          { text: "read", status: "completed" },
          { text: "write", status: "in_progress" },
        ],
      },
      {
        type: "todo_list",
        items: [
          { id: "todo-1", content: "read", status: "completed" },
          { id: "todo-2", content: "write", status: "in_progress" },
        ],
      },
    ],
    ["error", { kind: "error", message: "rate limited" }, { type: "error", code: null, message: "rate limited", detail: null }],
    [
      "dynamic_tool",
      { kind: "dynamic_tool", toolName: "loom.delegate_task", arguments: { brief: "x" }, result: { taskId: "t" }, status: "failed" },
      { type: "dynamic_tool", toolName: "loom.delegate_task", arguments: { brief: "x" }, result: { taskId: "t" }, status: "failed" },
    ],
  ])("records a %s as its turn item with an id derived from the provider's", (_what, item, body) => {
    const state = given(...history)
      .when(completed("native-1", item))
      .then([...itemEvents(anItem(A, R0, 1, itemIdOf("native-1"), body, { createdAt: NOW }))]);
    expect(state.runs.get(R0)?.status).toBe("running");
  });

  it("updates an item reported again in place: same id, position, createdAt and message id", () => {
    const first = given(...history).when(completed("native-1", { kind: "assistant_message", text: "Hel" })).thenHistory();
    const body = { type: "assistant_message" as const, messageId: messageIdOf("native-1"), text: "Hello", streaming: false, createdBy: "agent" as const, creationSource: "provider" as const };
    const state = given(...first, itemEvent(aUserMessage(A, null, 2, "turn-item:later", "message:later", "later")))
      .when(completed("native-1", { kind: "assistant_message", text: "Hello" }), testContext(LATER))
      .then([...itemEvents(anItem(A, R0, 1, itemIdOf("native-1"), body, { createdAt: NOW, updatedAt: LATER }))]);
    expect(state.turnItems.get(A)?.map((item) => item.id)).toEqual(["turn-item:m0", itemIdOf("native-1"), "turn-item:later"]);
  });

  it("appends items with other native ids, and keeps runs apart", () => {
    const first = given(...history).when(completed("native-1", { kind: "reasoning", text: "a" })).thenHistory();
    given(...first)
      .when(completed("native-2", { kind: "reasoning", text: "b" }))
      .then([...itemEvents(anItem(A, R0, 2, itemIdOf("native-2"), { type: "reasoning", summary: null, text: "b", encryptedContentPresent: false }, { createdAt: NOW }))]);
    expect(itemIdOf("native-1", "run:1")).not.toBe(itemIdOf("native-1"));
  });

  it("moves a starting run to running on its first item", () => {
    const starting = aRun(thread, { id: R0, status: "starting" });
    given(...withRuns(thread, starting))
      .when(completed("native-1", { kind: "reasoning", text: "a" }))
      .then([
        runUpdated(after(starting, { status: "running", startedAt: NOW })),
        ...itemEvents(anItem(A, R0, 1, itemIdOf("native-1"), { type: "reasoning", summary: null, text: "a", encryptedContentPresent: false }, { createdAt: NOW })),
      ]);
  });

  it("keeps a waiting run waiting on other output", () => {
    const waiting = aRun(thread, { id: R0, status: "waiting_on_approval" });
    given(...withRuns(thread, waiting))
      .when(completed("native-1", { kind: "reasoning", text: "a" }))
      .then([...itemEvents(anItem(A, R0, 1, itemIdOf("native-1"), { type: "reasoning", summary: null, text: "a", encryptedContentPresent: false }, { createdAt: NOW }))]);
  });

  it("rejects output for a run that already ended, a queued run, and an unknown run", () => {
    const ended = aRun(thread, { id: R0, status: "interrupted", endReason: "interrupted_by_user", endedAt: EARLIER });
    given(...withRuns(thread, ended)).when(completed("native-1", { kind: "assistant_message", text: "late" })).thenRejects(RejectionCode.runNotActive);
    const queued = aRun(thread, { id: R0, status: "queued", queueRank: 0 });
    given(...withRuns(thread, queued)).when(completed("native-1", { kind: "assistant_message", text: "early" })).thenRejects(RejectionCode.runNotActive);
    given(existing(thread)).when(completed("native-1", { kind: "assistant_message", text: "who" })).thenRejects(RejectionCode.runNotFound);
  });
});

describe("provider-runtime.turn-completed", () => {
  const running = aRun(thread, { id: R0, messageId: "message:0" });

  it("completes the run", () => {
    const state = given(...withRuns(thread, running))
      .when(turnCompleted("completed"))
      .then([runUpdated(after(running, { status: "completed", endReason: "completed", endedAt: NOW }))]);
    expect(state.runs.get(R0)?.status).toBe("completed");
  });

  it("fails the run with an error item and the failure", () => {
    given(...withRuns(thread, running))
      .when(turnCompleted("failed", "model overloaded"))
      .then([
        ...itemEvents(anItem(A, R0, 1, testId("turn-item", 1), { type: "error", code: "provider_error", message: "model overloaded", detail: null }, { createdAt: NOW })),
        runUpdated(after(running, { status: "failed", endReason: "provider_error", failure: { code: "provider_error", message: "model overloaded" }, endedAt: NOW })),
      ]);
  });

  it("fails with a default message when the provider gave none", () => {
    given(...withRuns(thread, running))
      .when(turnCompleted("failed"))
      .then([
        ...itemEvents(anItem(A, R0, 1, testId("turn-item", 1), { type: "error", code: "provider_error", message: "the provider reported a failure", detail: null }, { createdAt: NOW })),
        runUpdated(after(running, { status: "failed", endReason: "provider_error", failure: { code: "provider_error", message: "the provider reported a failure" }, endedAt: NOW })),
      ]);
  });

  it("ends interrupted_by_user when an interrupt was requested, with the request's result, plain interrupted otherwise", () => {
    const stopping = { ...running, interruptRequestedAt: EARLIER };
    given(...withRuns(thread, stopping))
      .when(turnCompleted("interrupted"))
      .then([
        ...itemEvents(anItem(A, R0, 1, testId("turn-item", 1), { type: "run_interrupt_result", outcome: "interrupted", message: null }, { createdAt: NOW })),
        runUpdated(after(stopping, { status: "interrupted", endReason: "interrupted_by_user", endedAt: NOW })),
      ]);
    given(...withRuns(thread, running))
      .when(turnCompleted("interrupted"))
      .then([runUpdated(after(running, { status: "interrupted", endReason: "interrupted", endedAt: NOW }))]);
  });

  it("answers an interrupt request the turn finished before: already_terminal", () => {
    const stopping = { ...running, interruptRequestedAt: EARLIER };
    given(...withRuns(thread, stopping))
      .when(turnCompleted("completed"))
      .then([
        ...itemEvents(
          anItem(A, R0, 1, testId("turn-item", 1), { type: "run_interrupt_result", outcome: "already_terminal", message: "the turn ended completed before the interrupt took effect" }, { createdAt: NOW }),
        ),
        runUpdated(after(stopping, { status: "completed", endReason: "completed", endedAt: NOW })),
      ]);
  });

  describe("tool items still in progress", () => {
    const command = anItem(A, R0, 1, "turn-item:cmd", {
      type: "command_execution",
      command: "npm test",
      cwd: "/work",
      status: "in_progress",
      exitCode: null,
      durationMs: null,
      outputPreview: "",
      outputTruncated: false,
      outputStreamId: "output-stream:cmd",
    });
    const tool = anItem(A, R0, 2, "turn-item:tool", { type: "dynamic_tool", toolName: "lookup", arguments: {}, result: null, status: "in_progress" });
    const finished = anItem(A, R0, 3, "turn-item:done", { ...command, status: "completed", exitCode: 0 });
    const otherRun = anItem(A, "run:other", 4, "turn-item:other", { ...command, runId: "run:other" });
    const history = [...withRuns(thread, running), itemEvent(command), itemEvent(tool), itemEvent(finished), itemEvent(otherRun)];

    it("end failed when the turn is interrupted, with the run; finished items and other runs' stay as they are", () => {
      const state = given(...history)
        .when(turnCompleted("interrupted"))
        .then([
          ...itemEvents({ ...command, status: "failed", updatedAt: NOW }),
          ...itemEvents({ ...tool, status: "failed", updatedAt: NOW }),
          runUpdated(after(running, { status: "interrupted", endReason: "interrupted", endedAt: NOW })),
        ]);
      const items = state.turnItems.get(A) ?? [];
      expect(items.find((item) => item?.id === command.id)).toMatchObject({ type: "command_execution", status: "failed" });
      expect(items.find((item) => item?.id === otherRun.id)).toMatchObject({ status: "in_progress" });
    });

    it("end completed when the turn completes", () => {
      given(...history)
        .when(turnCompleted("completed"))
        .then([
          ...itemEvents({ ...command, status: "completed", updatedAt: NOW }),
          ...itemEvents({ ...tool, status: "completed", updatedAt: NOW }),
          runUpdated(after(running, { status: "completed", endReason: "completed", endedAt: NOW })),
        ]);
    });

    it("end failed when the turn fails", () => {
      given(...history)
        .when(turnCompleted("failed", "boom"))
        .thenIncludes(itemEvent({ ...tool, status: "failed", updatedAt: NOW }));
    });
  });

  it("takes an explicit endReason", () => {
    given(...withRuns(thread, running))
      .when(turnCompleted("interrupted", null, { endReason: "context_exhausted" }))
      .then([runUpdated(after(running, { status: "interrupted", endReason: "context_exhausted", endedAt: NOW }))]);
  });

  it("expires the run's pending requests and their items", () => {
    const waiting: Run = { ...running, status: "waiting_on_approval" };
    const request = aRequest(waiting, { id: "runtime-request:a" });
    const item = anItem(A, R0, 1, "turn-item:a", { type: "approval_request", requestId: "runtime-request:a", requestKind: "command", title: "t", detail: null, status: "pending", decision: null });
    const answered = aRequest(waiting, { id: "runtime-request:old", status: "resolved", resolution: { decision: "accept" }, resolvedAt: EARLIER });
    const state = given(...withRuns(thread, waiting), requestEvent(answered), requestEvent(request), itemEvent(item))
      .when(turnCompleted("interrupted"))
      .then([
        runUpdated(after(waiting, { status: "interrupted", endReason: "interrupted", endedAt: NOW })),
        requestEvent(after(request, { status: "expired", resolvedAt: NOW })),
        ...itemEvents(after(item, { status: "expired" })),
      ]);
    expect(state.runtimeRequests.get("runtime-request:old")?.status).toBe("resolved");
  });

  it("starts the next unheld queued run, skipping held ones", () => {
    const held = aRun(thread, { id: "run:1", ordinal: 2, status: "queued", queueRank: 0, held: true });
    const next = aRun(thread, { id: "run:2", ordinal: 3, status: "queued", queueRank: 1 });
    const state = given(...withRuns(thread, running, held, next))
      .when(turnCompleted("completed"))
      .then(
        [runUpdated(after(running, { status: "completed", endReason: "completed", endedAt: NOW })), runUpdated(after(next, { status: "starting", queueRank: null }))],
        [effects.startTurn(A, "run:2")],
      );
    expect(state.threads.get(A)?.queuedRuns).toEqual([{ runId: "run:1", held: true }]);
  });

  it("starts nothing when every queued run is held", () => {
    const held = aRun(thread, { id: "run:1", ordinal: 2, status: "queued", queueRank: 0, held: true });
    given(...withRuns(thread, running, held))
      .when(turnCompleted("completed"))
      .then([runUpdated(after(running, { status: "completed", endReason: "completed", endedAt: NOW }))]);
  });

  it("rejects a second end", () => {
    const ended = given(...withRuns(thread, running)).when(turnCompleted("completed")).thenHistory();
    given(...ended).when(turnCompleted("failed", "late")).thenRejects(RejectionCode.runNotActive);
  });
});

describe("provider-runtime.session-released", () => {
  const session = aSession(A, { id: "provider-session:1" });
  const released = (reason: "idle_reaped" | "detached" | "crashed" | "server_restarted", message = "the session was reaped after idling") =>
    cmd("provider-runtime.session-released", { threadId: A, providerSessionId: "provider-session:1", reason, message });
  const detached = (reason: string) => providerSessionEvent("provider-session.detached", after(session, { status: "released", releasedAt: NOW, releaseReason: reason }));
  const notice = (runId: string, position: number, text: string) =>
    itemEvent(anItem(A, runId, position, testId("turn-item", 1), { type: "system_notice", level: "warning", text }, { createdAt: NOW }));

  it("fails a command the crashed session never reported finished, with the run it ended", () => {
    const running = aRun(thread, { id: R0 });
    const command = anItem(A, R0, 1, "turn-item:cmd", {
      type: "command_execution",
      command: "sleep 60",
      cwd: null,
      status: "in_progress",
      exitCode: null,
      durationMs: null,
      outputPreview: "",
      outputTruncated: false,
      outputStreamId: null,
    });
    const state = given(...withRuns(thread, running), sessionAttached(session), itemEvent(command))
      .when(released("crashed", "the agent process exited"))
      .thenIncludes(itemEvent({ ...command, status: "failed", updatedAt: NOW }));
    expect(state.runs.get(R0)?.status).toBe("interrupted");
  });

  it("interrupts a run still on a reaped session with session_reaped and a notice, never as completed", () => {
    const running = aRun(thread, { id: R0 });
    const state = given(...withRuns(thread, running), sessionAttached(session))
      .when(released("idle_reaped"))
      .then([
        detached("idle_reaped"),
        notice(R0, 1, "the session was reaped after idling"),
        runUpdated(after(running, { status: "interrupted", endReason: "session_reaped", endedAt: NOW })),
      ]);
    expect(state.runs.get(R0)).toMatchObject({ status: "interrupted", endReason: "session_reaped" });
    expect(state.providerSessions.get("provider-session:1")?.releasedAt).toBe(NOW);
  });

  it("names other reasons session_<reason> and starts the next queued run", () => {
    const waiting = aRun(thread, { id: R0, status: "waiting_on_user_input" });
    const next = aRun(thread, { id: "run:1", ordinal: 2, status: "queued", queueRank: 0 });
    given(...withRuns(thread, waiting, next), sessionAttached(session))
      .when(released("crashed", "the agent process exited"))
      .then(
        [
          detached("crashed"),
          notice(R0, 2, "the agent process exited"),
          runUpdated(after(waiting, { status: "interrupted", endReason: "session_crashed", endedAt: NOW })),
          runUpdated(after(next, { status: "starting", queueRank: null })),
        ],
        [effects.startTurn(A, "run:1")],
      );
  });

  it("interrupts a run still starting on the session's provider instance", () => {
    const starting = aRun(thread, { id: R0, status: "starting" });
    given(...withRuns(thread, starting), sessionAttached(session))
      .when(released("detached", "detached by request"))
      .then([
        detached("detached"),
        notice(R0, 1, "detached by request"),
        runUpdated(after(starting, { status: "interrupted", endReason: "session_detached", endedAt: NOW })),
      ]);
  });

  it("only records the release when no run is active", () => {
    given(existing(thread), sessionAttached(session)).when(released("detached")).then([detached("detached")]);
  });

  it("leaves a run on another provider instance alone", () => {
    const elsewhere = aProviderThread(A, "plain");
    given(...withRuns(elsewhere, aRun(elsewhere, { id: R0 })), sessionAttached(session)).when(released("idle_reaped")).then([detached("idle_reaped")]);
  });

  it("leaves a run starting after a restart alone: the released session belonged to the previous process", () => {
    const starting = aRun(thread, { id: R0, status: "starting" });
    given(...withRuns(thread, starting), sessionAttached(session)).when(released("server_restarted", "Loom restarted")).then([detached("server_restarted")]);
  });

  it("rejects an unknown session, another thread's session and a released one", () => {
    given(existing(thread)).when(released("idle_reaped")).thenRejects(RejectionCode.sessionNotFound);
    given(existing(thread), existing(aProviderThread(B)), sessionAttached(aSession(B, { id: "provider-session:1" })))
      .when(released("idle_reaped"))
      .thenRejects(RejectionCode.sessionNotFound);
    const twice = given(existing(thread), sessionAttached(session)).when(released("idle_reaped")).thenHistory();
    given(...twice).when(released("idle_reaped")).thenRejects(RejectionCode.sessionNotFound);
  });
});

describe("provider-runtime.run-lost", () => {
  const lost = (status: "interrupted" | "failed", reason: string, message: string, runId = R0) =>
    cmd("provider-runtime.run-lost", { threadId: A, runId, status, reason, message });

  it("interrupts the run with the given reason and a system notice, then starts the next queued run", () => {
    const running = aRun(thread, { id: R0 });
    const next = aRun(thread, { id: "run:1", ordinal: 2, status: "queued", queueRank: 0 });
    given(...withRuns(thread, running, next))
      .when(lost("interrupted", "server_restarted", "Loom restarted"))
      .then(
        [
          ...itemEvents(anItem(A, R0, 2, testId("turn-item", 1), { type: "system_notice", level: "warning", text: "Loom restarted" }, { createdAt: NOW })),
          runUpdated(after(running, { status: "interrupted", endReason: "server_restarted", endedAt: NOW })),
          runUpdated(after(next, { status: "starting", queueRank: null })),
        ],
        [effects.startTurn(A, "run:1")],
      );
  });

  it("fails the run with the reason as the failure code", () => {
    const starting = aRun(thread, { id: R0, status: "starting" });
    given(...withRuns(thread, starting))
      .when(lost("failed", "session_start_failed", "the agent CLI is not installed"))
      .then([
        ...itemEvents(anItem(A, R0, 1, testId("turn-item", 1), { type: "system_notice", level: "warning", text: "the agent CLI is not installed" }, { createdAt: NOW })),
        runUpdated(
          after(starting, { status: "failed", endReason: "session_start_failed", failure: { code: "session_start_failed", message: "the agent CLI is not installed" }, endedAt: NOW }),
        ),
      ]);
  });

  it("rejects a run that is not active", () => {
    given(...withRuns(thread, aRun(thread, { id: R0, status: "queued", queueRank: 0 })))
      .when(lost("interrupted", "server_restarted", "x"))
      .thenRejects(RejectionCode.runNotActive);
  });
});

describe("restart and a whole turn, step by step", () => {
  it("on boot: the active run is lost, the queued one starts, and the session release leaves the new run alone", () => {
    const ctx = testContext();
    const running = aRun(thread, { id: R0 });
    const next = aRun(thread, { id: "run:1", ordinal: 2, status: "queued", queueRank: 0 });
    const lost = given(...withRuns(thread, running, next), sessionAttached(aSession(A, { id: "provider-session:1" })))
      .when(cmd("provider-runtime.run-lost", { threadId: A, runId: R0, status: "interrupted", reason: "server_restarted", message: "Loom restarted" }), ctx)
      .thenHistory();
    const state = given(...lost)
      .when(cmd("provider-runtime.session-released", { threadId: A, providerSessionId: "provider-session:1", reason: "server_restarted", message: "Loom restarted" }), ctx)
      .then([providerSessionEvent("provider-session.detached", after(aSession(A, { id: "provider-session:1" }), { status: "released", releasedAt: NOW, releaseReason: "server_restarted" }))]);
    expect(state.runs.get(R0)).toMatchObject({ status: "interrupted", endReason: "server_restarted" });
    expect(state.runs.get("run:1")?.status).toBe("starting");
    expect(state.turnItems.get(A)?.[2]).toMatchObject({ type: "system_notice", runId: R0, text: "Loom restarted" });
  });

  it("send, start, ask, answer, reply, complete", () => {
    const ctx = testContext();
    const run = testId("run", 1);
    let history = given(existing(thread)).when(cmd("message.dispatch", { threadId: A, text: "fix the bug" }), ctx).thenHistory();
    history = given(...history).when(cmd("provider-runtime.turn-started", { threadId: A, runId: run }), ctx).thenHistory();
    history = given(...history)
      .when(completed("ask", { kind: "approval_request", requestId: "native-1", requestKind: "command", title: "Run tests", detail: "npm test" }, run), ctx)
      .thenHistory();
    const request = testId("runtime-request", 4);
    history = given(...history).when(cmd("runtime-request.respond", { threadId: A, requestId: request, response: { decision: "accept" } }), ctx).thenHistory();
    history = given(...history).when(completed("reply", { kind: "assistant_message", text: "Fixed." }, run), ctx).thenHistory();
    const ended = { ...aRun(thread, { id: run, status: "completed", messageId: testId("message", 2), createdAt: NOW, updatedAt: NOW, startedAt: NOW }), endReason: "completed", endedAt: NOW };
    const state = given(...history)
      .when(cmd("provider-runtime.turn-completed", { threadId: A, runId: run, status: "completed", error: null }), ctx)
      .then([attemptUpdated(anAttempt(ended, 1, null, NOW, { status: "completed", endedAt: NOW })), runUpdated(ended)]);
    expect(state.turnItems.get(A)?.map((item) => [item.type, item.position, item.runId])).toEqual([
      ["user_message", 0, run],
      ["approval_request", 1, run],
      ["assistant_message", 2, run],
    ]);
    expect(state.turnItems.get(A)?.[1]).toMatchObject({ requestId: request, status: "resolved", decision: "accept" });
    expect(state.runtimeRequests.get(request)).toMatchObject({ status: "resolved", nativeRequestId: "native-1" });
  });
});
