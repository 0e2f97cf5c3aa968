import { Agent, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoomHarness } from "../testkit/loomHarness.js";

/**
 * The HTTP boundary: an oversized body gets its 413 (not a broken pipe) and
 * the keep-alive client's next request still works; a malformed path or a
 * prototype key gets a 400; none of them writes anything.
 */

let h: LoomHarness;
let agent: Agent;
beforeAll(async () => {
  h = await LoomHarness.start();
  agent = new Agent({ keepAlive: true, maxSockets: 1 });
});
afterAll(async () => {
  agent.destroy();
  await h.close();
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One request on the shared keep-alive agent (one socket at a time). */
function send(method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${h.server.url}${path}`,
      { method, agent, headers: { authorization: `Bearer ${h.ownerToken}`, "content-type": "application/json", ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const FIVE_MB = Buffer.alloc(5 * 1024 * 1024, "a");

describe("oversized bodies", () => {
  it("the API answers 413 to a 5 MB body and closes that connection; the next request on the agent works", async () => {
    const before = h.state.lastSequence;
    const big = await send("POST", "/api/orchestration/dispatch", FIVE_MB);
    expect(big.status).toBe(413);
    expect(big.headers.connection).toBe("close");
    expect(JSON.parse(big.body)).toMatchObject({ error: { code: "invalid_request", details: { reason: "body_too_large" } } });
    const next = await send("GET", "/api/orchestration/shell-snapshot");
    expect(next.status).toBe(200);
    const again = await send("POST", "/api/orchestration/dispatch", FIVE_MB, { "content-length": String(FIVE_MB.length) });
    expect(again.status).toBe(413);
    expect((await send("GET", "/health")).status).toBe(200);
    expect(h.state.lastSequence).toBe(before);
  });

  it("the MCP endpoint answers 413 to a 5 MB body and closes that connection; the next request on the agent works", async () => {
    const big = await send("POST", "/mcp", FIVE_MB, { accept: "application/json, text/event-stream" });
    expect(big.status).toBe(413);
    expect(big.headers.connection).toBe("close");
    expect(JSON.parse(big.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    const next = await send("GET", "/api/orchestration/shell-snapshot");
    expect(next.status).toBe(200);
    // The SDK client of the harness is unaffected too.
    expect(await h.owner.ok("t3_thread_list", {})).toMatchObject({ threads: expect.any(Array) });
  });
});

describe("malformed requests", () => {
  it("a malformed percent-encoding in a path is a 400", async () => {
    const answer = await send("GET", "/api/orchestration/threads/%E0%A4%A/snapshot");
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "invalid_request", message: expect.stringContaining("percent-encoding") } });
  });

  it.each([
    ["__proto__ at the top", '{"type":"thread.create","commandId":"cmd:proto-1","data":{"projectId":"default"},"__proto__":{"x":1}}'],
    ["__proto__ in data", '{"type":"thread.create","commandId":"cmd:proto-2","data":{"projectId":"default","__proto__":{"title":"sneaky"}}}'],
    ["constructor in data", '{"type":"thread.create","commandId":"cmd:proto-3","data":{"projectId":"default","constructor":{"prototype":{}}}}'],
  ])("a body with %s is refused with invalid_request and writes nothing", async (_what, body) => {
    const before = h.state.lastSequence;
    const answer = await send("POST", "/api/orchestration/dispatch", body);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "invalid_request", message: expect.stringContaining("reserved key") } });
    expect(h.state.lastSequence).toBe(before);
  });

  it("a raw command may not carry the server's clientRequest claim", async () => {
    const answer = await send(
      "POST",
      "/api/orchestration/dispatch",
      JSON.stringify({ type: "thread.create", commandId: "cmd:claim", data: { projectId: "default" }, clientRequest: { key: "k", tool: "create_threads", fingerprint: "a".repeat(64) } }),
    );
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: "invalid_request", details: { reason: "invalid_command" } } });
  });
});
