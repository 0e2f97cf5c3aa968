import { describe, expect, it } from "vitest";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { ProviderEventRecorder } from "../kit/testSuiteHarness.js";
import { createCursorDriver } from "./driver.js";
import { probeCursor } from "./probe.js";
import { cursorOptions } from "./options.js";
import { type FakeCursor, fakeCursorSdk } from "./testing/fakeCursorSdk.js";

/**
 * The cursor driver against a fake of @cursor/sdk's public interface (built
 * from its published types): Cursor's agent needs Cursor's backend, so it
 * cannot run offline here.
 */

const TOKEN = "tok_cursor_test_0123456789";
const KEY = "key_cursor_test_0123456789";
const instance = (options: Record<string, unknown> = {}): ProviderInstanceConfig => ({ id: "cursor", driver: "cursor", enabled: true, displayName: null, models: ["gpt-x"], options });

async function open(fake: FakeCursor, runtimeMode: "full-access" | "approval-required" = "full-access", lines: string[] = [], resume: string | null = null) {
  const recorder = new ProviderEventRecorder();
  const driver = createCursorDriver({ loadSdk: () => Promise.resolve(fake.sdk), processEnv: { CURSOR_API_KEY: KEY }, log: (line) => lines.push(line) });
  const session = await driver.openSession({
    instance: instance(),
    threadId: "thread:c",
    providerSessionId: "ps:c",
    cwd: "/work",
    runtimeMode,
    interactionMode: "plan",
    model: null,
    mcp: { url: "http://127.0.0.1:7/mcp", token: TOKEN },
    onEvent: recorder.onEvent,
    resume: resume === null ? null : { nativeThreadId: resume },
  });
  return { session, recorder };
}

describe("cursor session (fake SDK boundary)", () => {
  it("passes Loom's MCP server with the bearer header on create and every send, and logs only redacted option metadata", async () => {
    const fake = fakeCursorSdk();
    const lines: string[] = [];
    const { session, recorder } = await open(fake, "full-access", lines);
    const mcp = { "t3-code": { type: "http", url: "http://127.0.0.1:7/mcp", headers: { Authorization: `Bearer ${TOKEN}` } } };
    expect(fake.created[0]).toMatchObject({ apiKey: KEY, model: { id: "gpt-x" }, mode: "plan", mcpServers: mcp, local: { cwd: "/work", settingSources: [] } });
    expect(Object.keys(fake.created[0]?.local?.customTools ?? {})).toEqual(["loom_ask_user"]);
    expect(fake.created[0]?.disallowedTools).toBeUndefined();
    await session.startTurn({ runId: "r1", input: "hi" });
    await recorder.turnEnd("r1");
    expect(fake.sends[0]).toEqual({ text: "hi", options: { mode: "plan", mcpServers: mcp } });
    expect(lines.join("\n")).not.toContain(TOKEN);
    expect(lines.join("\n")).not.toContain(KEY);
    expect(lines[0]).toContain('"mcpServers":{"t3-code":{"type":"http","url":"http://127.0.0.1:7/mcp","headers":["Authorization"]}}');
    expect(recorder.ofRun("r1")[0]).toEqual({ type: "turn.started", runId: "r1", nativeThreadId: "agent-1", nativeTurnId: "run-1" });
    expect(recorder.ofRun("r1").find((e) => e.type === "usage")).toEqual({ type: "usage", runId: "r1", inputTokens: 14, outputTokens: 2, cachedInputTokens: 4 });
    await session.stop();
  });

  it("a later session resumes the thread's agent with Loom's MCP server on Agent.resume; an agent that is gone gets a new one", async () => {
    const fake = fakeCursorSdk();
    const first = await open(fake);
    await first.session.startTurn({ runId: "r1", input: "remember PLUM-42" });
    await first.recorder.turnEnd("r1");
    const agentId = first.recorder.ofRun("r1").find((e) => e.type === "turn.started");
    expect(agentId).toMatchObject({ nativeThreadId: "agent-1" });
    await first.session.stop();

    const lines: string[] = [];
    const second = await open(fake, "full-access", lines, "agent-1");
    expect(second.session.resumed).toBe(true);
    const mcp = { "t3-code": { type: "http", url: "http://127.0.0.1:7/mcp", headers: { Authorization: `Bearer ${TOKEN}` } } };
    expect(fake.resumed).toEqual([{ agentId: "agent-1", options: expect.objectContaining({ apiKey: KEY, mcpServers: mcp, local: expect.objectContaining({ cwd: "/work" }) }) }]);
    expect(Object.keys(fake.resumed[0]?.options?.local?.customTools ?? {})).toEqual(["loom_ask_user"]);
    expect(fake.created).toHaveLength(1);
    expect(lines[0]).toMatch(/^cursor: Agent\.resume agent-1 /);
    expect(lines.join("\n")).not.toContain(TOKEN);
    expect(lines.join("\n")).not.toContain(KEY);
    await second.session.startTurn({ runId: "r2", input: "recall" });
    await second.recorder.turnEnd("r2");
    expect(second.recorder.ofRun("r2")).toContainEqual(expect.objectContaining({ item: { kind: "assistant_message", text: "recall: remember PLUM-42" } }));
    expect(fake.sends.at(-1)).toEqual({ text: "recall", options: { mode: "plan", mcpServers: mcp } });
    await second.session.stop();

    const gone = await open(fake, "full-access", lines, "agent-9");
    expect(gone.session.resumed).toBe(false);
    expect(fake.created).toHaveLength(2);
    expect(lines.join("\n")).toContain("cursor: agent agent-9 could not be resumed (Agent agent-9 not found); a new agent starts");
    await gone.session.stop();
  });

  it("a steer the SDK hands back is sent as a follow-up in the same Loom turn", async () => {
    const fake = fakeCursorSdk();
    fake.steerOutcome = "revert_to_followup";
    const { session, recorder } = await open(fake);
    await session.startTurn({ runId: "r1", input: "hang" });
    await session.steerTurn({ runId: "r1", input: "also this" });
    await session.interruptTurn({ runId: "r1" }).catch(() => undefined);
    expect((await recorder.turnEnd("r1")).status).toBe("interrupted");
    // Interrupting drops the follow-up; without the interrupt it would be the turn's next send.
    expect(fake.sends.map((s) => s.text)).toEqual(["hang"]);

    await session.startTurn({ runId: "r2", input: "hang" });
    await session.steerTurn({ runId: "r2", input: "hello" });
    // The fake finishes a hanging run only on steer/cancel: finish it by a delivered steer.
    fake.steerOutcome = "complete_delivered";
    await session.steerTurn({ runId: "r2", input: "done" });
    await recorder.turnEnd("r2");
    expect(fake.sends.map((s) => s.text)).toEqual(["hang", "hang", "hello"]);
    expect(recorder.ofRun("r2").flatMap((e) => (e.type === "item.completed" && e.item.kind === "assistant_message" ? [e.item.text] : []))).toEqual(["steered: done", "echo: hello"]);
    await session.stop();
  });

  it("a failed run fails the turn; a narrower runtime mode runs read-only; a rejected key is not_authenticated", async () => {
    const fake = fakeCursorSdk();
    const { session, recorder } = await open(fake, "approval-required");
    expect(fake.created[0]?.disallowedTools).toEqual(["shell", "edit", "delete"]);
    await session.startTurn({ runId: "r1", input: "fail" });
    expect(await recorder.turnEnd("r1")).toEqual({ type: "turn.completed", runId: "r1", status: "failed", error: "model unavailable" });
    await session.stop();

    const refusing = fakeCursorSdk();
    refusing.failCreate = Object.assign(new Error(`invalid key ${KEY}`), { name: "AuthenticationError" });
    await expect(open(refusing)).rejects.toMatchObject({ code: "not_authenticated", message: "the Cursor agent did not start: invalid key [redacted]" });
  });
});

describe("cursor probe", () => {
  const env = { processEnv: {}, resolveSdk: () => true, exists: () => false, home: "/home/u", nodeVersion: "22.14.0" };
  const options = cursorOptions.parse(instance());

  it("without CURSOR_API_KEY or a stored login the instance is unavailable, saying why", () => {
    expect(probeCursor(options, env)).toEqual({
      installed: true,
      authenticated: false,
      reason: expect.stringContaining("no Cursor credentials: set CURSOR_API_KEY") as string,
    });
    expect(probeCursor(options, { ...env, exists: (path) => path === "/home/u/.cursor/sdk/auth.json" })).toEqual({ installed: true, authenticated: true, reason: null });
    expect(probeCursor(cursorOptions.parse(instance({ env: { CURSOR_API_KEY: "k" } })), env)).toMatchObject({ authenticated: true });
  });

  it("a missing SDK or an older Node than the SDK's engine is not installed", () => {
    expect(probeCursor(options, { ...env, resolveSdk: () => false }).reason).toContain("the Cursor SDK (@cursor/sdk) is not installed");
    expect(probeCursor(options, { ...env, nodeVersion: "20.20.2", processEnv: { CURSOR_API_KEY: "k" } })).toEqual({
      installed: false,
      authenticated: true,
      reason: "the Cursor SDK needs Node 22.13 or newer; Loom runs on Node 20.20.2",
    });
  });
});
