/**
 * OpenAI Responses API (`POST /v1/responses`), as codex 0.171 speaks it.
 * Codex groups MCP tools as `{type:"namespace", name:"mcp__NAME", tools:[...]}`;
 * a call to one must carry `namespace` and the tool's own name, or codex
 * answers "unsupported call".
 */
import {
  type Json,
  type NormalizedMessage,
  type NormalizedRequest,
  type ResolvedReply,
  type ResolvedToolCall,
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
    const name = asString(tool?.name);
    if (tool === undefined || name === undefined) return [];
    if (tool.type === "namespace") {
      return asArray(tool.tools).flatMap((inner): ToolRef[] => {
        const own = asString(asObject(inner)?.name);
        if (own === undefined) return [];
        const full = own.startsWith(name) ? own : `${name}${name.endsWith("__") ? "" : "__"}${own}`;
        return [{ name: full, callName: own, namespace: name, kind: asObject(inner)?.type === "custom" ? "custom" : "function" }];
      });
    }
    return [{ name, callName: name, kind: tool.type === "custom" ? "custom" : "function" }];
  });
}

function callName(item: Json): string {
  const name = asString(item.name) ?? "";
  const namespace = asString(item.namespace);
  return namespace === undefined ? name : `${namespace}${namespace.endsWith("__") ? "" : "__"}${name}`;
}

/** Consecutive tool calls join the assistant turn before them; consecutive outputs form one tool turn. */
function pushItem(messages: NormalizedMessage[], next: NormalizedMessage): void {
  const last = messages.at(-1);
  const joinCalls = next.role === "assistant" && next.text === "" && last?.role === "assistant";
  const joinResults = next.role === "tool" && last?.role === "tool";
  if (last !== undefined && (joinCalls || joinResults)) {
    messages[messages.length - 1] = {
      ...last,
      toolCalls: [...last.toolCalls, ...next.toolCalls],
      toolResults: [...last.toolResults, ...next.toolResults],
    };
    return;
  }
  messages.push(next);
}

export function normalizeResponsesRequest(body: Json): NormalizedRequest {
  const system: string[] = [];
  const instructions = asString(body.instructions);
  if (instructions !== undefined && instructions !== "") system.push(instructions);
  const messages: NormalizedMessage[] = [];
  const input = typeof body.input === "string" ? [{ type: "message", role: "user", content: body.input }] : asArray(body.input);
  for (const value of input) {
    const item = asObject(value);
    if (item === undefined) continue;
    const type = asString(item.type) ?? (item.role === undefined ? undefined : "message");
    if (type === "message") {
      const role = asString(item.role);
      const text = textOf(item.content);
      if (role === "system" || role === "developer") system.push(text);
      else pushItem(messages, message(role === "assistant" ? "assistant" : "user", text));
    } else if (type === "function_call" || type === "custom_tool_call") {
      const args = type === "function_call" ? (asString(item.arguments) ?? "") : (asString(item.input) ?? "");
      pushItem(messages, message("assistant", "", { toolCalls: [{ id: asString(item.call_id) ?? "", name: callName(item), arguments: args }] }));
    } else if (type === "function_call_output" || type === "custom_tool_call_output") {
      pushItem(messages, message("tool", "", { toolResults: [{ callId: asString(item.call_id) ?? "", text: outputText(item.output) }] }));
    }
  }
  return normalizedRequest({
    api: "responses",
    model: asString(body.model) ?? "",
    stream: body.stream === true,
    toolRefs: toolRefs(body.tools),
    messages,
    system: system.join("\n\n"),
    maxTokens: typeof body.max_output_tokens === "number" ? body.max_output_tokens : undefined,
  });
}

/** A finished function or custom tool call item; `id` is unique within the response. */
function callItem(call: ResolvedToolCall, id: string): Json {
  const base = {
    id,
    status: "completed",
    call_id: call.callId,
    name: call.tool.callName,
    ...(call.tool.namespace === undefined ? {} : { namespace: call.tool.namespace }),
  };
  if (call.tool.kind === "custom") {
    const input = typeof call.arguments.input === "string" ? call.arguments.input : JSON.stringify(call.arguments);
    return { type: "custom_tool_call", ...base, input };
  }
  return { type: "function_call", ...base, arguments: JSON.stringify(call.arguments) };
}

/** The finished output items, as `response.output_item.done` and `response.completed` carry them: one message, or one item per tool call. */
export function responsesOutputItems(reply: ResolvedReply, ctx: EncodeContext): Json[] {
  if (reply.type === "text") {
    return [
      {
        id: `msg_${ctx.sequence}`,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: reply.text, annotations: [] }],
      },
    ];
  }
  const calls = toolCallsOf(reply);
  return calls.map((call, index) => callItem(call, calls.length === 1 ? `fc_${ctx.sequence}` : `fc_${ctx.sequence}_${index + 1}`));
}

function responseObject(ctx: EncodeContext, status: "in_progress" | "completed", output: Json[]): Json {
  const outputTokens = status === "completed" ? ctx.outputTokens : 0;
  return {
    id: `resp_${ctx.sequence}`,
    object: "response",
    created_at: ctx.created,
    status,
    model: ctx.model,
    output,
    parallel_tool_calls: output.length > 1,
    tool_choice: "auto",
    tools: [],
    usage:
      status === "completed"
        ? {
            input_tokens: ctx.inputTokens,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: outputTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: ctx.inputTokens + outputTokens,
          }
        : null,
  };
}

export function encodeResponsesJson(reply: ResolvedReply, ctx: EncodeContext): Json {
  return responseObject(ctx, "completed", responsesOutputItems(reply, ctx));
}

/** Events that stream one output item at `output_index`, from `output_item.added` to `output_item.done`. */
function itemEvents(done: Json, outputIndex: number): Json[] {
  const at = { output_index: outputIndex, item_id: done.id as string };
  const events: Json[] = [];
  if (done.type === "message") {
    const text = ((done.content as Json[])[0]?.text as string | undefined) ?? "";
    events.push({ type: "response.output_item.added", output_index: outputIndex, item: { ...done, status: "in_progress", content: [] } });
    const part = { type: "output_text", text: "", annotations: [] };
    events.push({ type: "response.content_part.added", ...at, content_index: 0, part });
    for (const delta of textChunks(text)) events.push({ type: "response.output_text.delta", ...at, content_index: 0, delta });
    events.push({ type: "response.output_text.done", ...at, content_index: 0, text });
    events.push({ type: "response.content_part.done", ...at, content_index: 0, part: { ...part, text } });
  } else if (done.type === "function_call") {
    events.push({ type: "response.output_item.added", output_index: outputIndex, item: { ...done, status: "in_progress", arguments: "" } });
    const args = done.arguments as string;
    for (const delta of textChunks(args)) events.push({ type: "response.function_call_arguments.delta", ...at, delta });
    events.push({ type: "response.function_call_arguments.done", ...at, arguments: args });
  } else {
    events.push({ type: "response.output_item.added", output_index: outputIndex, item: { ...done, status: "in_progress", input: "" } });
    const input = done.input as string;
    for (const delta of textChunks(input)) events.push({ type: "response.custom_tool_call_input.delta", ...at, delta });
    events.push({ type: "response.custom_tool_call_input.done", ...at, input });
  }
  events.push({ type: "response.output_item.done", output_index: outputIndex, item: done });
  return events;
}

/** The full event sequence; some clients (pi) print nothing from a two-event stream. Several tool calls stream one after another. */
export function encodeResponsesStream(reply: ResolvedReply, ctx: EncodeContext): SseEvent[] {
  const items = responsesOutputItems(reply, ctx);
  const events: Json[] = [
    { type: "response.created", response: responseObject(ctx, "in_progress", []) },
    { type: "response.in_progress", response: responseObject(ctx, "in_progress", []) },
    ...items.flatMap((item, index) => itemEvents(item, index)),
    { type: "response.completed", response: responseObject(ctx, "completed", items) },
  ];
  return events.map((data, index) => ({ event: data.type as string, data: { ...data, sequence_number: index } }));
}
