import type { CanUseTool, PermissionResult, SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NormalizedProviderEvent, TurnCompletedEvent } from "../events.js";
import { parseClaudeOptions } from "./options.js";
import { buildQueryOptions } from "./queryOptions.js";
import { ClaudeSession } from "./session.js";
import { FakeClaude, withUuids } from "./testing/fakeQuery.js";
import { FIXTURE_TURN_UUID, fixtureSessionId, loadFixture, replayFixture } from "./testing/fixtures.js";

const TOKEN = "tok_3b1f9a7c5e2d4f6a8b0c1d2e3f4a5b6c";

let fake: FakeClaude;
let events: NormalizedProviderEvent[];
let logs: string[];
let cleaned: number;
let session: ClaudeSession;
let listeners: (() => void)[];

function newSession(graceMs = 15_000): ClaudeSession {
  return new ClaudeSession({
    providerSessionId: "provider-session:test",
    cwd: "/work",
    query: fake.query,
    buildOptions: (hooks) =>
      buildQueryOptions(
        {
          cwd: "/work",
          model: "claude-sonnet-4-5",
          runtimeMode: "approval-required",
          interactionMode: "default",
          mcp: { url: "http://127.0.0.1:1/mcp", token: TOKEN },
          configDir: "/tmp/cfg",
          persist: false,
          options: parseClaudeOptions({ id: "claude", driver: "claude", enabled: true, displayName: null, models: null, options: {} }),
          baseEnv: {},
          isRoot: false,
        },
        hooks,
      ),
    secret: TOKEN,
    startupTimeoutMs: 1_000,
    interruptGraceMs: graceMs,
    onEvent: (event) => {
      events.push(event);
      for (const listener of listeners.splice(0)) listener();
    },
    log: (line) => logs.push(line),
    cleanup: () => {
      cleaned += 1;
      return Promise.resolve();
    },
  });
}

beforeEach(async () => {
  fake = new FakeClaude();
  events = [];
  logs = [];
  cleaned = 0;
  listeners = [];
  session = newSession();
  await session.open();
});

afterEach(async () => {
  await session.stop();
  // The token goes to the SDK in the MCP headers and nowhere else.
  expect(logs.join("\n")).not.toContain(TOKEN);
  expect(JSON.stringify(events)).not.toContain(TOKEN);
});

async function until<T>(find: () => T | undefined): Promise<T> {
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    await new Promise<void>((resolve) => listeners.push(resolve));
  }
}

function turnEnd(runId: string): Promise<TurnCompletedEvent> {
  return until(() => events.find((event): event is TurnCompletedEvent => event.type === "turn.completed" && event.runId === runId));
}

/**
 * A recorded transcript as this session's Claude Code would write it: the
 * turn's (and steer's) uuids are the ones the session sent, and the session
 * id is the one it asked for (Claude Code runs under --session-id).
 */
function replayed(fixture: string, uuids: { readonly turn: string; readonly steer?: string }): SDKMessage[] {
  return replayFixture(fixture, { turnUuid: uuids.turn, steerUuid: uuids.steer, sessionId: fake.last.options.sessionId! });
}

/** Starts a turn and answers it with a recorded transcript. */
async function playTurn(runId: string, fixture: string, nth = 1): Promise<TurnCompletedEvent> {
  await session.startTurn({ runId, input: `input of ${runId}` });
  const sent = await fake.last.waitForReceived(nth);
  fake.last.send(...replayed(fixture, { turn: sent.uuid! }));
  return turnEnd(runId);
}

describe("claude session: turns", () => {
  it("opens one query with the Loom MCP server and logs only that it is configured", () => {
    expect(fake.queries).toHaveLength(1);
    expect(fake.last.options.mcpServers?.["t3-code"]).toMatchObject({ type: "http", headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(logs).toEqual([expect.stringContaining("Loom MCP server configured")]);
  });

  it("a turn: turn.started, the items, usage, turn.completed; the message streamed as a user message", async () => {
    const end = await playTurn("run-1", "bash-approved");
    expect(end).toEqual({ type: "turn.completed", runId: "run-1", status: "completed", error: null });
    expect(events.map((event) => (event.type === "item.completed" ? event.item.kind : event.type))).toEqual([
      "turn.started",
      "command_execution",
      "assistant_message",
      "usage",
      "turn.completed",
    ]);
    expect(fake.last.received[0]).toMatchObject({ type: "user", message: { role: "user", content: "input of run-1" }, parent_tool_use_id: null });
    expect(logs.at(-1)).toContain("Loom MCP server connected");
  });

  it("runs turns one after another on the same query", async () => {
    await playTurn("run-1", "bash-approved");
    await expect(session.startTurn({ runId: "run-x", input: "x" })).resolves.toBeUndefined();
    await expect(session.startTurn({ runId: "run-y", input: "y" })).rejects.toMatchObject({ code: "turn_not_active" });
    const sent = await fake.last.waitForReceived(2);
    fake.last.send(...replayed("thinking", { turn: sent.uuid! }));
    await expect(turnEnd("run-x")).resolves.toMatchObject({ status: "completed" });
    expect(fake.queries).toHaveLength(1);
  });

  it("a steer is streamed into the running turn, and the result that consumed both ends it once", async () => {
    await session.startTurn({ runId: "run-1", input: "nap" });
    const first = await fake.last.waitForReceived(1);
    await session.steerTurn({ runId: "run-1", input: "also say bye" });
    const steer = await fake.last.waitForReceived(2);
    expect(steer.message.content).toBe("also say bye");
    fake.last.send(...replayed("steered", { turn: first.uuid!, steer: steer.uuid! }));
    await expect(turnEnd("run-1")).resolves.toMatchObject({ status: "completed" });
    expect(events.filter((event) => event.type === "turn.completed")).toHaveLength(1);
    await expect(session.steerTurn({ runId: "run-1", input: "late" })).rejects.toMatchObject({ code: "turn_not_active" });
  });

  it("a result for another turn's messages does not end the running turn", async () => {
    await session.startTurn({ runId: "run-1", input: "a" });
    const sent = await fake.last.waitForReceived(1);
    const stale = replayed("bash-approved", { turn: "11111111-1111-4111-8111-111111111111" });
    fake.last.send(...stale.filter((message) => message.type === "result"));
    fake.last.send(...replayed("thinking", { turn: sent.uuid! }));
    await turnEnd("run-1");
    expect(events.filter((event) => event.type === "item.completed").map((event) => event.type === "item.completed" && event.item.kind)).toEqual(["reasoning", "assistant_message"]);
  });
});

describe("claude session: native ids and usage", () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it("Claude Code runs under a session id the session chose; turn.started carries it (no turn id: Claude has none)", async () => {
    const sessionId = fake.last.options.sessionId;
    expect(sessionId).toMatch(UUID);
    await playTurn("run-1", "bash-approved");
    await playTurn("run-2", "thinking", 2);
    const started = events.filter((event) => event.type === "turn.started");
    expect(started).toEqual([
      { type: "turn.started", runId: "run-1", nativeThreadId: sessionId },
      { type: "turn.started", runId: "run-2", nativeThreadId: sessionId },
    ]);
    expect(logs.join("\n")).not.toContain("Claude Code runs session");
  });

  it("when Claude Code reports another session id (the recording's own), later turns carry that one", async () => {
    const recorded = loadFixture("bash-approved");
    await session.startTurn({ runId: "run-1", input: "a" });
    const sent = await fake.last.waitForReceived(1);
    fake.last.send(...withUuids(recorded.messages, { [FIXTURE_TURN_UUID]: sent.uuid! }));
    await turnEnd("run-1");
    expect(events[0]).toEqual({ type: "turn.started", runId: "run-1", nativeThreadId: fake.last.options.sessionId });
    await session.startTurn({ runId: "run-2", input: "b" });
    expect(events.at(-1)).toEqual({ type: "turn.started", runId: "run-2", nativeThreadId: fixtureSessionId(recorded) });
    expect(logs).toContainEqual(expect.stringContaining(`Claude Code runs session ${fixtureSessionId(recorded)}, not ${fake.last.options.sessionId}`));
  });

  it("a relaunch after a crash runs under a new session id", async () => {
    await session.startTurn({ runId: "run-1", input: "a" });
    await fake.last.waitForReceived(1);
    const first = fake.last.options.sessionId;
    fake.last.end(new Error("Claude Code process exited with code 1"));
    await turnEnd("run-1");
    await session.startTurn({ runId: "run-2", input: "b" });
    const second = fake.last.options.sessionId;
    expect(second).toMatch(UUID);
    expect(second).not.toBe(first);
    expect(events.find((event) => event.type === "turn.started" && event.runId === "run-2")).toMatchObject({ nativeThreadId: second });
  });

  it("usage: the turn's tokens, cache reads and its share of the query's running cost", async () => {
    const recordedCost = loadFixture("bash-approved").messages.find((message) => message.type === "result")!.total_cost_usd;
    await playTurn("run-1", "bash-approved");
    expect(events.find((event) => event.type === "usage")).toEqual({ type: "usage", runId: "run-1", inputTokens: 64654, outputTokens: 13, cachedInputTokens: 0, costUsd: recordedCost });

    // The second result carries the running total (first turn + this one), as Claude Code reports it.
    await session.startTurn({ runId: "run-2", input: "b" });
    const sent = await fake.last.waitForReceived(2);
    const messages = replayed("thinking", { turn: sent.uuid! }).map((message) =>
      message.type === "result" ? { ...message, total_cost_usd: recordedCost + 0.000141 } : message,
    );
    fake.last.send(...messages);
    await turnEnd("run-2");
    const second = events.find((event) => event.type === "usage" && event.runId === "run-2");
    expect(second).toMatchObject({ inputTokens: 12, outputTokens: 7, cachedInputTokens: 0 });
    expect(second?.type === "usage" ? second.costUsd : null).toBeCloseTo(0.000141, 9);
  });
});

describe("claude session: interrupts, crashes, stop", () => {
  it("interrupt asks Claude Code to stop; its result ends the turn interrupted", async () => {
    await session.startTurn({ runId: "run-1", input: "sleep" });
    const sent = await fake.last.waitForReceived(1);
    await session.interruptTurn({ runId: "run-1" });
    expect(fake.last.interrupts).toHaveLength(1);
    fake.last.send(...replayed("interrupted", { turn: sent.uuid! }));
    await expect(turnEnd("run-1")).resolves.toEqual({ type: "turn.completed", runId: "run-1", status: "interrupted", error: null });
  });

  it("an interrupt that never gets its result ends the turn after the grace period", async () => {
    await session.stop();
    session = newSession(20);
    await session.open();
    await session.startTurn({ runId: "run-1", input: "hang" });
    await session.interruptTurn({ runId: "run-1" });
    await expect(turnEnd("run-1")).resolves.toMatchObject({ status: "interrupted" });
  });

  it("Claude Code dying mid-turn fails the turn (token scrubbed); the next turn starts a new query and says so", async () => {
    await session.startTurn({ runId: "run-1", input: "a" });
    await fake.last.waitForReceived(1);
    fake.last.end(new Error(`Claude Code process exited with code 1 (header Bearer ${TOKEN})`));
    const end = await turnEnd("run-1");
    expect(end.status).toBe("failed");
    expect(end.error).toContain("Claude Code failed: Claude Code process exited with code 1");
    expect(end.error).toContain("[redacted]");

    await session.startTurn({ runId: "run-2", input: "b" });
    expect(fake.queries).toHaveLength(2);
    const notice = events.find((event) => event.type === "item.completed" && event.runId === "run-2");
    expect(notice).toMatchObject({ item: { kind: "error", message: expect.stringContaining("new Claude session without the earlier conversation") } });
    const sent = await fake.last.waitForReceived(1);
    fake.last.send(...replayed("thinking", { turn: sent.uuid! }));
    await expect(turnEnd("run-2")).resolves.toMatchObject({ status: "completed" });
  });

  it("stop ends a running turn interrupted, closes the query, cleans up; every method then rejects", async () => {
    await session.startTurn({ runId: "run-1", input: "a" });
    await session.stop();
    expect(events.at(-1)).toEqual({ type: "turn.completed", runId: "run-1", status: "interrupted", error: null });
    expect(fake.last.closed).toBe(true);
    expect(cleaned).toBe(1);
    await session.stop();
    expect(cleaned).toBe(1);
    await expect(session.startTurn({ runId: "run-2", input: "b" })).rejects.toMatchObject({ code: "session_closed" });
    await expect(session.respondToRequest({ requestId: "r", response: {} })).rejects.toMatchObject({ code: "session_closed" });
  });

  it("a failed start is start_failed, scrubbed, and cleans up", async () => {
    fake.initFailure = new Error(`bad header Bearer ${TOKEN}`);
    const doomed = newSession();
    const failure = await doomed.open().then(
      () => null,
      (error: unknown) => error as Error & { code: string },
    );
    expect(failure).toMatchObject({ name: "ProviderError", code: "start_failed" });
    expect(failure?.message).not.toContain(TOKEN);
    expect(cleaned).toBe(1);
  });

  it("an aborted open is aborted and starts nothing", async () => {
    const started = fake.queries.length;
    await expect(newSession().open(AbortSignal.abort())).rejects.toMatchObject({ name: "ProviderError", code: "aborted" });
    expect(fake.queries).toHaveLength(started);
  });
});

describe("claude session: approvals", () => {
  function canUseTool(): CanUseTool {
    const hook = fake.last.options.canUseTool;
    if (hook === undefined) throw new Error("no canUseTool");
    return hook;
  }

  it("a permission request becomes an approval item of the running turn; the answer goes back to Claude", async () => {
    await session.startTurn({ runId: "run-1", input: "a" });
    const asked = canUseTool()("Bash", { command: "echo hi", description: "say hi" }, { signal: new AbortController().signal, toolUseID: "call_2", requestId: "r-1", description: "say hi" });
    const item = events.find((event) => event.type === "item.completed");
    expect(item).toEqual({
      type: "item.completed",
      runId: "run-1",
      itemId: "claude-request:call_2:request",
      item: { kind: "approval_request", requestId: "claude-request:call_2", requestKind: "command", title: "Run command: echo hi", detail: "$ echo hi\nsay hi" },
    });
    await session.respondToRequest({ requestId: "claude-request:call_2", response: { decision: "accept" } });
    await expect(asked).resolves.toEqual({ behavior: "allow", updatedInput: { command: "echo hi", description: "say hi" } });
  });

  it("a request with no running turn is denied; the end of a turn denies what still waits", async () => {
    const idle = (await canUseTool()("Bash", { command: "ls" }, { signal: new AbortController().signal, toolUseID: "c0", requestId: "r0" })) as PermissionResult;
    expect(idle.behavior).toBe("deny");
    await session.startTurn({ runId: "run-1", input: "a" });
    const sent = await fake.last.waitForReceived(1);
    const waiting = canUseTool()("Bash", { command: "ls" }, { signal: new AbortController().signal, toolUseID: "c1", requestId: "r1" });
    fake.last.send(...replayed("thinking", { turn: sent.uuid! }));
    await turnEnd("run-1");
    await expect(waiting).resolves.toMatchObject({ behavior: "deny" });
    await expect(session.respondToRequest({ requestId: "claude-request:c1", response: { decision: "accept" } })).rejects.toMatchObject({ code: "request_not_found" });
  });
});

describe("claude session: background work", () => {
  const system = { type: "system" as const, uuid: "00000000-0000-4000-8000-0000000000b1" as const, session_id: "s-1" };

  it("reports a background Bash command of a turn, its end after the turn, and stops one Loom cancels with stopTask", async () => {
    await session.startTurn({ runId: "run-1", input: "start the server and the tests" });
    const sent = await fake.last.waitForReceived(1);
    fake.last.send(
      { ...system, subtype: "task_started", task_id: "bash_1", task_type: "local_bash", is_backgrounded: true, description: "npm run dev" } as unknown as SDKMessage,
      { ...system, subtype: "task_started", task_id: "bash_2", task_type: "local_bash", is_backgrounded: true, description: "npm test" } as unknown as SDKMessage,
      ...replayed("bash-approved", { turn: sent.uuid! }),
    );
    await turnEnd("run-1");
    expect(events.filter((event) => event.type === "background_task")).toEqual([
      { type: "background_task", runId: "run-1", taskId: "bash_1", kind: "command", awaited: false, status: "started", title: "npm run dev" },
      { type: "background_task", runId: "run-1", taskId: "bash_2", kind: "command", awaited: false, status: "started", title: "npm test" },
    ]);
    fake.last.send({ ...system, subtype: "task_notification", task_id: "bash_2", status: "completed", output_file: "/tmp/o", summary: "passed" } as unknown as SDKMessage);
    await until(() => events.find((event) => event.type === "background_task" && event.status === "ended"));
    expect(events.filter((event) => event.type === "background_task").at(-1)).toMatchObject({ runId: "run-1", taskId: "bash_2", status: "ended" });
    await session.cancelBackgroundTasks({ runId: "run-1", taskIds: ["bash_1", "bash_2", "bash_9"] });
    // Only the task still running is stopped; Claude Code then settles it with a task_notification "stopped".
    expect(fake.last.stoppedTasks).toEqual(["bash_1"]);
  });
});
