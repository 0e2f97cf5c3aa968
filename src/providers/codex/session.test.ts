import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NormalizedProviderEvent, ProviderSessionRuntime } from "../adapter.js";
import { ProviderError } from "../adapter.js";
import type { RuntimeMode } from "../../contracts/modes.js";
import { createCodexDriver } from "./driver.js";
import { type FakeCodex, type FakeCodexLogEntry, installFakeCodex } from "./testing/fakeAppServer.js";

/**
 * The session lifecycle against a fake `codex app-server` (a small Node
 * script speaking the same JSON-RPC): where the token goes, turns, approvals,
 * steering, interrupting, a crash mid-turn and the resume that follows, stop.
 * The real binary is exercised by codex.e2e.test.ts.
 */

const TOKEN = "tok_session_secret_0123456789abcdef";

let dir: string;
let fake: FakeCodex;
let binary: string;
let logFile: string;
let events: NormalizedProviderEvent[];
let session: ProviderSessionRuntime | null;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-codex-fake-"));
  fake = installFakeCodex(dir);
  binary = fake.binary;
  logFile = fake.logFile;
  events = [];
  session = null;
});

afterEach(async () => {
  await session?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function logEntries(): FakeCodexLogEntry[] {
  return fake.logEntries();
}

async function open(runtimeMode: RuntimeMode = "full-access", options: Record<string, unknown> = {}): Promise<ProviderSessionRuntime> {
  const driver = createCodexDriver({ packageLauncher: () => null, interruptGraceMs: 500 });
  session = await driver.openSession({
    instance: {
      id: "codex",
      driver: "codex",
      enabled: true,
      displayName: null,
      models: null,
      options: { binaryPath: binary, modelProvider: { id: "local", baseUrl: "http://127.0.0.1:1/v1", envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy", FAKE_CODEX_LOG: logFile }, ...options },
    },
    threadId: "thread-1",
    providerSessionId: "session-1",
    cwd: dir,
    runtimeMode,
    interactionMode: "default",
    model: "m1",
    mcp: { url: "http://127.0.0.1:5/mcp", token: TOKEN },
    onEvent: (event) => events.push(event),
  });
  return session;
}

async function until(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; events: ${JSON.stringify(events)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const ended = (runId: string) => () => events.some((event) => event.type === "turn.completed" && event.runId === runId);

function texts(runId: string): string[] {
  return events.flatMap((event) => (event.type === "item.completed" && event.runId === runId && event.item.kind === "assistant_message" ? [event.item.text] : []));
}

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProviderError) return error.code;
    throw error;
  }
  throw new Error("it resolved");
}

describe("codex session (fake app-server)", () => {
  it("starts app-server with provider flags; the token goes only into thread/start over stdin", async () => {
    await open("approval-required");
    const [start, ...messages] = logEntries();
    expect(start?.argv?.slice(0, 3)).toEqual(["app-server", "-c", "check_for_update_on_startup=false"]);
    expect(start?.argv).toContain('model_providers.local.base_url="http://127.0.0.1:1/v1"');
    expect(JSON.stringify(start?.argv)).not.toContain(TOKEN);
    expect(JSON.stringify(start?.env)).not.toContain(TOKEN);
    expect(start?.env?.LOOM_MODEL_KEY).toBe("dummy");
    const codexHome = start?.env?.CODEX_HOME ?? "";
    expect(codexHome).toContain("loom-codex-");
    expect(existsSync(codexHome)).toBe(true);

    expect(messages.map((entry) => entry.message?.method)).toEqual(["initialize", "initialized", "thread/start"]);
    const params = messages[2]?.message?.params;
    expect(params).toMatchObject({ cwd: dir, model: "m1", approvalPolicy: "untrusted", sandbox: "workspace-write" });
    expect(JSON.stringify(params)).toContain(`"Authorization":"Bearer ${TOKEN}"`);

    await session?.stop();
    expect(existsSync(codexHome)).toBe(false);
  });

  it("a turn: turn.started, the assistant message, turn.completed", async () => {
    const runtime = await open();
    await runtime.startTurn({ runId: "run-1", input: "hello" });
    await until(ended("run-1"), "the turn to end");
    expect(events).toEqual([
      { type: "turn.started", runId: "run-1", nativeThreadId: "thr-1", nativeTurnId: "turn-1" },
      { type: "item.completed", runId: "run-1", itemId: "msg-turn-1", item: { kind: "assistant_message", text: "echo: hello" } },
      { type: "turn.completed", runId: "run-1", status: "completed", error: null },
    ]);
    const turnStart = logEntries().find((entry) => entry.message?.method === "turn/start");
    expect(turnStart?.message?.params).toEqual({ threadId: "thr-1", input: [{ type: "text", text: "hello", text_elements: [] }] });
    expect(await rejection(runtime.steerTurn({ runId: "run-1", input: "late" }))).toBe("turn_not_active");
  });

  it("an earlier turn's notification that arrives as a turn begins is dropped, and the turn's own events still come", async () => {
    const runtime = await open();
    await runtime.startTurn({ runId: "run-1", input: "earlier usage first" });
    await until(ended("run-1"), "the turn to end");
    expect(events).toEqual([
      { type: "turn.started", runId: "run-1", nativeThreadId: "thr-1", nativeTurnId: "turn-1" },
      { type: "item.completed", runId: "run-1", itemId: "msg-turn-1", item: { kind: "assistant_message", text: "echo: earlier usage first" } },
      { type: "turn.completed", runId: "run-1", status: "completed", error: null },
    ]);
  });

  it("a turn with a strict output schema carries it on turn/start; a loose one is left to Loom's check", async () => {
    const strict = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"], additionalProperties: false };
    const runtime = await open();
    await runtime.startTurn({ runId: "run-1", input: "hello", outputSchema: strict });
    await until(ended("run-1"), "the first turn to end");
    await runtime.startTurn({ runId: "run-2", input: "again", outputSchema: { type: "object", properties: { ok: { type: "boolean" } } } });
    await until(ended("run-2"), "the second turn to end");
    const starts = logEntries().filter((entry) => entry.message?.method === "turn/start");
    expect(starts.map((entry) => (entry.message?.params as { outputSchema?: unknown }).outputSchema)).toEqual([strict, undefined]);
  });

  it("an approval: the item carries the JSON-RPC id; Loom's decision reaches codex as its result", async () => {
    const runtime = await open("approval-required");
    await runtime.startTurn({ runId: "run-1", input: "approve" });
    await until(() => events.some((event) => event.type === "item.completed" && event.item.kind === "approval_request"), "the approval");
    expect(events[1]).toEqual({
      type: "item.completed",
      runId: "run-1",
      itemId: "request-0",
      item: { kind: "approval_request", requestId: "0", requestKind: "command", title: "Run rm -rf build", detail: "in /w" },
    });
    expect(await rejection(runtime.respondToRequest({ requestId: "0", response: { answers: { q: ["x"] } } }))).toBe("protocol_error");
    expect(await rejection(runtime.respondToRequest({ requestId: "9", response: { decision: "accept" } }))).toBe("request_not_found");
    await runtime.respondToRequest({ requestId: "0", response: { decision: "accept_for_session" } });
    await until(ended("run-1"), "the turn to end");
    expect(texts("run-1")).toEqual(['decision: {"decision":"acceptForSession"}']);
    expect(await rejection(runtime.respondToRequest({ requestId: "0", response: { decision: "accept" } }))).toBe("request_not_found");
  });

  it("steers the running turn with turn/steer and the turn's id", async () => {
    const runtime = await open();
    await runtime.startTurn({ runId: "run-1", input: "hang" });
    expect(await rejection(runtime.startTurn({ runId: "run-2", input: "again" }))).toBe("turn_not_active");
    await runtime.steerTurn({ runId: "run-1", input: "also this" });
    await until(ended("run-1"), "the turn to end");
    expect(texts("run-1")).toEqual(["steered: also this"]);
    const steer = logEntries().find((entry) => entry.message?.method === "turn/steer");
    expect(steer?.message?.params).toEqual({ threadId: "thr-1", expectedTurnId: "turn-1", input: [{ type: "text", text: "also this", text_elements: [] }] });
  });

  it("interrupts with turn/interrupt; the turn ends interrupted", async () => {
    const runtime = await open();
    await runtime.startTurn({ runId: "run-1", input: "hang" });
    await runtime.interruptTurn({ runId: "run-1" });
    await until(ended("run-1"), "the turn to end");
    expect(events.at(-1)).toEqual({ type: "turn.completed", runId: "run-1", status: "interrupted", error: null });
    expect(await rejection(runtime.interruptTurn({ runId: "run-1" }))).toBe("turn_not_active");
  });

  it("a crash mid-turn fails the turn (stderr quoted, token redacted); the next turn resumes the thread in a new process", async () => {
    const runtime = await open();
    await runtime.startTurn({ runId: "run-1", input: "crash" });
    await until(ended("run-1"), "the turn to end");
    const failure = events.at(-1);
    expect(failure).toMatchObject({ type: "turn.completed", runId: "run-1", status: "failed" });
    const error = failure?.type === "turn.completed" ? (failure.error ?? "") : "";
    expect(error).toContain("codex app-server exited during the turn (exit code 3)");
    expect(error).toContain("fatal: lost Bearer [redacted]");
    expect(error).not.toContain(TOKEN);

    await runtime.startTurn({ runId: "run-2", input: "back" });
    await until(ended("run-2"), "the second turn to end");
    expect(texts("run-2")).toEqual(["echo: back"]);
    const log = logEntries();
    expect(log.filter((entry) => entry.kind === "start")).toHaveLength(2);
    const resume = log.find((entry) => entry.message?.method === "thread/resume");
    expect(resume?.message?.params).toMatchObject({ threadId: "thr-1", excludeTurns: true });
    expect(JSON.stringify(resume?.message?.params)).toContain(`Bearer ${TOKEN}`);
  });

  it("stop() ends a running turn as interrupted, then nothing follows; every method rejects session_closed", async () => {
    const runtime = await open();
    await runtime.startTurn({ runId: "run-1", input: "hang" });
    await runtime.stop();
    expect(events.at(-1)).toEqual({ type: "turn.completed", runId: "run-1", status: "interrupted", error: null });
    const count = events.length;
    await runtime.stop();
    expect(await rejection(runtime.startTurn({ runId: "run-2", input: "x" }))).toBe("session_closed");
    expect(await rejection(runtime.respondToRequest({ requestId: "0", response: { decision: "accept" } }))).toBe("session_closed");
    expect(events.length).toBe(count);
  });

  function openWith(binaryPath: string): Promise<ProviderSessionRuntime> {
    return createCodexDriver({ packageLauncher: () => null }).openSession({
      instance: { id: "codex", driver: "codex", enabled: true, displayName: null, models: null, options: { binaryPath } },
      threadId: "thread-1",
      providerSessionId: "session-1",
      cwd: dir,
      runtimeMode: "full-access",
      interactionMode: "default",
      model: null,
      mcp: null,
      onEvent: () => undefined,
    });
  }

  it("a missing executable fails openSession with not_installed, which is not retryable", async () => {
    const error = await openWith(join(dir, "no-such-codex")).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "not_installed", retryable: false });
  });

  it("an executable that cannot run at all (the launcher without its platform binary) is not_installed too", async () => {
    const launcher = join(dir, "codex-launcher");
    writeFileSync(launcher, `#!/bin/sh\necho "Missing optional dependency @openai/codex-linux-x64. Reinstall Codex." >&2\nexit 1\n`);
    chmodSync(launcher, 0o755);
    const error = await openWith(launcher).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "not_installed", retryable: false });
    expect((error as Error).message).toContain(`codex at ${launcher} does not run`);
    expect((error as Error).message).toContain("Missing optional dependency");
  });

  it("a codex that runs but fails to start this once stays start_failed (retryable)", async () => {
    // --version works; app-server exits before answering initialize.
    const flaky = join(dir, "codex-flaky");
    writeFileSync(flaky, `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "codex-cli 0.171.0"; exit 0; fi\necho "could not bind" >&2\nexit 2\n`);
    chmodSync(flaky, 0o755);
    const error = await openWith(flaky).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "start_failed", retryable: true });
  });
});
