/**
 * Anthropic Messages (`POST /v1/messages`, Claude adds `?beta=true`). Tool
 * results arrive as `tool_result` blocks inside a user turn; such a turn
 * normalizes to role "tool". Claude prepends `<system-reminder>` text blocks
 * to user turns and tool results; they are dropped so `lastUser` is what the
 * user typed and a tool result is what the tool returned.
 */
import {
  type Json,
  type NormalizedMessage,
  type NormalizedRequest,
  type ResolvedReply,
  type ToolCallRecord,
  type ToolRef,
  type ToolResultRecord,
  asArray,
  asObject,
  asString,
  message,
  normalizedRequest,
  outputText,
  textOf,
  toolCallsOf,
} from "../normalized.js";
import { type SseEvent, textChunks } from "../sse.js";
import type { EncodeContext } from "./encodeContext.js";

const REMINDER = /^\s*<system-reminder>[\s\S]*<\/system-reminder>\s*$/;

function toolRefs(tools: unknown): ToolRef[] {
  return asArray(tools).flatMap((value): ToolRef[] => {
    const name = asString(asObject(value)?.name);
    return name === undefined ? [] : [{ name, callName: name, kind: "function" }];
  });
}

/** Text of a tool_result's content without the reminders Claude appends to it. */
function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  const parts = asArray(content).filter((part) => !REMINDER.test(asString(asObject(part)?.text) ?? ""));
  return outputText(parts).trimEnd();
}

function normalizeTurn(role: string | undefined, content: unknown): NormalizedMessage {
  if (typeof content === "string") return message(role === "assistant" ? "assistant" : "user", content);
  const texts: string[] = [];
  const toolCalls: ToolCallRecord[] = [];
  const toolResults: ToolResultRecord[] = [];
  for (const value of asArray(content)) {
    const block = asObject(value);
    if (block === undefined) continue;
    if (block.type === "text") {
      const text = asString(block.text) ?? "";
      if (!REMINDER.test(text)) texts.push(text);
    } else if (block.type === "tool_use") {
      toolCalls.push({ id: asString(block.id) ?? "", name: asString(block.name) ?? "", arguments: JSON.stringify(block.input ?? {}) });
    } else if (block.type === "tool_result") {
      toolResults.push({ callId: asString(block.tool_use_id) ?? "", text: toolResultText(block.content ?? "") });
    }
  }
  const normalizedRole = role === "assistant" ? "assistant" : toolResults.length > 0 ? "tool" : "user";
  return message(normalizedRole, texts.join("\n"), { toolCalls, toolResults });
}

export function normalizeAnthropicRequest(body: Json): NormalizedRequest {
  const messages = asArray(body.messages).flatMap((value) => {
    const turn = asObject(value);
    return turn === undefined ? [] : [normalizeTurn(asString(turn.role), turn.content)];
  });
  return normalizedRequest({
    api: "anthropic",
    model: asString(body.model) ?? "",
    stream: body.stream === true,
    toolRefs: toolRefs(body.tools),
    messages,
    system: textOf(body.system),
    maxTokens: typeof body.max_tokens === "number" ? body.max_tokens : undefined,
  });
}

/** One text block, or one tool_use block per call (several calls: parallel tool use). */
function contentBlocks(reply: ResolvedReply): Json[] {
  if (reply.type === "text") return [{ type: "text", text: reply.text }];
  return toolCallsOf(reply).map((call) => ({ type: "tool_use", id: call.callId, name: call.tool.callName, input: call.arguments }));
}

function stopReason(reply: ResolvedReply): string {
  return reply.type === "text" ? "end_turn" : "tool_use";
}

function usage(ctx: EncodeContext, outputTokens: number): Json {
  return { input_tokens: ctx.inputTokens, output_tokens: outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

function messageObject(ctx: EncodeContext, content: Json[], stop: string | null, outputTokens: number): Json {
  return {
    id: `msg_${ctx.sequence}`,
    type: "message",
    role: "assistant",
    model: ctx.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: usage(ctx, outputTokens),
  };
}

export function encodeAnthropicJson(reply: ResolvedReply, ctx: EncodeContext): Json {
  return messageObject(ctx, contentBlocks(reply), stopReason(reply), ctx.outputTokens);
}

export function encodeAnthropicStream(reply: ResolvedReply, ctx: EncodeContext): SseEvent[] {
  const events: Json[] = [{ type: "message_start", message: messageObject(ctx, [], null, 1) }];
  if (reply.type === "text") {
    events.push({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    events.push({ type: "ping" });
    for (const text of textChunks(reply.text)) events.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });
    events.push({ type: "content_block_stop", index: 0 });
  } else {
    for (const [index, call] of toolCallsOf(reply).entries()) {
      events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: call.callId, name: call.tool.callName, input: {} } });
      if (index === 0) events.push({ type: "ping" });
      for (const partial_json of textChunks(JSON.stringify(call.arguments))) {
        events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } });
      }
      events.push({ type: "content_block_stop", index });
    }
  }
  events.push({ type: "message_delta", delta: { stop_reason: stopReason(reply), stop_sequence: null }, usage: { output_tokens: ctx.outputTokens } });
  events.push({ type: "message_stop" });
  return events.map((data) => ({ event: data.type as string, data }));
}
