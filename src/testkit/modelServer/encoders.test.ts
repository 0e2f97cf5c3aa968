import { describe, expect, it } from "vitest";
import { encodeAnthropicStream, normalizeAnthropicRequest } from "../../modelServer/apis/anthropic.js";
import { encodeChatStream, normalizeChatRequest } from "../../modelServer/apis/chatCompletions.js";
import type { EncodeContext } from "../../modelServer/apis/encodeContext.js";
import { normalizeGeminiRequest } from "../../modelServer/apis/gemini.js";
import { encodeResponsesJson, encodeResponsesStream, normalizeResponsesRequest } from "../../modelServer/apis/responses.js";
import type { ResolvedReply } from "../../modelServer/normalized.js";

const ctx: EncodeContext = { sequence: 7, model: "scripted", created: 1_700_000_000, inputTokens: 10, outputTokens: 3 };

/** A codex 0.171 request after one MCP tool round trip, as observed on the wire (trimmed). */
const codexBody = {
  model: "scripted",
  stream: true,
  instructions: "",
  tools: [
    { type: "function", name: "exec_command", parameters: { type: "object" } },
    { type: "namespace", name: "multi_agent_v1", tools: [{ type: "function", name: "spawn_agent" }] },
    { type: "namespace", name: "mcp__t3-code", description: "Tools in the mcp__t3-code namespace.", tools: [{ type: "function", name: "delegate_task" }] },
    { type: "web_search" },
  ],
  input: [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "You are a coding agent running in the Codex CLI" }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "<environment_context>...</environment_context>" }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "delegate it" }] },
    { type: "function_call", id: "fc_1", name: "delegate_task", namespace: "mcp__t3-code", arguments: '{"prompt":"x"}', call_id: "call_1" },
    { type: "function_call_output", call_id: "call_1", output: [{ type: "input_text", text: "Wall time: 0.02 seconds\nOutput:" }, { type: "input_text", text: "thread t1" }] },
  ],
};

describe("Responses API", () => {
  it("normalizes codex's namespace tools, calls and outputs", () => {
    const request = normalizeResponsesRequest(codexBody);
    expect(request.tools).toEqual(["exec_command", "multi_agent_v1__spawn_agent", "mcp__t3-code__delegate_task"]);
    expect(request.toolRefs[2]).toEqual({ name: "mcp__t3-code__delegate_task", callName: "delegate_task", namespace: "mcp__t3-code", kind: "function" });
    expect(request.system).toContain("Codex CLI");
    expect(request.messages.map((m) => m.role)).toEqual(["user", "user", "assistant", "tool"]);
    expect(request.messages[2]?.toolCalls).toEqual([{ id: "call_1", name: "mcp__t3-code__delegate_task", arguments: '{"prompt":"x"}' }]);
    expect(request.lastMessage?.toolResults).toEqual([{ callId: "call_1", text: "Wall time: 0.02 seconds\nOutput:\nthread t1" }]);
  });

  it("answers a namespaced tool with namespace and the tool's own name, else codex says 'unsupported call'", () => {
    const tool = normalizeResponsesRequest(codexBody).toolRefs[2]!;
    const reply: ResolvedReply = { type: "toolCall", callId: "call_4", tool, arguments: { prompt: "x" } };
    const events = encodeResponsesStream(reply, ctx);
    const done = events.find((event) => event.event === "response.output_item.done")?.data as { item: Record<string, unknown> };
    expect(done.item).toEqual({
      type: "function_call",
      id: "fc_7",
      status: "completed",
      call_id: "call_4",
      name: "delegate_task",
      namespace: "mcp__t3-code",
      arguments: '{"prompt":"x"}',
    });
    expect(encodeResponsesJson(reply, ctx).output).toEqual([done.item]);
    const plain = encodeResponsesJson({ type: "toolCall", callId: "call_5", tool: { name: "exec_command", callName: "exec_command", kind: "function" }, arguments: {} }, ctx);
    expect((plain.output as Record<string, unknown>[])[0]).not.toHaveProperty("namespace");
  });

  it("streams the full event sequence with increasing sequence numbers", () => {
    const events = encodeResponsesStream({ type: "text", text: "a reply longer than one twenty-four character delta" }, ctx);
    expect([...new Set(events.map((event) => event.event))]).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((event) => (event.data as { sequence_number: number }).sequence_number)).toEqual(events.map((_, i) => i));
  });

  it("answers a freeform (custom) tool with a custom_tool_call", () => {
    const reply: ResolvedReply = { type: "toolCall", callId: "call_1", tool: { name: "apply_patch", callName: "apply_patch", kind: "custom" }, arguments: { input: "*** Begin Patch" } };
    expect(encodeResponsesJson(reply, ctx).output).toEqual([{ type: "custom_tool_call", id: "fc_7", status: "completed", call_id: "call_1", name: "apply_patch", input: "*** Begin Patch" }]);
  });
});

describe("Anthropic Messages", () => {
  it("drops Claude's system reminders and reads tool_result turns as tool messages", () => {
    const request = normalizeAnthropicRequest({
      model: "claude-sonnet-4-5",
      system: [{ type: "text", text: "You are a Claude agent, built on Anthropic's Claude Agent SDK." }],
      tools: [{ name: "Bash", input_schema: {} }, { name: "mcp__tiny__echo_text", input_schema: {} }],
      messages: [
        { role: "user", content: [{ type: "text", text: "<system-reminder>\n# Environment\n</system-reminder>" }, { type: "text", text: "say hi" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "call_1", name: "mcp__tiny__echo_text", input: { text: "ping" } }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: [{ type: "text", text: "echo: ping\n" }, { type: "text", text: "<system-reminder>\nleft\n</system-reminder>" }] },
          ],
        },
      ],
    });
    expect(request.messages[0]?.text).toBe("say hi");
    expect(request.messages[1]?.toolCalls).toEqual([{ id: "call_1", name: "mcp__tiny__echo_text", arguments: '{"text":"ping"}' }]);
    expect(request.lastMessage).toMatchObject({ role: "tool", toolResults: [{ callId: "call_1", text: "echo: ping" }] });
  });

  it("streams a tool_use block as input_json_delta and stops with tool_use", () => {
    const reply: ResolvedReply = { type: "toolCall", callId: "call_1", tool: { name: "mcp__x__go", callName: "mcp__x__go", kind: "function" }, arguments: { a: 1 } };
    const events = encodeAnthropicStream(reply, ctx);
    expect(events.map((event) => event.event)).toEqual(["message_start", "content_block_start", "ping", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    expect(events[1]?.data).toMatchObject({ content_block: { type: "tool_use", id: "call_1", name: "mcp__x__go", input: {} } });
    expect(events[3]?.data).toMatchObject({ delta: { type: "input_json_delta", partial_json: '{"a":1}' } });
    expect(events[5]?.data).toMatchObject({ delta: { stop_reason: "tool_use" } });
  });
});

describe("Chat Completions and Gemini", () => {
  it("normalizes chat tool calls and tool messages", () => {
    const request = normalizeChatRequest({
      model: "m",
      tools: [{ type: "function", function: { name: "mcp_t3_delegate_task" } }],
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "mcp_t3_delegate_task", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_1", content: "ok" },
      ],
    });
    expect(request).toMatchObject({ system: "be brief", tools: ["mcp_t3_delegate_task"] });
    expect(request.lastMessage?.toolResults).toEqual([{ callId: "call_1", text: "ok" }]);
  });

  it("streams chat tool_calls deltas, then finish_reason, usage and [DONE]", () => {
    const reply: ResolvedReply = { type: "toolCall", callId: "call_1", tool: { name: "f", callName: "f", kind: "function" }, arguments: {} };
    const data = encodeChatStream(reply, ctx, true).map((event) => event.data as { choices?: { delta: unknown; finish_reason: unknown }[]; usage?: unknown });
    expect(data[0]?.choices?.[0]?.delta).toMatchObject({ tool_calls: [{ index: 0, id: "call_1", function: { name: "f", arguments: "" } }] });
    expect(data.at(-3)?.choices?.[0]?.finish_reason).toBe("tool_calls");
    expect(data.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 3 } });
    expect(data.at(-1)).toBe("[DONE]");
  });

  it("normalizes Gemini functionCall and functionResponse parts", () => {
    const request = normalizeGeminiRequest(
      {
        systemInstruction: { parts: [{ text: "sys" }] },
        tools: [{ functionDeclarations: [{ name: "mcp_t3_delegate_task" }] }],
        contents: [
          { role: "user", parts: [{ text: "go" }] },
          { role: "model", parts: [{ functionCall: { name: "mcp_t3_delegate_task", args: { a: 1 } } }] },
          { role: "user", parts: [{ functionResponse: { name: "mcp_t3_delegate_task", response: { output: "done" } } }] },
        ],
      },
      "gemini-2.5-flash",
      true,
    );
    expect(request).toMatchObject({ model: "gemini-2.5-flash", system: "sys", tools: ["mcp_t3_delegate_task"] });
    expect(request.lastMessage?.toolResults).toEqual([{ callId: "mcp_t3_delegate_task", text: '{"output":"done"}' }]);
  });
});
