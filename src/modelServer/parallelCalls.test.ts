/** Several tool calls in one reply (`reply: { toolCalls: [...] }`), in every API the server speaks. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ToolRef, message, normalizedRequest } from "./normalized.js";
import { RuleScriptError, parseRuleScript } from "./ruleScript.js";
import { type ModelRule, RuleBook } from "./rules.js";
import { type ModelServer, startModelServer } from "./server.js";
import { parseSse } from "./sse.js";

const fanOut: ModelRule[] = [
  {
    when: { toolAvailable: "Agent", lastIsToolResult: false },
    reply: {
      toolCalls: [
        { tool: "Agent", arguments: { prompt: "task one of {{lastUser}}" } },
        { tool: "Agent", arguments: { prompt: "task two" } },
        { tool: "Read", arguments: { path: "a.txt" } },
      ],
    },
    times: 1,
  },
  { when: { lastIsToolResult: true }, reply: { text: "all done" } },
];

const plain = (name: string): ToolRef => ({ name, callName: name, kind: "function" });

function pick(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

describe("RuleBook with several tool calls", () => {
  const request = (tools: ToolRef[]) =>
    normalizedRequest({ api: "anthropic", model: "m", stream: false, toolRefs: tools, messages: [message("user", "go")], system: "", maxTokens: undefined });

  it("resolves every call with its own id and keeps numbering across replies", () => {
    const book = new RuleBook([...fanOut.slice(0, 1), { when: { toolAvailable: "Read" }, reply: { toolCall: { tool: "Read", arguments: {} } } }]);
    const first = book.answer(request([plain("Agent"), plain("Read")]));
    expect(first.reply).toMatchObject({
      type: "toolCalls",
      calls: [
        { callId: "call_1", tool: { name: "Agent" }, arguments: { prompt: "task one of go" } },
        { callId: "call_2", tool: { name: "Agent" }, arguments: { prompt: "task two" } },
        { callId: "call_3", tool: { name: "Read" }, arguments: { path: "a.txt" } },
      ],
    });
    expect(book.answer(request([plain("Agent"), plain("Read")])).reply).toMatchObject({ type: "toolCall", callId: "call_4" });
  });

  it("skips the rule when one of its tools is not offered", () => {
    const book = new RuleBook(fanOut);
    expect(book.answer(request([plain("Agent")])).reply).toEqual({ type: "text", text: "OK" });
  });

  it("refuses an empty list, in code and in a script", () => {
    expect(() => new RuleBook([{ reply: { toolCalls: [] } }])).toThrow(/rules\.0\.reply\.toolCalls/);
    expect(() => parseRuleScript({ rules: [{ reply: { toolCalls: [] } }] })).toThrow(RuleScriptError);
    expect(parseRuleScript({ rules: fanOut })).toHaveLength(2);
  });
});

let server: ModelServer;
beforeEach(async () => {
  server = await startModelServer({ rules: fanOut });
});
afterEach(() => server.close());

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

async function sse(path: string, body: unknown): Promise<unknown[]> {
  const response = await post(path, body);
  expect(response.status).toBe(200);
  return parseSse(await response.text()).map((event) => event.data);
}

describe("the server answers several tool calls in one reply", () => {
  it("Anthropic: one tool_use block per call, streamed block by block, stop_reason tool_use", async () => {
    const tools = [{ name: "Agent" }, { name: "Read" }];
    const messages = [{ role: "user", content: "x" }];
    const json: unknown = await (await post("/v1/messages", { model: "m", tools, messages })).json();
    expect(pick(json, "content")).toEqual([
      { type: "tool_use", id: "call_1", name: "Agent", input: { prompt: "task one of x" } },
      { type: "tool_use", id: "call_2", name: "Agent", input: { prompt: "task two" } },
      { type: "tool_use", id: "call_3", name: "Read", input: { path: "a.txt" } },
    ]);
    expect(pick(json, "stop_reason")).toBe("tool_use");

    server.setRules(fanOut);
    const events = await sse("/v1/messages?beta=true", { model: "m", stream: true, tools, messages });
    const starts = events.filter((data) => pick(data, "type") === "content_block_start");
    expect(starts.map((data) => [pick(data, "index"), pick(data, "content_block", "id")])).toEqual([
      [0, "call_4"],
      [1, "call_5"],
      [2, "call_6"],
    ]);
    const input = (index: number) =>
      events
        .filter((data) => pick(data, "type") === "content_block_delta" && pick(data, "index") === index)
        .map((data) => String(pick(data, "delta", "partial_json")))
        .join("");
    expect(JSON.parse(input(2))).toEqual({ path: "a.txt" });
    expect(events.filter((data) => pick(data, "type") === "content_block_stop").map((data) => pick(data, "index"))).toEqual([0, 1, 2]);
    expect(events.find((data) => pick(data, "type") === "message_delta")).toMatchObject({ delta: { stop_reason: "tool_use" } });
  });

  it("Responses: one function_call item per call at its own output_index, all in response.completed", async () => {
    const tools = [{ type: "function", name: "Agent" }, { type: "namespace", name: "mcp__t", tools: [{ type: "function", name: "Read" }] }];
    const events = await sse("/v1/responses", { model: "m", stream: true, tools, input: "x" });
    const done = events.filter((data) => pick(data, "type") === "response.output_item.done");
    expect(done.map((data) => [pick(data, "output_index"), pick(data, "item", "call_id"), pick(data, "item", "name")])).toEqual([
      [0, "call_1", "Agent"],
      [1, "call_2", "Agent"],
      [2, "call_3", "Read"],
    ]);
    expect(pick(done[2], "item", "namespace")).toBe("mcp__t");
    const ids = done.map((data) => pick(data, "item", "id"));
    expect(new Set(ids).size).toBe(3);
    const completed = events.at(-1);
    expect(pick(completed, "type")).toBe("response.completed");
    expect((pick(completed, "response", "output") as unknown[]).length).toBe(3);
    expect(pick(completed, "response", "parallel_tool_calls")).toBe(true);
    const seq = events.map((data) => pick(data, "sequence_number"));
    expect(seq).toEqual(seq.map((_, index) => index));
  });

  it("Chat Completions and Gemini: several tool_calls and functionCall parts", async () => {
    const chatTools = [{ type: "function", function: { name: "Agent" } }, { type: "function", function: { name: "Read" } }];
    const chat: unknown = await (await post("/v1/chat/completions", { model: "m", tools: chatTools, messages: [{ role: "user", content: "x" }] })).json();
    expect((pick(chat, "choices", 0, "message", "tool_calls") as unknown[]).map((call) => pick(call, "id"))).toEqual(["call_1", "call_2", "call_3"]);
    expect(pick(chat, "choices", 0, "finish_reason")).toBe("tool_calls");

    server.setRules(fanOut);
    const chunks = await sse("/v1/chat/completions", { model: "m", stream: true, tools: chatTools, messages: [{ role: "user", content: "x" }] });
    const heads = chunks.flatMap((data) => ((pick(data, "choices", 0, "delta", "tool_calls") as unknown[] | undefined) ?? []).filter((call) => pick(call, "id") !== undefined));
    expect(heads.map((call) => [pick(call, "index"), pick(call, "id")])).toEqual([
      [0, "call_4"],
      [1, "call_5"],
      [2, "call_6"],
    ]);

    server.setRules(fanOut);
    const gemini: unknown = await (
      await post("/v1beta/models/g:generateContent", { contents: [{ role: "user", parts: [{ text: "x" }] }], tools: [{ functionDeclarations: [{ name: "Agent" }, { name: "Read" }] }] })
    ).json();
    expect((pick(gemini, "candidates", 0, "content", "parts") as unknown[]).map((part) => pick(part, "functionCall", "name"))).toEqual(["Agent", "Agent", "Read"]);
  });
});
