/** OpenAI Chat Completions (`POST /v1/chat/completions`), streaming with `stream_options.include_usage` or not. */
import {
  type Json,
  type NormalizedMessage,
  type NormalizedRequest,
  type ResolvedReply,
  type ToolRef,
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

function toolRefs(tools: unknown): ToolRef[] {
  return asArray(tools).flatMap((value): ToolRef[] => {
    const tool = asObject(value);
    const name = asString(asObject(tool?.function)?.name) ?? asString(tool?.name);
    return name === undefined ? [] : [{ name, callName: name, kind: "function" }];
  });
}

export function normalizeChatRequest(body: Json): NormalizedRequest {
  const system: string[] = [];
  const messages: NormalizedMessage[] = [];
  for (const value of asArray(body.messages)) {
    const item = asObject(value);
    if (item === undefined) continue;
    const role = asString(item.role);
    if (role === "system" || role === "developer") {
      system.push(textOf(item.content));
    } else if (role === "tool") {
      const result = { callId: asString(item.tool_call_id) ?? "", text: outputText(item.content) };
      const last = messages.at(-1);
      if (last?.role === "tool") messages[messages.length - 1] = { ...last, toolResults: [...last.toolResults, result] };
      else messages.push(message("tool", "", { toolResults: [result] }));
    } else if (role === "assistant") {
      const toolCalls = asArray(item.tool_calls).map((call) => {
        const fn = asObject(asObject(call)?.function);
        return { id: asString(asObject(call)?.id) ?? "", name: asString(fn?.name) ?? "", arguments: asString(fn?.arguments) ?? "" };
      });
      messages.push(message("assistant", textOf(item.content), { toolCalls }));
    } else {
      messages.push(message("user", textOf(item.content)));
    }
  }
  return normalizedRequest({
    api: "chat",
    model: asString(body.model) ?? "",
    stream: body.stream === true,
    toolRefs: toolRefs(body.tools),
    messages,
    system: system.join("\n\n"),
    maxTokens: typeof body.max_tokens === "number" ? body.max_tokens : typeof body.max_completion_tokens === "number" ? body.max_completion_tokens : undefined,
  });
}

function usage(ctx: EncodeContext): Json {
  return { prompt_tokens: ctx.inputTokens, completion_tokens: ctx.outputTokens, total_tokens: ctx.inputTokens + ctx.outputTokens };
}

function finishReason(reply: ResolvedReply): string {
  return reply.type === "text" ? "stop" : "tool_calls";
}

export function encodeChatJson(reply: ResolvedReply, ctx: EncodeContext): Json {
  const assistant =
    reply.type === "text"
      ? { role: "assistant", content: reply.text }
      : {
          role: "assistant",
          content: null,
          tool_calls: toolCallsOf(reply).map((call) => ({
            id: call.callId,
            type: "function",
            function: { name: call.tool.callName, arguments: JSON.stringify(call.arguments) },
          })),
        };
  return {
    id: `chatcmpl-${ctx.sequence}`,
    object: "chat.completion",
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message: assistant, logprobs: null, finish_reason: finishReason(reply) }],
    usage: usage(ctx),
  };
}

export function encodeChatStream(reply: ResolvedReply, ctx: EncodeContext, includeUsage: boolean): SseEvent[] {
  const chunk = (choices: Json[], extra: Json = {}): SseEvent => ({
    data: { id: `chatcmpl-${ctx.sequence}`, object: "chat.completion.chunk", created: ctx.created, model: ctx.model, choices, ...extra },
  });
  const delta = (value: Json, finish: string | null = null) => ({ index: 0, delta: value, logprobs: null, finish_reason: finish });
  const events: SseEvent[] = [];
  if (reply.type === "text") {
    events.push(chunk([delta({ role: "assistant", content: "" })]));
    for (const piece of textChunks(reply.text)) events.push(chunk([delta({ content: piece })]));
  } else {
    for (const [index, call] of toolCallsOf(reply).entries()) {
      const head = { index, id: call.callId, type: "function", function: { name: call.tool.callName, arguments: "" } };
      events.push(chunk([delta(index === 0 ? { role: "assistant", content: null, tool_calls: [head] } : { tool_calls: [head] })]));
      for (const piece of textChunks(JSON.stringify(call.arguments))) {
        events.push(chunk([delta({ tool_calls: [{ index, function: { arguments: piece } }] })]));
      }
    }
  }
  events.push(chunk([delta({}, finishReason(reply))]));
  if (includeUsage) events.push(chunk([], { usage: usage(ctx) }));
  events.push({ data: "[DONE]" });
  return events;
}
