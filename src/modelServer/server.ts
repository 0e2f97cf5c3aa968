/**
 * A scripted stand-in for the model APIs that real agent CLIs call (codex,
 * claude, gemini, opencode, pi). Every request is logged; each model request is
 * normalized and answered by the first matching rule (see rules.ts).
 */
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { encodeAnthropicJson, encodeAnthropicStream, normalizeAnthropicRequest } from "./apis/anthropic.js";
import { encodeChatJson, encodeChatStream, normalizeChatRequest } from "./apis/chatCompletions.js";
import type { EncodeContext } from "./apis/encodeContext.js";
import { faultBody, faultHeaders } from "./faults.js";
import { encodeGeminiJson, encodeGeminiStream, normalizeGeminiRequest } from "./apis/gemini.js";
import { encodeResponsesJson, encodeResponsesStream, normalizeResponsesRequest } from "./apis/responses.js";
import { geminiModelList, modelEntry, openAiModelList } from "./modelLists.js";
import { type Json, type ModelApi, type NormalizedRequest, type ResolvedReply, asObject, toolCallsOf } from "./normalized.js";
import { type ModelRule, RuleBook } from "./rules.js";
import { type SseEvent, estimateTokens, formatSse } from "./sse.js";

/** What a logged request was: a model API call, or one of the side endpoints. */
export type LoggedApi = ModelApi | "count_tokens" | "models" | "probe" | "unknown";

export interface LoggedRequest {
  readonly method: string;
  /** Path without the query string: "/v1/messages". */
  readonly path: string;
  /** The query string with its "?", or "": Claude sends "?beta=true". */
  readonly query: string;
  readonly api: LoggedApi;
  /** Parsed JSON body; the raw text when it is not JSON; undefined when empty. */
  readonly body: unknown;
  /** Lower-case names; authorization, x-api-key and x-goog-api-key are left out. */
  readonly headers: Readonly<Record<string, string>>;
  /** ISO 8601 arrival time. */
  readonly time: string;
  readonly status: number;
  /** For model API calls: the request as rules saw it, and the answer. */
  readonly normalized?: NormalizedRequest;
  readonly reply?: ResolvedReply;
  /** Index of the rule that answered; absent for the default "OK" and side replies. */
  readonly ruleIndex?: number;
  /** A client bookkeeping request (title, topic, quota) answered without consulting rules. */
  readonly side?: boolean;
}

export interface ModelServerOptions {
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  readonly host?: "127.0.0.1";
  readonly rules?: readonly ModelRule[];
  /** One line per request, for debugging. */
  readonly log?: (line: string) => void;
}

export interface ModelServer {
  /** http://127.0.0.1:PORT, without a trailing slash or /v1. */
  readonly url: string;
  readonly requests: readonly LoggedRequest[];
  /** Replace the rules; their `times` counts start again. Tool-call ids keep counting. */
  setRules(rules: readonly ModelRule[]): void;
  close(): Promise<void>;
}

const HIDDEN_HEADERS = new Set(["authorization", "x-api-key", "x-goog-api-key"]);

type Route =
  | { readonly kind: "model"; readonly api: ModelApi; readonly geminiModel?: string; readonly geminiStream?: boolean }
  | { readonly kind: "openai_model"; readonly id: string }
  | { readonly kind: "count_tokens" | "openai_models" | "gemini_models" | "probe" | "unknown" };

function route(method: string, path: string): Route {
  // Claude probes `HEAD /api/hello` (and `HEAD /`) before its first request.
  if ((method === "HEAD" || method === "GET") && (path === "/" || path === "/api/hello")) return { kind: "probe" };
  if (method === "GET" && /^(\/v1)?\/models$/.test(path)) return { kind: "openai_models" };
  const single = method === "GET" ? /^(?:\/v1)?\/models\/([^/]+)$/.exec(path) : null;
  if (single?.[1] !== undefined) return { kind: "openai_model", id: decodeURIComponent(single[1]) };
  if (method === "GET" && /^\/v1(beta|alpha)?\/models$/.test(path)) return { kind: "gemini_models" };
  if (method !== "POST") return { kind: "unknown" };
  if (/^(\/v1)?\/responses$/.test(path)) return { kind: "model", api: "responses" };
  if (/^(\/v1)?\/chat\/completions$/.test(path)) return { kind: "model", api: "chat" };
  if (/^(\/v1)?\/messages$/.test(path)) return { kind: "model", api: "anthropic" };
  if (/^(\/v1)?\/messages\/count_tokens$/.test(path)) return { kind: "count_tokens" };
  const gemini = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(path);
  if (gemini?.[1] !== undefined) {
    return { kind: "model", api: "gemini", geminiModel: decodeURIComponent(gemini[1]), geminiStream: gemini[2] === "streamGenerateContent" };
  }
  return { kind: "unknown" };
}

function loggedApi(route: Route): LoggedApi {
  switch (route.kind) {
    case "model":
      return route.api;
    case "count_tokens":
      return "count_tokens";
    case "openai_models":
    case "openai_model":
    case "gemini_models":
      return "models";
    case "probe":
      return "probe";
    case "unknown":
      return "unknown";
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function visibleHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HIDDEN_HEADERS.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function sendSse(res: ServerResponse, events: readonly SseEvent[]): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.end(formatSse(events));
}

function normalize(route: Extract<Route, { kind: "model" }>, body: Json, query: URLSearchParams): NormalizedRequest {
  switch (route.api) {
    case "responses":
      return normalizeResponsesRequest(body);
    case "chat":
      return normalizeChatRequest(body);
    case "anthropic":
      return normalizeAnthropicRequest(body);
    case "gemini":
      return normalizeGeminiRequest(body, route.geminiModel ?? "", route.geminiStream === true && query.get("alt") === "sse");
  }
}

/** Writes the answer in the request's API and streaming mode. */
function sendReply(res: ServerResponse, route: Extract<Route, { kind: "model" }>, request: NormalizedRequest, body: Json, reply: ResolvedReply, ctx: EncodeContext): void {
  switch (route.api) {
    case "responses":
      return request.stream ? sendSse(res, encodeResponsesStream(reply, ctx)) : sendJson(res, 200, encodeResponsesJson(reply, ctx));
    case "chat": {
      const includeUsage = asObject(body.stream_options)?.include_usage === true;
      return request.stream ? sendSse(res, encodeChatStream(reply, ctx, includeUsage)) : sendJson(res, 200, encodeChatJson(reply, ctx));
    }
    case "anthropic":
      return request.stream ? sendSse(res, encodeAnthropicStream(reply, ctx)) : sendJson(res, 200, encodeAnthropicJson(reply, ctx));
    case "gemini":
      if (request.stream) return sendSse(res, encodeGeminiStream(reply, ctx));
      // streamGenerateContent without alt=sse answers a JSON array of chunks.
      return sendJson(res, 200, route.geminiStream === true ? encodeGeminiStream(reply, ctx).map((event) => event.data) : encodeGeminiJson(reply, ctx));
  }
}

function describeReply(reply: ResolvedReply): string {
  if (reply.type === "text") return `text ${JSON.stringify(reply.text.slice(0, 60))}`;
  return toolCallsOf(reply)
    .map((call) => `call ${call.tool.name} (${call.callId})`)
    .join(", ");
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const rules = new RuleBook(options.rules ?? []);
  const requests: LoggedRequest[] = [];
  const log = options.log ?? (() => undefined);
  let sequence = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const method = req.method ?? "GET";
    const current = route(method, url.pathname);
    const text = await readBody(req);
    const body = parseBody(text);
    const entry = {
      method,
      path: url.pathname,
      query: url.search,
      api: loggedApi(current),
      body,
      headers: visibleHeaders(req),
      time: new Date().toISOString(),
    };
    const record = (status: number, extra: Partial<LoggedRequest> = {}, note = "") => {
      requests.push({ ...entry, status, ...extra });
      log(`${method} ${url.pathname}${url.search} → ${status}${note === "" ? "" : ` ${note}`}`);
    };

    switch (current.kind) {
      case "probe":
        record(200);
        res.writeHead(200, { "content-type": "text/plain" });
        return void res.end(method === "HEAD" ? undefined : "ok");
      case "openai_models":
        record(200);
        return sendJson(res, 200, openAiModelList());
      case "openai_model":
        record(200);
        return sendJson(res, 200, modelEntry(current.id));
      case "gemini_models":
        record(200);
        return sendJson(res, 200, geminiModelList());
      case "count_tokens":
        record(200);
        return sendJson(res, 200, { input_tokens: estimateTokens(asObject(body)?.messages) });
      case "unknown":
        record(404);
        return sendJson(res, 404, { error: { type: "not_found", message: `the model server has no ${method} ${url.pathname}` } });
      case "model":
        break;
    }
    const json = asObject(body);
    if (json === undefined) {
      record(400, {}, "body is not a JSON object");
      return sendJson(res, 400, { error: { type: "invalid_request_error", message: "body must be a JSON object" } });
    }
    const normalized = normalize(current, json, url.searchParams);
    const answer = rules.answer(normalized);
    if (answer.fault !== null) {
      record(answer.fault.status, { normalized, ruleIndex: answer.ruleIndex }, `rule ${answer.ruleIndex}: fault ${answer.fault.status}`);
      res.writeHead(answer.fault.status, faultHeaders(answer.fault));
      return void res.end(JSON.stringify(faultBody(normalized.api, answer.fault)));
    }
    sequence += 1;
    const ctx: EncodeContext = {
      sequence,
      model: normalized.model === "" ? "scripted" : normalized.model,
      created: Math.floor(Date.now() / 1000),
      inputTokens: estimateTokens(text),
      outputTokens: estimateTokens(answer.reply.type === "text" ? answer.reply.text : toolCallsOf(answer.reply).map((call) => call.arguments)),
    };
    const extra: Partial<LoggedRequest> = { normalized, reply: answer.reply, side: answer.side, ...(answer.ruleIndex === undefined ? {} : { ruleIndex: answer.ruleIndex }) };
    const rule = answer.side ? "side request" : answer.ruleIndex === undefined ? "no rule" : `rule ${answer.ruleIndex}`;
    record(200, extra, `${rule}: ${describeReply(answer.reply)}`);
    sendReply(res, current, normalized, json, answer.reply, ctx);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      log(`${req.method ?? "?"} ${req.url ?? "?"} failed: ${message}`);
      if (!res.headersSent) sendJson(res, 500, { error: { type: "server_error", message } });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setRules: (next) => rules.replace(next),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      }),
  };
}
