import { describe, expect, it } from "vitest";
import type { SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import { AcpTurnMapper, MAX_LISTED_COMMANDS, OUTPUT_PREVIEW_CHARS, availableCommandsText, lineDelta, toolItem } from "./acpEvents.js";
import { NOTHING_ADVERTISED, advertisedModels, capabilitiesFrom, factsFromInitialize, withSessionFacts } from "./capabilities.js";
import { parseAcpOptions } from "./options.js";

/** The pure halves of the ACP driver: update mapping, capability facts, options. */

function text(kind: "agent_message_chunk" | "agent_thought_chunk", value: string): SessionUpdate {
  return { sessionUpdate: kind, content: { type: "text", text: value } };
}

describe("AcpTurnMapper", () => {
  it("closes a message when a tool call starts, and a thought when text starts", () => {
    const mapper = new AcpTurnMapper("run-1", "/w");
    const events = [
      ...mapper.map(text("agent_thought_chunk", "hmm")),
      ...mapper.map(text("agent_message_chunk", "a")),
      ...mapper.map(text("agent_message_chunk", "b")),
      ...mapper.map({ sessionUpdate: "tool_call", toolCallId: "x", title: "search", kind: "search", status: "in_progress" }),
      ...mapper.map(text("agent_message_chunk", "c")),
      ...mapper.finish({ response: { stopReason: "end_turn" } }),
    ].filter((event) => event.type !== "item.delta");
    expect(events).toEqual([
      { type: "item.completed", runId: "run-1", itemId: "run-1:reasoning:1", item: { kind: "reasoning", text: "hmm" } },
      { type: "item.completed", runId: "run-1", itemId: "run-1:message:2", item: { kind: "assistant_message", text: "ab" } },
      { type: "item.completed", runId: "run-1", itemId: "run-1:message:3", item: { kind: "assistant_message", text: "c" } },
      // The search never finished: recorded as failed when the turn ended.
      { type: "item.completed", runId: "run-1", itemId: "tool:x", item: { kind: "dynamic_tool", toolName: "search", arguments: null, result: null, status: "failed" } },
      { type: "turn.completed", runId: "run-1", status: "completed", error: null },
    ]);
  });

  it("ignores updates Loom does not record and empty chunks", () => {
    const mapper = new AcpTurnMapper("r", "/w");
    expect(mapper.map({ sessionUpdate: "current_mode_update", currentModeId: "plan" })).toEqual([]);
    expect(mapper.map({ sessionUpdate: "usage_update", used: 1, size: 2 })).toEqual([]);
    expect(mapper.map(text("agent_message_chunk", ""))).toEqual([]);
    expect(mapper.finish({ response: { stopReason: "end_turn" } })).toEqual([{ type: "turn.completed", runId: "r", status: "completed", error: null }]);
  });

  it("maps stop reasons and failures onto the turn's end", () => {
    expect(new AcpTurnMapper("r", "/w").finish({ response: { stopReason: "cancelled" } }).at(-1)).toMatchObject({ status: "interrupted" });
    expect(new AcpTurnMapper("r", "/w").finish({ response: { stopReason: "refusal" } }).at(-1)).toMatchObject({ status: "completed" });
    expect(new AcpTurnMapper("r", "/w").finish({ failed: "boom" }).at(-1)).toEqual({ type: "turn.completed", runId: "r", status: "failed", error: "boom" });
    expect(new AcpTurnMapper("r", "/w").finish({ interrupted: true }).at(-1)).toMatchObject({ status: "interrupted", error: null });
  });

  it("emits a tool call once, when it completes, even if updates repeat", () => {
    const mapper = new AcpTurnMapper("r", "/w");
    mapper.map({ sessionUpdate: "tool_call", toolCallId: "t", title: "Run", kind: "execute", rawInput: { command: ["git", "status"], cwd: "/repo" } });
    const first = mapper.map({ sessionUpdate: "tool_call_update", toolCallId: "t", status: "failed", rawOutput: { exitCode: 128, stdout: "fatal" } });
    const again = mapper.map({ sessionUpdate: "tool_call_update", toolCallId: "t", status: "failed" });
    expect(first).toEqual([{ type: "item.completed", runId: "r", itemId: "tool:t", item: { kind: "command_execution", command: "git status", cwd: "/repo", exitCode: 128, outputPreview: "fatal", outputTruncated: false, durationMs: null } }]);
    expect(again).toEqual([]);
  });
});

describe("toolItem", () => {
  it("truncates long command output and counts lines of file diffs", () => {
    const long = "x".repeat(OUTPUT_PREVIEW_CHARS + 10);
    const item = toolItem({ title: "cat", name: null, kind: "execute", status: "completed", rawInput: undefined, rawOutput: long, content: [], locations: [] }, "/w");
    expect(item).toMatchObject({ kind: "command_execution", command: "cat", cwd: "/w", exitCode: 0, outputTruncated: true });
    expect(item.kind === "command_execution" ? item.outputPreview.length : 0).toBe(OUTPUT_PREVIEW_CHARS);
    const created = toolItem({ title: "Write", name: null, kind: "edit", status: "completed", rawInput: undefined, rawOutput: undefined, content: [{ type: "diff", path: "/w/new.txt", newText: "a\nb\n" }], locations: [] }, "/w");
    expect(created).toEqual({ kind: "file_change", changes: [{ path: "/w/new.txt", kind: "add", additions: 2, deletions: 0 }] });
    const removed = toolItem({ title: "Delete", name: null, kind: "delete", status: "completed", rawInput: undefined, rawOutput: undefined, content: [{ type: "diff", path: "/w/old.txt", oldText: "a\n", newText: "" }], locations: [] }, "/w");
    expect(removed).toEqual({ kind: "file_change", changes: [{ path: "/w/old.txt", kind: "delete", additions: 0, deletions: 1 }] });
    // A failed edit is a failed tool call, not a file change.
    const failed = toolItem({ title: "Edit", name: "edit_file", kind: "edit", status: "failed", rawInput: { path: "a" }, rawOutput: "denied", content: [], locations: [] }, "/w");
    expect(failed).toEqual({ kind: "dynamic_tool", toolName: "edit_file", arguments: { path: "a" }, result: "denied", status: "failed" });
  });

  it("lineDelta counts additions and deletions", () => {
    expect(lineDelta(["a", "b", "c"], ["a", "c", "d", "e"])).toEqual({ additions: 2, deletions: 1 });
    expect(lineDelta([], [])).toEqual({ additions: 0, deletions: 0 });
  });
});

describe("capability facts", () => {
  it("available_commands_update becomes an info system_notice listing the commands (long lists counted)", () => {
    const mapper = new AcpTurnMapper("run-1", "/w");
    expect(mapper.map({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } })).toMatchObject([{ type: "item.delta" }]);
    const events = mapper.map({ sessionUpdate: "available_commands_update", availableCommands: [{ name: "plan", description: "Make a plan", input: { hint: "goal" } }, { name: "clear", description: "" }] });
    expect(events).toEqual([
      { type: "item.completed", runId: "run-1", itemId: "run-1:message:1", item: { kind: "assistant_message", text: "hi" } },
      { type: "item.completed", runId: "run-1", itemId: "run-1:commands:2", item: { kind: "system_notice", level: "info", text: "The agent offers 2 commands:\n/plan <goal> — Make a plan\n/clear" } },
    ]);
    expect(availableCommandsText([])).toBe("The agent offers no commands now.");
    const many = availableCommandsText(Array.from({ length: MAX_LISTED_COMMANDS + 3 }, (_, n) => ({ name: `c${n}`, description: "d" })));
    expect(many.split("\n")).toHaveLength(MAX_LISTED_COMMANDS + 2);
    expect(many).toMatch(/^The agent offers 53 commands:\n/);
    expect(many.endsWith("... and 3 more")).toBe(true);
  });

  it("come from initialize and session/new, and claim nothing before", () => {
    expect(capabilitiesFrom(NOTHING_ADVERTISED, null)).toEqual({ steering: false, interrupt: true, restart: true, fork: false, resume: false, runtimeModes: ["approval-required", "auto-accept-edits", "full-access"], models: [], mcpTransport: "none" });
    const facts = factsFromInitialize({
      protocolVersion: 1,
      agentCapabilities: { loadSession: true, mcpCapabilities: { http: true }, sessionCapabilities: { fork: {} } },
      agentInfo: { name: "agent", version: "1.2.3" },
      authMethods: [{ id: "key", name: "API key" }],
    });
    expect(facts).toMatchObject({ loadSession: true, fork: true, mcpHttp: true, authMethods: ["key"], agent: "agent 1.2.3" });
    const withModels = withSessionFacts(facts, {
      sessionId: "s",
      modes: { currentModeId: "default", availableModes: [{ id: "default", name: "Default" }, { id: "plan", name: "Plan" }] },
      configOptions: [{ id: "model", name: "Model", category: "model", type: "select", currentValue: "m1", options: [{ value: "m1", name: "M1" }, { value: "m2", name: "M2" }] }],
    });
    expect(withModels).toMatchObject({ models: ["m1", "m2"], modes: ["default", "plan"] });
    // The agent advertises session/fork, but Loom never calls a native fork: the record says false.
    expect(capabilitiesFrom(withModels, null)).toMatchObject({ fork: false, resume: true, models: ["m1", "m2"], mcpTransport: "http" });
    // An instance's configured models win.
    expect(capabilitiesFrom(withModels, ["mine"]).models).toEqual(["mine"]);
  });

  it("reads the legacy models state some agents still send", () => {
    const response = { sessionId: "s", models: { currentModelId: "a", availableModels: [{ modelId: "a", name: "A" }, { modelId: "b", name: "B" }] } };
    expect(advertisedModels(response)).toEqual(["a", "b"]);
  });
});

describe("options", () => {
  const instance = (options: Record<string, unknown>) => ({ id: "x", driver: "acp", enabled: true, displayName: null, models: null, options });

  it("needs a command or a registry agent, and names every bad field", () => {
    expect(parseAcpOptions(instance({ command: "agent", args: ["--acp"] }))).toMatchObject({ command: "agent", args: ["--acp"], registryAgent: null, mcpServerName: "t3-code", requestTimeoutMs: 60_000 });
    expect(parseAcpOptions(instance({ registryAgent: "gemini" }))).toMatchObject({ command: null, registryAgent: "gemini" });
    expect(() => parseAcpOptions(instance({}))).toThrow(/set "command".*or "registryAgent"/);
    expect(() => parseAcpOptions(instance({ command: "", registryAgent: "Bad_Id", requestTimeoutMs: -1 }))).toThrow(
      expect.objectContaining({ name: "DriverOptionsError", code: "invalid_options", message: expect.stringMatching(/options\.command: must not be empty.*options\.registryAgent.*options\.requestTimeoutMs/) }),
    );
    expect(() => parseAcpOptions(instance({ command: "a", token: "x" }))).toThrow(/token/);
    expect(() => parseAcpOptions(instance({ command: "a", registryVersion: "1.0.0" }))).toThrow(/registryVersion: needs "registryAgent"/);
  });
});
