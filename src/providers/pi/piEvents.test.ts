import { describe, expect, it } from "vitest";
import { piOptions } from "./options.js";
import { gatedTools, modelsJson, piEnv, rpcArgs } from "./piConfig.js";
import { PiEventMapper } from "./piEvents.js";
import { dialogItem, dialogResponse } from "./uiRequests.js";

/** Events shaped as Pi 0.73.1 sends them in RPC mode (docs/rpc.md, pi.e2e.test.ts). */

const assistant = (content: unknown[], extra: Record<string, unknown> = {}) => ({ role: "assistant", content, usage: { input: 10, output: 3, cacheRead: 5, cacheWrite: 1, cost: { total: 0.25 } }, stopReason: "stop", ...extra });

describe("PiEventMapper", () => {
  it("maps deltas, finished text and thinking blocks, and sums usage over the turn", () => {
    const mapper = new PiEventMapper("/w");
    mapper.startTurn();
    expect(mapper.map({ type: "message_start", message: { role: "user" } }, "r")).toEqual([]);
    mapper.map({ type: "message_start", message: assistant([]) }, "r");
    expect(mapper.map({ type: "message_update", assistantMessageEvent: { type: "text_delta", contentIndex: 1, delta: "Hi" } }, "r")).toEqual([{ type: "item.delta", runId: "r", itemId: "m1-c1", text: "Hi" }]);
    expect(mapper.map({ type: "message_end", message: assistant([{ type: "thinking", thinking: "hmm" }, { type: "text", text: "Hi" }, { type: "toolCall", id: "t", name: "bash" }]) }, "r")).toEqual([
      { type: "item.completed", runId: "r", itemId: "m1-c0", item: { kind: "reasoning", text: "hmm" } },
      { type: "item.completed", runId: "r", itemId: "m1-c1", item: { kind: "assistant_message", text: "Hi" } },
      { type: "usage", runId: "r", inputTokens: 16, outputTokens: 3, cachedInputTokens: 5, costUsd: 0.25 },
    ]);
    mapper.map({ type: "message_start", message: assistant([]) }, "r");
    expect(mapper.map({ type: "message_end", message: assistant([{ type: "text", text: "Bye" }]) }, "r").at(-1)).toEqual({ type: "usage", runId: "r", inputTokens: 32, outputTokens: 6, cachedInputTokens: 10, costUsd: 0.5 });
    expect(mapper.turnOutcome()).toEqual({ stopReason: null, error: null });
  });

  it("maps tools: bash to command_execution, edit to file_change, Loom's MCP tools to dynamic_tool with their structured result", () => {
    const mapper = new PiEventMapper("/w", () => 100);
    mapper.map({ type: "tool_execution_start", toolCallId: "t1", toolName: "bash", args: { command: "false" } }, "r");
    expect(mapper.map({ type: "tool_execution_end", toolCallId: "t1", toolName: "bash", result: { content: [{ type: "text", text: "Command exited with code 1" }] }, isError: true }, "r")[0]).toMatchObject({
      itemId: "t1",
      item: { kind: "command_execution", command: "false", cwd: "/w", exitCode: 1, outputPreview: "Command exited with code 1", durationMs: 0 },
    });
    mapper.map({ type: "tool_execution_start", toolCallId: "t2", toolName: "edit", args: { path: "a.ts" } }, "r");
    expect(mapper.map({ type: "tool_execution_end", toolCallId: "t2", toolName: "edit", result: { content: [] }, isError: false }, "r")[0]).toMatchObject({ item: { kind: "file_change", changes: [{ path: "a.ts", kind: "update" }] } });
    mapper.map({ type: "tool_execution_start", toolCallId: "t3", toolName: "mcp__t3-code__task_status", args: { taskId: "x" } }, "r");
    expect(mapper.map({ type: "tool_execution_end", toolCallId: "t3", toolName: "mcp__t3-code__task_status", result: { content: [{ type: "text", text: "{}" }], details: { status: "running" } }, isError: false }, "r")[0]).toMatchObject({
      item: { kind: "dynamic_tool", toolName: "mcp__t3-code__task_status", arguments: { taskId: "x" }, result: { status: "running" }, status: "completed" },
    });
  });

  it("a failed model request is an error item and a failed turn; an abort is an interrupted one", () => {
    const mapper = new PiEventMapper("/w");
    mapper.startTurn();
    mapper.map({ type: "message_start", message: assistant([]) }, "r");
    expect(mapper.map({ type: "message_end", message: assistant([], { stopReason: "error", errorMessage: "429 slow down", usage: {} }) }, "r")).toEqual([
      { type: "item.completed", runId: "r", itemId: "m1-error", item: { kind: "error", message: "429 slow down" } },
    ]);
    expect(mapper.turnOutcome()).toEqual({ stopReason: "error", error: "429 slow down" });
    mapper.map({ type: "message_end", message: assistant([], { stopReason: "aborted" }) }, "r");
    expect(mapper.turnOutcome()).toEqual({ stopReason: "aborted", error: null });
  });
});

describe("pi dialogs and config", () => {
  it("Loom's confirm is an approval of its kind; other dialogs are one question; answers become extension_ui_response", () => {
    const approval = dialogItem({ type: "extension_ui_request", id: "d1", method: "confirm", title: "[loom:file-change] Edit a.ts", message: "{}" })!;
    expect(approval.item).toEqual({ kind: "approval_request", requestId: "d1", requestKind: "file-change", title: "Edit a.ts", detail: "{}" });
    expect(dialogResponse(approval.pending, { decision: "accept" })).toEqual({ type: "extension_ui_response", id: "d1", confirmed: true });
    expect(dialogResponse(approval.pending, { dismissed: true })).toEqual({ type: "extension_ui_response", id: "d1", confirmed: false });
    expect(dialogResponse(approval.pending, { answers: {} })).toBeNull();
    expect(dialogItem({ type: "extension_ui_request", id: "d2", method: "confirm", title: "Clear?" })?.item).toMatchObject({ requestKind: "permission", title: "Clear?" });
    const select = dialogItem({ type: "extension_ui_request", id: "d3", method: "select", title: "Pick", options: ["a", "b"] })!;
    expect(select.item).toEqual({ kind: "user_input_request", requestId: "d3", questions: [{ id: "q1", question: "Pick (a / b)" }] });
    expect(dialogResponse(select.pending, { answers: { q1: ["b"] } })).toEqual({ type: "extension_ui_response", id: "d3", value: "b" });
    expect(dialogResponse(select.pending, { dismissed: true })).toEqual({ type: "extension_ui_response", id: "d3", cancelled: true });
    expect(dialogItem({ type: "extension_ui_request", id: "d4", method: "notify", message: "hi" })).toBeNull();
  });

  it("argv never carries the token; the environment does, with the approval gate of the runtime mode", () => {
    const options = piOptions.parse({ id: "pi", driver: "pi", enabled: true, displayName: null, models: ["loom/m1", "x/y"], options: { modelProvider: { baseUrl: "http://127.0.0.1:9/v1", envKey: "KEY" } } });
    expect(rpcArgs({ extensionPath: "/c/ext.ts", model: "loom/m1" })).toEqual(["--mode", "rpc", "--no-session", "--offline", "--extension", "/c/ext.ts", "--model", "loom/m1"]);
    expect(modelsJson(options)).toEqual({
      providers: { loom: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "KEY", compat: { supportsDeveloperRole: false, supportsReasoningEffort: false }, models: [{ id: "m1" }] } },
    });
    const env = piEnv({ options, baseEnv: { T3_MCP_BEARER_TOKEN: "outer" }, agentDir: "/a", mcp: { url: "http://l/mcp", token: "tok" }, instructions: "be good", runtimeMode: "auto-accept-edits", interactionMode: "plan" });
    expect(env).toMatchObject({ PI_CODING_AGENT_DIR: "/a", PI_OFFLINE: "1", T3_MCP_URL: "http://l/mcp", T3_MCP_BEARER_TOKEN: "tok", T3_ORCHESTRATION_INSTRUCTIONS: "be good", T3_PI_APPROVAL: "bash", T3_PI_READ_ONLY: "1" });
    expect(piEnv({ options, baseEnv: { T3_MCP_BEARER_TOKEN: "outer" }, agentDir: "/a", mcp: null, instructions: "x", runtimeMode: "full-access", interactionMode: "default" }).T3_MCP_BEARER_TOKEN).toBeUndefined();
    expect([gatedTools("approval-required"), gatedTools("full-access")]).toEqual([["bash", "edit", "write"], []]);
  });
});
