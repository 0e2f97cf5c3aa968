import { afterEach, describe, expect, it } from "vitest";
import { parseRuleScript } from "./ruleScript.js";
import { type ModelServer, startModelServer } from "./server.js";

/** Faults: a rule answers with a model API's failure (429 with Retry-After, 529, a usage limit), each API in its own error body. */

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function post(path: string, body: unknown): Promise<Response> {
  if (server === null) throw new Error("no server");
  return fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

describe("model server faults", () => {
  it("a 429 with Retry-After answers its times, then the next rule answers", async () => {
    server = await startModelServer({ rules: [{ reply: { fault: { status: 429, retryAfterSeconds: 2 } }, times: 1 }, { reply: { text: "after the limit" } }] });
    const limited = await post("/v1/messages", { model: "claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(await limited.json()).toEqual({ type: "error", error: { type: "rate_limit_error", message: "rate limited by the model server" } });
    const ok = await post("/v1/messages", { model: "claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    expect(ok.status).toBe(200);
    expect(JSON.stringify(await ok.json())).toContain("after the limit");
    expect(server.requests.map((request) => [request.status, request.ruleIndex])).toEqual([
      [429, 0],
      [200, 1],
    ]);
  });

  it("each API's own error body: Anthropic 529 overloaded_error, OpenAI rate_limit_exceeded, Gemini RESOURCE_EXHAUSTED", async () => {
    server = await startModelServer({ rules: [{ when: { api: "anthropic" }, reply: { fault: { status: 529 } } }, { reply: { fault: { status: 429, message: "slow down" } } }] });
    const overloaded = await post("/v1/messages", { model: "claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    expect(overloaded.status).toBe(529);
    expect(await overloaded.json()).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    const responses = await post("/v1/responses", { model: "gpt-5", input: "hi" });
    expect(await responses.json()).toEqual({ error: { message: "slow down", type: "rate_limit_exceeded", code: "rate_limit_exceeded", param: null } });
    const gemini = await post("/v1beta/models/gemini-2.5-pro:generateContent", { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    expect(gemini.status).toBe(429);
    expect(await gemini.json()).toEqual({ error: { code: 429, message: "slow down", status: "RESOURCE_EXHAUSTED" } });
  });

  it("a usage limit's own body and headers are sent as given", async () => {
    const body = { type: "error", error: { type: "rate_limit_error", message: "Claude AI usage limit reached|1796040000" } };
    server = await startModelServer({ rules: [{ reply: { fault: { status: 429, body, headers: { "anthropic-ratelimit-unified-reset": "1796040000" } } } }] });
    const limited = await post("/v1/messages", { model: "claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    expect(limited.headers.get("anthropic-ratelimit-unified-reset")).toBe("1796040000");
    expect(await limited.json()).toEqual(body);
  });

  it("a script's fault is checked: a status outside 400–599 names its field", () => {
    expect(parseRuleScript({ rules: [{ reply: { fault: { status: 429, retryAfterSeconds: 1 } } }] })).toEqual([{ reply: { fault: { status: 429, retryAfterSeconds: 1 } } }]);
    expect(() => parseRuleScript({ rules: [{ reply: { fault: { status: 200 } } }] })).toThrow(/rules\.0\.reply/);
  });
});
