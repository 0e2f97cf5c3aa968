/**
 * Gemini (`POST /v1beta/models/M:generateContent` and `:streamGenerateContent`,
 * SSE with `?alt=sse`, otherwise a JSON array). Function results arrive as
 * `functionResponse` parts in a user turn; such a turn normalizes to role "tool".
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

function toolRefs(tools: unknown): ToolRef[] {
  return asArray(tools).flatMap((tool) =>
    asArray(asObject(tool)?.functionDeclarations).flatMap((value): ToolRef[] => {
      const name = asString(asObject(value)?.name);
      return name === undefined ? [] : [{ name, callName: name, kind: "function" }];
    }),
  );
}

function normalizeTurn(role: string | undefined, parts: unknown): NormalizedMessage {
  const texts: string[] = [];
  const toolCalls: ToolCallRecord[] = [];
  const toolResults: ToolResultRecord[] = [];
  for (const value of asArray(parts)) {
    const part = asObject(value);
    if (part === undefined || part.thought === true) continue;
    const call = asObject(part.functionCall);
    const response = asObject(part.functionResponse);
    if (typeof part.text === "string") texts.push(part.text);
    else if (call !== undefined) {
      const name = asString(call.name) ?? "";
      toolCalls.push({ id: asString(call.id) ?? name, name, arguments: JSON.stringify(call.args ?? {}) });
    } else if (response !== undefined) {
      const name = asString(response.name) ?? "";
      toolResults.push({ callId: asString(response.id) ?? name, text: outputText(response.response) });
    }
  }
  const normalizedRole = role === "model" ? "assistant" : toolResults.length > 0 ? "tool" : "user";
  return message(normalizedRole, texts.join("\n"), { toolCalls, toolResults });
}

/** `model` comes from the path (`models/M:generateContent`), not the body. */
export function normalizeGeminiRequest(body: Json, model: string, stream: boolean): NormalizedRequest {
  const messages = asArray(body.contents).flatMap((value) => {
    const turn = asObject(value);
    return turn === undefined ? [] : [normalizeTurn(asString(turn.role), turn.parts)];
  });
  const config = asObject(body.generationConfig);
  return normalizedRequest({
    api: "gemini",
    model,
    stream,
    toolRefs: toolRefs(body.tools),
    messages,
    system: textOf(asObject(body.systemInstruction)?.parts ?? body.systemInstruction),
    maxTokens: typeof config?.maxOutputTokens === "number" ? config.maxOutputTokens : undefined,
  });
}

function replyParts(reply: ResolvedReply): Json[] {
  if (reply.type === "text") return [{ text: reply.text }];
  return toolCallsOf(reply).map((call) => ({ functionCall: { name: call.tool.callName, args: call.arguments } }));
}

export function encodeGeminiJson(reply: ResolvedReply, ctx: EncodeContext): Json {
  return {
    candidates: [{ content: { role: "model", parts: replyParts(reply) }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: ctx.inputTokens, candidatesTokenCount: ctx.outputTokens, totalTokenCount: ctx.inputTokens + ctx.outputTokens },
    modelVersion: ctx.model,
    responseId: `resp_${ctx.sequence}`,
  };
}

/** Text streams as several chunks; the last one carries finishReason and usage, as Gemini's does. */
export function encodeGeminiStream(reply: ResolvedReply, ctx: EncodeContext): SseEvent[] {
  const final = encodeGeminiJson(reply, ctx);
  if (reply.type !== "text") return [{ data: final }];
  const pieces = textChunks(reply.text);
  const head = pieces.slice(0, -1).map((text): SseEvent => ({
    data: { candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0 }], modelVersion: ctx.model, responseId: `resp_${ctx.sequence}` },
  }));
  const last = pieces.at(-1) ?? "";
  return [...head, { data: encodeGeminiJson({ type: "text", text: last }, ctx) }];
}
