import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProviderSessionRuntime } from "../adapter.js";
import { ProviderError } from "../adapter.js";
import type { NormalizedProviderEvent } from "../events.js";
import { type ScriptedAgentCaps, type ScriptedAgentSetup, acpScript, scriptedAgentSetup, waitForEvent } from "../../testkit/acpAgentHarness.js";
import { createAcpDriver } from "./driver.js";

/**
 * The generic ACP driver against a real ACP agent process (the scripted
 * agent in testkit, on the official SDK's agent() builder): the adapter
 * contract (adapter.ts) and the mapping of what the agent sends.
 */

let agent: ScriptedAgentSetup;
let sessions: ProviderSessionRuntime[];

beforeEach(() => {
  agent = scriptedAgentSetup();
  sessions = [];
});

afterEach(async () => {
  for (const session of sessions) await session.stop();
  agent.close();
});

const TOKEN = "loom-test-token-0123456789abcdef";

async function open(spec: { caps?: ScriptedAgentCaps; runtimeMode?: "approval-required" | "auto-accept-edits" | "full-access"; model?: string | null; interactionMode?: "plan" | "default"; options?: Record<string, unknown> } = {}) {
  const events: NormalizedProviderEvent[] = [];
  const logs: string[] = [];
  const driver = createAcpDriver({ log: (line) => logs.push(line) });
  const instance = agent.instance({ caps: spec.caps ?? {}, options: spec.options ?? {} });
  const session = await driver.openSession({
    instance,
    threadId: "thread:1",
    providerSessionId: "provider-session:1",
    cwd: agent.dir,
    runtimeMode: spec.runtimeMode ?? "approval-required",
    interactionMode: spec.interactionMode ?? "default",
    model: spec.model ?? null,
    mcp: { url: "http://127.0.0.1:9/mcp", token: TOKEN },
    onEvent: (event) => events.push(event),
  });
  sessions.push(session);
  return { session, events, logs, driver, instance };
}

function completed(events: readonly NormalizedProviderEvent[], runId: string) {
  return waitForEvent(events, (event) => event.type === "turn.completed" && event.runId === runId, `turn.completed of ${runId}`);
}

describe("acp driver: session/new", () => {
  it("injects Loom's MCP server as an http server with the bearer token, and only there", async () => {
    const { logs, events } = await open({ caps: { http: true } });
    const created = agent.requests().find((request) => request.method === "session/new");
    expect(created?.params).toMatchObject({
      cwd: agent.dir,
      mcpServers: [{ type: "http", name: "t3-code", url: "http://127.0.0.1:9/mcp", headers: [{ name: "Authorization", value: `Bearer ${TOKEN}` }] }],
    });
    const init = agent.requests().find((request) => request.method === "initialize");
    expect(init?.params).toMatchObject({ protocolVersion: 1, clientCapabilities: { terminal: false } });
    expect(logs.join("\n")).toContain("Loom MCP server injected as t3-code");
    expect(logs.join("\n")).not.toContain(TOKEN);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
  });

  it("does not send Loom's server to an agent that does not advertise MCP over HTTP", async () => {
    const { logs, driver, instance } = await open({ caps: { http: false } });
    expect(agent.requests().find((request) => request.method === "session/new")?.params.mcpServers).toEqual([]);
    expect(logs.join("\n")).toContain("not injected");
    expect(driver.capabilities(instance).mcpTransport).toBe("none");
  });

  it("capabilities come only from what the agent advertised", async () => {
    const driver = createAcpDriver();
    const instance = agent.instance({ caps: { loadSession: true, fork: true, models: ["m-small", "m-large"], modes: ["default", "plan"] } });
    const before = driver.capabilities(instance);
    expect(before).toMatchObject({ steering: false, interrupt: true, restart: true, fork: false, resume: false, models: [], mcpTransport: "none" });
    const probe = await driver.probe(instance);
    expect(probe).toEqual({ installed: true, authenticated: true, reason: null });
    // fork stays false although advertised: Loom forks with portable context (docs/providers/acp.md).
    expect(driver.capabilities(instance)).toMatchObject({ steering: false, restart: true, fork: false, resume: true, models: ["m-small", "m-large"], mcpTransport: "http" });
    // The probe's session/new was disposable and carried no MCP server.
    expect(agent.requests().filter((request) => request.method === "session/new").map((request) => request.params.mcpServers)).toEqual([[]]);

    const plain = agent.instance({ id: "plain", caps: {} });
    await driver.probe(plain);
    expect(driver.capabilities(plain)).toMatchObject({ fork: false, resume: false, models: [], mcpTransport: "http" });
  });

  it("selects the thread's model and plan mode where the agent offers them, and refuses a model it does not offer", async () => {
    await open({ caps: { models: ["m-small", "m-large"], modes: ["default", "plan"] }, model: "m-large", interactionMode: "plan" });
    expect(agent.requests().find((request) => request.method === "session/set_model")?.params).toMatchObject({ modelId: "m-large" });
    expect(agent.requests().find((request) => request.method === "session/set_mode")?.params).toMatchObject({ modeId: "plan" });
    const failure = await open({ caps: { models: ["m-small"] }, model: "m-huge" }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderError);
    expect(failure).toMatchObject({ code: "start_failed" });
    expect((failure as Error).message).toContain('cannot run model "m-huge": it offers m-small');
  });

  it("authenticates with the configured method before session/new", async () => {
    await open({ caps: { authMethods: ["api-key"], requireAuth: true }, options: { authMethod: "api-key" } });
    expect(agent.requests().map((request) => request.method).slice(0, 3)).toEqual(["initialize", "authenticate", "session/new"]);
    const refused = await open({ caps: { requireAuth: true } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "not_authenticated" });
  });

  it("a recent proof of readiness spares the next probe a process; an old one does not", async () => {
    let clock = 1_000_000;
    const driver = createAcpDriver({ now: () => clock, readyTtlMs: 60_000 });
    const instance = agent.instance();
    const initializes = () => agent.requests().filter((request) => request.method === "initialize").length;
    expect(await driver.probe(instance)).toMatchObject({ authenticated: true });
    expect(await driver.probe(instance)).toMatchObject({ authenticated: true });
    expect(initializes()).toBe(1);
    clock += 60_001;
    expect(await driver.probe(instance)).toMatchObject({ authenticated: true });
    expect(initializes()).toBe(2);
  });

  it("a probe tells a missing login from a broken agent: not authenticated, or it rejects (probe failed)", async () => {
    const driver = createAcpDriver();
    const locked = await driver.probe(agent.instance({ id: "locked", caps: { requireAuth: true } }));
    expect(locked).toMatchObject({ installed: true, authenticated: false, reason: expect.stringContaining("Authentication required") });
    const broken = { ...agent.instance({ id: "broken" }), options: { command: process.execPath, args: ["-e", "console.error('agent broke'); process.exit(3)"] } };
    await expect(driver.probe(broken)).rejects.toMatchObject({ name: "ProviderError", code: "start_failed", message: expect.stringContaining("agent broke") });
  });

  it("a missing executable is not_installed, and the probe says so", async () => {
    const driver = createAcpDriver();
    const instance = { ...agent.instance(), options: { command: "/nonexistent/acp-agent" } };
    const probe = await driver.probe(instance);
    expect(probe).toMatchObject({ installed: false, authenticated: false });
    expect(probe.reason).toContain("/nonexistent/acp-agent");
  });
});

describe("acp driver: turns", () => {
  it("records the agent's available commands as a system_notice, in the first turn after they arrive and again only when they change", async () => {
    const commands = [{ name: "review", description: "Review the changes", input: { hint: "what to review" } }, { name: "init", description: "Write AGENTS.md" }];
    const { session, events } = await open({ caps: { commands } });
    const notices = () => events.flatMap((event) => (event.type === "item.completed" && event.item.kind === "system_notice" ? [{ runId: event.runId, text: event.item.text }] : []));
    // Sent right after session/new, before any turn: it goes into the first one.
    await session.startTurn({ runId: "run-1", input: "hello" });
    await completed(events, "run-1");
    expect(notices()).toEqual([{ runId: "run-1", text: "The agent offers 2 commands:\n/review <what to review> — Review the changes\n/init — Write AGENTS.md" }]);
    // The same list again is not repeated; a changed one is recorded in the turn it arrives in.
    await session.startTurn({ runId: "run-2", input: acpScript({ commands }, { chunk: "same" }, { commands: [commands[1]] }, { chunk: "fewer" }) });
    await completed(events, "run-2");
    expect(notices()).toEqual([
      { runId: "run-1", text: expect.stringContaining("2 commands") },
      { runId: "run-2", text: "The agent offers 1 command:\n/init — Write AGENTS.md" },
    ]);
    // The open message ended before the notice: its text is whole.
    const texts = events.flatMap((event) => (event.type === "item.completed" && event.item.kind === "assistant_message" && event.runId === "run-2" ? [event.item.text] : []));
    expect(texts).toEqual(["same", "fewer"]);
  });

  it("maps message chunks, thoughts, tool calls and plans onto normalized events", async () => {
    const { session, events } = await open();
    await session.startTurn({
      runId: "run-1",
      input: acpScript(
        { thought: "thinking it over" },
        { chunk: "Hello, " },
        { chunk: "world." },
        { plan: [{ content: "read", status: "completed" }, { content: "write", status: "in_progress" }] },
        { toolCall: { toolCallId: "t1", title: "ls -la", kind: "execute", status: "in_progress", rawInput: { command: "ls -la" } } },
        { toolUpdate: { toolCallId: "t1", status: "completed", content: [{ type: "content", content: { type: "text", text: "total 0" } }], rawOutput: { exit_code: 0 } } },
        { toolCall: { toolCallId: "t2", title: "Edit a.txt", kind: "edit", status: "pending" } },
        { toolUpdate: { toolCallId: "t2", status: "completed", content: [{ type: "diff", path: "/w/a.txt", oldText: "one\n", newText: "one\ntwo\n" }] } },
        { toolCall: { toolCallId: "t3", title: "mcp__t3-code__t3_thread_list", kind: "other", status: "completed", rawInput: {}, rawOutput: { total: 0 } } },
        { chunk: "Done." },
        { usage: { inputTokens: 12, outputTokens: 5 } },
      ),
    });
    await completed(events, "run-1");
    const durable = events.filter((event) => event.type !== "item.delta");
    expect(durable).toEqual([
      { type: "turn.started", runId: "run-1", nativeThreadId: expect.stringMatching(/^scripted-/) },
      { type: "item.completed", runId: "run-1", itemId: "run-1:reasoning:1", item: { kind: "reasoning", text: "thinking it over" } },
      { type: "item.completed", runId: "run-1", itemId: "run-1:message:2", item: { kind: "assistant_message", text: "Hello, world." } },
      { type: "item.completed", runId: "run-1", itemId: "run-1:plan:3", item: { kind: "todo_list", items: [{ text: "read", status: "completed" }, { text: "write", status: "in_progress" }] } },
      { type: "item.completed", runId: "run-1", itemId: "tool:t1", item: { kind: "command_execution", command: "ls -la", cwd: agent.dir, exitCode: 0, outputPreview: "total 0", outputTruncated: false, durationMs: null } },
      { type: "item.completed", runId: "run-1", itemId: "tool:t2", item: { kind: "file_change", changes: [{ path: "/w/a.txt", kind: "update", additions: 1, deletions: 0 }] } },
      { type: "item.completed", runId: "run-1", itemId: "tool:t3", item: { kind: "dynamic_tool", toolName: "mcp__t3-code__t3_thread_list", arguments: {}, result: { total: 0 }, status: "completed" } },
      { type: "item.completed", runId: "run-1", itemId: "run-1:message:4", item: { kind: "assistant_message", text: "Done." } },
      { type: "usage", runId: "run-1", inputTokens: 12, outputTokens: 5 },
      { type: "turn.completed", runId: "run-1", status: "completed", error: null },
    ]);
    const deltas = events.filter((event) => event.type === "item.delta").map((event) => (event.type === "item.delta" ? [event.itemId, event.text] : []));
    expect(deltas).toEqual([
      ["run-1:reasoning:1", "thinking it over"],
      ["run-1:message:2", "Hello, "],
      ["run-1:message:2", "world."],
      ["run-1:message:4", "Done."],
    ]);
  });

  it("runs consecutive turns in the same ACP session and refuses a second concurrent turn", async () => {
    const { session, events } = await open();
    await session.startTurn({ runId: "run-1", input: acpScript({ waitForCancel: true }) });
    await expect(session.startTurn({ runId: "run-2", input: "hi" })).rejects.toMatchObject({ code: "turn_not_active" });
    await session.interruptTurn({ runId: "run-1" });
    await completed(events, "run-1");
    await session.startTurn({ runId: "run-2", input: "hi" });
    await completed(events, "run-2");
    expect(events.filter((event) => event.type === "item.completed" && event.runId === "run-2").map((event) => (event.type === "item.completed" ? event.item : null))).toEqual([
      { kind: "assistant_message", text: "Echo: hi" },
    ]);
    const prompts = agent.requests().filter((request) => request.method === "session/prompt").map((request) => request.params.sessionId);
    expect(new Set(prompts).size).toBe(1);
  });

  it("interrupt sends session/cancel and the turn ends interrupted", async () => {
    const { session, events } = await open();
    await session.startTurn({ runId: "run-1", input: acpScript({ chunk: "working" }, { waitForCancel: true }, { chunk: "never" }) });
    await waitForEvent(events, (event) => event.type === "item.delta", "the first chunk");
    await session.interruptTurn({ runId: "run-1" });
    const end = await completed(events, "run-1");
    expect(end).toEqual({ type: "turn.completed", runId: "run-1", status: "interrupted", error: null });
    expect(agent.requests().some((request) => request.method === "session/cancel")).toBe(true);
    expect(events).toContainEqual(expect.objectContaining({ type: "item.completed", item: { kind: "assistant_message", text: "working" } }));
  });

  it("steering is unsupported: the caller restarts the turn instead", async () => {
    const { session, driver, instance } = await open();
    expect(driver.capabilities(instance)).toMatchObject({ steering: false, restart: true, interrupt: true });
    await session.startTurn({ runId: "run-1", input: acpScript({ waitForCancel: true }) });
    await expect(session.steerTurn({ runId: "run-1", input: "more" })).rejects.toMatchObject({ name: "ProviderError", code: "unsupported" });
  });

  it("a crash mid-turn fails the turn; the next turn restarts the agent and loads the session when it can", async () => {
    const { session, events, logs, driver, instance } = await open({ caps: { loadSession: true, models: ["m1"] } });
    await session.startTurn({ runId: "run-1", input: acpScript({ chunk: "about to crash" }, { exit: 3 }) });
    const end = await completed(events, "run-1");
    expect(end).toMatchObject({ status: "failed" });
    expect(end.type === "turn.completed" ? end.error : "").toMatch(/exited \(code 3\)/);
    await session.startTurn({ runId: "run-2", input: "again" });
    await completed(events, "run-2");
    const methods = agent.requests().map((request) => request.method);
    expect(methods.filter((method) => method === "initialize")).toHaveLength(2);
    expect(methods).toContain("session/load");
    const load = agent.requests().find((request) => request.method === "session/load");
    expect(load?.params).toMatchObject({ mcpServers: [{ headers: [{ name: "Authorization", value: `Bearer ${TOKEN}` }] }] });
    expect(events.filter((event) => event.type === "item.completed" && event.item.kind === "error")).toEqual([]);
    expect(logs.join("\n")).not.toContain(TOKEN);
    // The load answer carried no models: what session/new advertised still holds.
    expect(driver.capabilities(instance)).toMatchObject({ resume: true, models: ["m1"] });
  });

  it("without session/load, the restarted turn runs in a new session and says so", async () => {
    const { session, events } = await open({ caps: { loadSession: false } });
    await session.startTurn({ runId: "run-1", input: acpScript({ exit: 1 }) });
    await completed(events, "run-1");
    await session.startTurn({ runId: "run-2", input: "again" });
    await completed(events, "run-2");
    expect(events).toContainEqual(expect.objectContaining({ runId: "run-2", item: expect.objectContaining({ kind: "error", message: expect.stringContaining("new session without the earlier conversation") }) }));
    expect(agent.requests().filter((request) => request.method === "session/new")).toHaveLength(2);
  });

  it("native fork opens a forked ACP session when advertised, and is unsupported otherwise", async () => {
    const forkable = await open({ caps: { fork: true } });
    const forkedId = await (forkable.session as unknown as { forkNative(): Promise<string> }).forkNative();
    const fork = agent.requests().find((request) => request.method === "session/fork");
    expect(fork?.params).toMatchObject({ cwd: agent.dir, mcpServers: [{ name: "t3-code" }] });
    expect(forkedId).toMatch(/^scripted-/);
    const plain = await open({ caps: {} });
    await expect((plain.session as unknown as { forkNative(): Promise<string> }).forkNative()).rejects.toMatchObject({ code: "unsupported" });
  });
});

describe("acp driver: resuming an earlier session's conversation", () => {
  async function openResuming(caps: ScriptedAgentCaps, nativeThreadId: string, model: string | null = null) {
    const events: NormalizedProviderEvent[] = [];
    const logs: string[] = [];
    const session = await createAcpDriver({ log: (line) => logs.push(line) }).openSession({
      instance: agent.instance({ caps }),
      threadId: "thread:1",
      providerSessionId: "provider-session:2",
      cwd: agent.dir,
      runtimeMode: "approval-required",
      interactionMode: "default",
      model,
      mcp: { url: "http://127.0.0.1:9/mcp", token: TOKEN },
      resume: { nativeThreadId },
      onEvent: (event) => events.push(event),
    });
    sessions.push(session);
    return { session, events, logs };
  }

  it("turn.started names the ACP session; a later session given it loads it with Loom's MCP server and reports resumed", async () => {
    const first = await open({ caps: { loadSession: true } });
    await first.session.startTurn({ runId: "run-1", input: "hi" });
    await completed(first.events, "run-1");
    const started = first.events.find((event) => event.type === "turn.started");
    // The scripted agent's session ids start with "scripted-"; the prompt went to that session.
    const created = agent.requests().find((request) => request.method === "session/prompt");
    expect(started).toEqual({ type: "turn.started", runId: "run-1", nativeThreadId: expect.stringMatching(/^scripted-/) });
    expect(started?.type === "turn.started" ? started.nativeThreadId : null).toBe(created?.params.sessionId);
    await first.session.stop();

    const { session, events } = await openResuming({ loadSession: true, models: ["m1"] }, (created?.params.sessionId as string | undefined) ?? "", "m1");
    expect(session.resumed).toBe(true);
    const load = agent.requests().find((request) => request.method === "session/load");
    expect(load?.params).toMatchObject({ sessionId: created?.params.sessionId, cwd: agent.dir, mcpServers: [{ name: "t3-code", headers: [{ name: "Authorization", value: `Bearer ${TOKEN}` }] }] });
    expect(agent.requests().filter((request) => request.method === "session/new")).toHaveLength(1);
    await session.startTurn({ runId: "run-2", input: "again" });
    await completed(events, "run-2");
    expect(agent.requests().filter((request) => request.method === "session/prompt").at(-1)?.params.sessionId).toBe(created?.params.sessionId);
    expect(events[0]).toEqual({ type: "turn.started", runId: "run-2", nativeThreadId: created?.params.sessionId });
  });

  it("an agent that cannot load it, or does not advertise session/load, gets a new session and the session is not resumed", async () => {
    const failing = await openResuming({ loadSession: true, failLoad: true }, "scripted-gone");
    expect(failing.session.resumed).toBe(false);
    expect(failing.logs.join("\n")).toContain("could not load session scripted-gone");
    expect(agent.requests().map((request) => request.method)).toEqual(["initialize", "session/load", "session/new"]);
    const plain = await openResuming({}, "scripted-gone");
    expect(plain.session.resumed).toBe(false);
    expect(agent.requests().filter((request) => request.method === "session/load")).toHaveLength(1);
  });
});

describe("acp driver: the adapter contract after stop", () => {
  it("stop is idempotent, ends a running turn interrupted as the last event, and every method then rejects session_closed", async () => {
    const { session, events } = await open();
    await session.startTurn({ runId: "run-1", input: acpScript({ chunk: "x" }, { waitForCancel: true }) });
    await waitForEvent(events, (event) => event.type === "item.delta", "the first chunk");
    await session.stop();
    await session.stop();
    expect(events.at(-1)).toEqual({ type: "turn.completed", runId: "run-1", status: "interrupted", error: null });
    const count = events.length;
    for (const call of [
      () => session.startTurn({ runId: "run-2", input: "hi" }),
      () => session.steerTurn({ runId: "run-1", input: "hi" }),
      () => session.interruptTurn({ runId: "run-1" }),
      () => session.respondToRequest({ requestId: "acp-permission-1", response: { decision: "accept" } }),
    ]) {
      await expect(call()).rejects.toMatchObject({ name: "ProviderError", code: "session_closed" });
    }
    expect(events).toHaveLength(count);
  });

  it("respondToRequest for an unknown request is request_not_found; interrupt without a turn is turn_not_active", async () => {
    const { session } = await open();
    await expect(session.respondToRequest({ requestId: "nope", response: { decision: "accept" } })).rejects.toMatchObject({ code: "request_not_found" });
    await expect(session.interruptTurn({ runId: "run-x" })).rejects.toMatchObject({ code: "turn_not_active" });
  });
});
