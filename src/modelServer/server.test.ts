import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startModelServerCommand } from "../cli/modelServerCommand.js";
import type { ModelRule } from "./rules.js";
import { type ModelServer, startModelServer } from "./server.js";
import { parseSse } from "./sse.js";

/** The value at a path of property names and indexes, or undefined. */
function pick(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");

const delegateRules: ModelRule[] = [
  { when: { toolAvailable: "delegate_task", lastIsToolResult: false }, reply: { toolCall: { tool: "delegate_task", arguments: { prompt: "{{lastUser}}" } } } },
  { when: { lastIsToolResult: true }, reply: { text: "tool said: {{lastToolResult}}" } },
  { reply: { text: "hello from the model server" } },
];

let server: ModelServer;
beforeEach(async () => {
  server = await startModelServer({ rules: delegateRules });
});
afterEach(() => server.close());

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

async function sse(path: string, body: unknown): Promise<{ event: string | undefined; data: unknown }[]> {
  const response = await post(path, body);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  return parseSse(await response.text());
}

describe("OpenAI Responses", () => {
  it("streams text as the full event sequence", async () => {
    const events = await sse("/v1/responses", { model: "gpt-5", stream: true, input: "say hi" });
    expect(events.map((e) => e.event)).toEqual(events.map((e) => pick(e.data, "type")));
    expect(events[0]?.data).toMatchObject({ type: "response.created", response: { id: "resp_1", status: "in_progress", model: "gpt-5" } });
    const text = events.filter((e) => pick(e.data, "type") === "response.output_text.delta").map((e) => str(pick(e.data, "delta"))).join("");
    expect(text).toBe("hello from the model server");
    expect(events.at(-1)?.data).toMatchObject({ type: "response.completed", response: { status: "completed", output: [{ type: "message", content: [{ type: "output_text", text }] }] } });
  });

  it("calls a codex namespace tool, then quotes its output (non-streaming)", async () => {
    const tools = [{ type: "namespace", name: "mcp__t3-code", tools: [{ type: "function", name: "delegate_task" }] }];
    const first: unknown = await (await post("/v1/responses", { model: "m", tools, input: "fan out" })).json();
    expect(pick(first, "output")).toEqual([
      { id: "fc_1", type: "function_call", status: "completed", call_id: "call_1", name: "delegate_task", namespace: "mcp__t3-code", arguments: '{"prompt":"fan out"}' },
    ]);
    const input = ["fan out", pick(first, "output", 0), { type: "function_call_output", call_id: "call_1", output: "thread t1 started" }].map((item) =>
      typeof item === "string" ? { role: "user", content: item } : item,
    );
    const events = await sse("/v1/responses", { model: "m", stream: true, tools, input });
    const done = events.find((e) => pick(e.data, "type") === "response.output_item.done");
    expect(pick(done?.data, "item", "content", 0, "text")).toBe("tool said: thread t1 started");
  });
});

describe("Chat Completions", () => {
  it("streams text with stream_options usage and [DONE]", async () => {
    const events = await sse("/v1/chat/completions", { model: "m", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] });
    const chunks = events.map((e) => e.data).filter((d) => d !== "[DONE]");
    expect(chunks.map((c) => str(pick(c, "choices", 0, "delta", "content"))).join("")).toBe("hello from the model server");
    expect(pick(chunks.at(-2), "choices", 0, "finish_reason")).toBe("stop");
    expect(chunks.at(-1)).toMatchObject({ object: "chat.completion.chunk", choices: [], usage: { total_tokens: expect.any(Number) } });
    expect(events.at(-1)?.data).toBe("[DONE]");
  });

  it("streams tool_calls deltas and answers non-streaming", async () => {
    const body = { model: "m", tools: [{ type: "function", function: { name: "mcp__t3__delegate_task" } }], messages: [{ role: "user", content: "go" }] };
    const events = await sse("/v1/chat/completions", { ...body, stream: true });
    const calls = events.map((e) => pick(e.data, "choices", 0, "delta", "tool_calls", 0)).filter((call) => call !== undefined);
    expect(calls[0]).toMatchObject({ index: 0, id: "call_1", type: "function", function: { name: "mcp__t3__delegate_task" } });
    expect(JSON.parse(calls.map((c) => str(pick(c, "function", "arguments"))).join(""))).toEqual({ prompt: "go" });
    const json: unknown = await (await post("/v1/chat/completions", body)).json();
    expect(pick(json, "choices", 0)).toMatchObject({ finish_reason: "tool_calls", message: { tool_calls: [{ id: "call_2", function: { name: "mcp__t3__delegate_task" } }] } });
  });
});

describe("Anthropic Messages", () => {
  it("streams text on /v1/messages?beta=true and answers the probes and count_tokens", async () => {
    const events = await sse("/v1/messages?beta=true", { model: "claude-sonnet-4-5", stream: true, max_tokens: 100, tools: [{ name: "Bash" }], messages: [{ role: "user", content: "hi" }] });
    expect(events.map((e) => e.event)).toEqual(["message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    expect(events.filter((e) => e.event === "content_block_delta").map((e) => str(pick(e.data, "delta", "text"))).join("")).toBe("hello from the model server");
    expect(events[6]?.data).toMatchObject({ delta: { stop_reason: "end_turn" } });
    expect((await fetch(server.url, { method: "HEAD" })).status).toBe(200);
    expect((await fetch(`${server.url}/api/hello`, { method: "HEAD" })).status).toBe(200);
    expect(await (await fetch(server.url)).text()).toBe("ok");
    const count: unknown = await (await post("/v1/messages/count_tokens", { model: "m", messages: [{ role: "user", content: "hi" }] })).json();
    expect(pick(count, "input_tokens")).toEqual(expect.any(Number));
    expect(server.requests.map((r) => r.api)).toEqual(["anthropic", "probe", "probe", "probe", "count_tokens"]);
    expect(server.requests[0]?.query).toBe("?beta=true");
  });

  it("answers tool_use non-streaming and a title request as a side request", async () => {
    const body = { model: "m", max_tokens: 100, tools: [{ name: "mcp__t3-code__delegate_task", input_schema: {} }], messages: [{ role: "user", content: "go" }] };
    const json: unknown = await (await post("/v1/messages", body)).json();
    expect(json).toMatchObject({ type: "message", stop_reason: "tool_use", content: [{ type: "tool_use", id: "call_1", name: "mcp__t3-code__delegate_task", input: { prompt: "go" } }] });
    const title: unknown = await (await post("/v1/messages", { model: "m", max_tokens: 100, system: "Return JSON with a single \"title\" field.", messages: [{ role: "user", content: "<session>go</session>" }] })).json();
    expect(JSON.parse(str(pick(title, "content", 0, "text")))).toEqual({ title: "Scripted session" });
    expect(server.requests[1]).toMatchObject({ side: true });
  });
});

describe("Gemini", () => {
  const tools = [{ functionDeclarations: [{ name: "mcp_t3-code_delegate_task" }] }];

  it("answers generateContent and streams functionCall parts with alt=sse", async () => {
    const plain: unknown = await (await post("/v1beta/models/gemini-2.5-flash:generateContent", { contents: [{ role: "user", parts: [{ text: "hi" }] }] })).json();
    expect(pick(plain, "candidates", 0)).toMatchObject({ content: { role: "model", parts: [{ text: "hello from the model server" }] }, finishReason: "STOP" });
    const events = await sse("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", { tools, contents: [{ role: "user", parts: [{ text: "go" }] }] });
    expect(pick(events[0]?.data, "candidates", 0, "content", "parts")).toEqual([{ functionCall: { name: "mcp_t3-code_delegate_task", args: { prompt: "go" } } }]);
    expect(server.requests[1]?.normalized).toMatchObject({ api: "gemini", model: "gemini-2.5-flash", stream: true });
  });

  it("streams text in chunks and answers a JSON array without alt=sse", async () => {
    const contents = [{ role: "user", parts: [{ text: "hi" }] }];
    const events = await sse("/v1beta/models/m:streamGenerateContent?alt=sse", { contents });
    expect(events.map((e) => str(pick(e.data, "candidates", 0, "content", "parts", 0, "text"))).join("")).toBe("hello from the model server");
    expect(pick(events.at(-1)?.data, "candidates", 0, "finishReason")).toBe("STOP");
    const array = (await (await post("/v1beta/models/m:streamGenerateContent", { contents })).json()) as unknown[];
    expect(array.length).toBeGreaterThan(1);
  });
});

describe("the server", () => {
  it("lists models in OpenAI and Gemini shapes", async () => {
    const openai: unknown = await (await fetch(`${server.url}/v1/models`)).json();
    expect(openai).toMatchObject({ object: "list", data: expect.arrayContaining([expect.objectContaining({ id: "scripted", object: "model" })]) });
    expect(await (await fetch(`${server.url}/v1/models/claude-sonnet-4-5`)).json()).toMatchObject({ id: "claude-sonnet-4-5", type: "model" });
    const gemini: unknown = await (await fetch(`${server.url}/v1beta/models`)).json();
    expect(pick(gemini, "models", 0)).toMatchObject({ name: "models/scripted", supportedGenerationMethods: expect.arrayContaining(["generateContent"]) });
  });

  it("logs every request without credentials, and refuses unknown paths and bad bodies", async () => {
    await post("/v1/responses", { model: "m", input: "hi" }, { authorization: "Bearer secret", "x-api-key": "secret", "x-trace": "t1" });
    expect((await post("/v2/nothing", {})).status).toBe(404);
    const bad = await fetch(`${server.url}/v1/messages`, { method: "POST", body: "not json" });
    expect(bad.status).toBe(400);
    const [first, second, third] = server.requests;
    expect(first).toMatchObject({ method: "POST", path: "/v1/responses", api: "responses", status: 200, body: { input: "hi" }, reply: { type: "text" }, ruleIndex: 2 });
    expect(first?.headers["x-trace"]).toBe("t1");
    expect(first?.headers).not.toHaveProperty("authorization");
    expect(first?.headers).not.toHaveProperty("x-api-key");
    expect(Date.parse(first?.time ?? "")).not.toBeNaN();
    expect(second).toMatchObject({ api: "unknown", status: 404 });
    expect(third).toMatchObject({ api: "anthropic", status: 400, body: "not json" });
  });

  it("replaces rules with setRules and answers OK when none match", async () => {
    server.setRules([{ when: { lastUserIncludes: "magic" }, reply: { text: "matched" }, times: 1 }]);
    const text = async (input: string) => pick(await (await post("/v1/responses", { model: "m", input })).json(), "output", 0, "content", 0, "text");
    expect(await text("magic word")).toBe("matched");
    expect(await text("magic word")).toBe("OK");
  });
});

describe("loom model-server", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "loom-model-server-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("starts from a script and prints its url", async () => {
    const script = join(dir, "script.json");
    writeFileSync(script, JSON.stringify({ rules: [{ reply: { text: "from the script" } }] }));
    const out: string[] = [];
    const err: string[] = [];
    const started = await startModelServerCommand(["--port", "0", "--script", script], { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
    try {
      const { url } = JSON.parse(out.join("")) as { url: string };
      expect(url).toBe(started?.url);
      const reply: unknown = await (await fetch(`${url}/v1/responses`, { method: "POST", body: JSON.stringify({ model: "m", input: "hi" }) })).json();
      expect(pick(reply, "output", 0, "content", 0, "text")).toBe("from the script");
      expect(err.join("")).toContain("POST /v1/responses → 200 rule 0");
    } finally {
      await started?.close();
    }
  });

  it("refuses a bad port or script with a usage error", async () => {
    const quiet = { stdout: () => undefined, stderr: () => undefined };
    await expect(startModelServerCommand(["--port", "x"], quiet)).rejects.toThrow(/--port must be an integer/);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ rules: [{ reply: {} }] }));
    await expect(startModelServerCommand(["--script", bad], quiet)).rejects.toMatchObject({ code: "usage", message: expect.stringContaining("rules.0.reply") });
    await expect(startModelServerCommand(["--script", join(dir, "missing.json")], quiet)).rejects.toMatchObject({ code: "usage" });
    await expect(startModelServerCommand(["--help"], quiet)).resolves.toBeUndefined();
  });
});
