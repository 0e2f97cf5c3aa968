import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { McpCapability } from "./credentialRegistry.js";
import { DEFAULT_SESSION_IDLE_TTL_MS } from "./httpEndpoint.js";
import { type McpHarness, OWNER_TOKEN, initializeRequest, readMessages, startMcpHarness } from "./testSuiteMcpHarness.js";
import { defineTool, defineToolkit } from "./toolkit.js";
import { diagnosticsToolkit } from "./toolkits/diagnostics/tools.js";

/** Endpoint tests: bearer authentication, session ownership and lifecycle, raw protocol edges. */

const started: { resolve: () => void }[] = [];
const aborted: string[] = [];
const waitToolkit = defineToolkit("test-wait", [
  defineTool({
    name: "test_wait",
    description: "Wait until aborted.",
    inputSchema: z.object({ label: z.string() }),
    outputSchema: z.object({ aborted: z.boolean() }),
    capability: McpCapability.preview,
    handler: (input, ctx) =>
      new Promise((resolve) => {
        started.shift()?.resolve();
        ctx.signal.addEventListener("abort", () => {
          aborted.push(input.label);
          resolve({ aborted: true });
        });
      }),
  }),
]);

function nextStart(): Promise<void> {
  return new Promise((resolve) => started.push({ resolve }));
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

let h: McpHarness;
beforeEach(async () => {
  started.length = 0;
  aborted.length = 0;
  h = await startMcpHarness([diagnosticsToolkit, waitToolkit]);
});
afterEach(async () => {
  await h.close();
});

const listTools = { jsonrpc: "2.0", id: 7, method: "tools/list", params: {} };

describe("MCP endpoint authentication", () => {
  it("a request without a token is 401 with a bare Bearer challenge", async () => {
    const res = await h.post(initializeRequest(1), { token: null });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
    expect(await res.json()).toEqual({ error: { code: "unauthorized", message: expect.stringMatching(/^missing bearer token/) } });
    expect(h.endpoint.sessionCount).toBe(0);
  });

  it("an unknown token is 401 invalid_token and is never echoed", async () => {
    const res = await h.post(initializeRequest(1), { token: "not-a-real-token-123" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: { code: "unauthorized", message: "unknown bearer token" } });
    expect(text).not.toContain("not-a-real-token-123");
    await expect(h.connect("not-a-real-token-123")).rejects.toThrow(/401|unknown bearer token/);
  });

  it("an idle-expired token is 401 expired, for raw fetch and the SDK client", async () => {
    const issued = h.issue();
    h.clock.now += DEFAULT_SESSION_IDLE_TTL_MS + 1;
    const res = await h.post(initializeRequest(1), { token: issued.token });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
    expect(await res.json()).toEqual({ error: { code: "unauthorized", message: "bearer token expired" } });
    await expect(h.connect(issued.token)).rejects.toThrow(/expired/);
  });

  it("a revoked token is 401 revoked", async () => {
    const issued = h.issue();
    expect(h.registry.revokeSession("provider-session:1")).toBe(1);
    const res = await h.post(initializeRequest(1), { token: issued.token });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { code: "unauthorized", message: "bearer token revoked" } });
    await expect(h.connect(issued.token)).rejects.toThrow(/revoked/);
  });

  it("the owner token and a thread credential both connect and call tools", async () => {
    for (const token of [OWNER_TOKEN, h.issue().token]) {
      const { client } = await h.connect(token);
      const result = await client.callTool({ name: "loom_echo", arguments: { text: "hi" } });
      expect(result.structuredContent).toEqual({ text: "hi" });
    }
    expect(h.endpoint.sessionCount).toBe(2);
  });

  it("never logs a token", async () => {
    const issued = h.issue();
    await h.connect(issued.token);
    await h.post(listTools, { token: "wrong-token-abcdef" });
    h.registry.revoke(issued.credentialId);
    await h.post(listTools, { token: issued.token });
    expect(h.logs.length).toBeGreaterThan(0);
    const all = h.logs.join("\n");
    for (const secret of [issued.token, OWNER_TOKEN, "wrong-token-abcdef", "Bearer"]) expect(all).not.toContain(secret);
  });
});

describe("MCP endpoint sessions", () => {
  it("a session id used with another credential is 404 and the session survives", async () => {
    const a = await h.connect(h.issue().token);
    const other = h.issue({ providerSessionId: "provider-session:2" });
    const sessionId = a.transport.sessionId!;
    for (const token of [other.token, OWNER_TOKEN]) {
      const res = await h.post(listTools, { token, sessionId });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: -32001, message: "Session not found" } });
    }
    const tools = await a.client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain("loom_echo");
  });

  it("an unknown session id is 404", async () => {
    const res = await h.post(listTools, { sessionId: "6f1c0b9e-0000-4000-8000-000000000000" });
    expect(res.status).toBe(404);
  });

  it("a request without a session id must be initialize", async () => {
    const res = await h.post(listTools);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ id: 7, error: { code: -32000 } });
    expect(h.endpoint.sessionCount).toBe(0);
  });

  it("server/discover before initialize gets Method not found, and initialize still works", async () => {
    const res = await h.post({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} }, { token: OWNER_TOKEN });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: expect.stringContaining("server/discover") } });
    const sessionId = await h.rawInitialize(OWNER_TOKEN);
    const [message] = await readMessages(await h.post(listTools, { sessionId }));
    expect(message).toMatchObject({ id: 7, result: { tools: expect.any(Array) } });
  });

  it("server/discover without a token is still 401", async () => {
    const res = await h.post({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} }, { token: null });
    expect(res.status).toBe(401);
  });

  it("rejects a body that is not JSON", async () => {
    const res = await fetch(h.mcpUrl, {
      method: "POST",
      headers: { authorization: `Bearer ${OWNER_TOKEN}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: -32700 } });
  });

  it("rejects a body over 4 MiB with 413 and other HTTP methods with 405", async () => {
    const big = await h.post({ ...initializeRequest(1), padding: "x".repeat(4 * 1024 * 1024) });
    expect(big.status).toBe(413);
    expect(h.endpoint.sessionCount).toBe(0);
    const put = await fetch(h.mcpUrl, { method: "PUT", headers: { authorization: `Bearer ${OWNER_TOKEN}` } });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, POST, DELETE");
    const get = await fetch(h.mcpUrl, { headers: { authorization: `Bearer ${OWNER_TOKEN}`, accept: "text/event-stream" } });
    expect(get.status).toBe(400);
  });

  it("revoking the credential makes the next request on its open session 401 and closes it", async () => {
    const issued = h.issue();
    const { client } = await h.connect(issued.token);
    expect(h.endpoint.sessionCount).toBe(1);
    h.registry.revokeSession("provider-session:1");
    await expect(client.listTools()).rejects.toThrow(/401|revoked/);
    expect(h.endpoint.sessionCount).toBe(0);
  });

  it("a stranger's bad token cannot close someone else's session", async () => {
    const { transport, client } = await h.connect(h.issue().token);
    const res = await h.post(listTools, { token: "garbage-token-xyz", sessionId: transport.sessionId! });
    expect(res.status).toBe(401);
    expect(h.endpoint.sessionCount).toBe(1);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it("DELETE closes the session and aborts its running calls", async () => {
    const { client, transport } = await h.connect(OWNER_TOKEN);
    const sessionId = transport.sessionId!;
    const startedWait = nextStart();
    const call = client.callTool({ name: "test_wait", arguments: { label: "deleted" } }).catch((error: Error) => error);
    await startedWait;
    await transport.terminateSession();
    await until(() => aborted.includes("deleted"), "the handler abort");
    expect(h.endpoint.sessionCount).toBe(0);
    expect(h.logs).toContain(`mcp: session ${sessionId} closed (deleted)`);
    const res = await h.post(listTools, { sessionId });
    expect(res.status).toBe(404);
    await client.close();
    await call;
  });

  it("the sweep closes a session whose credential ended, and idle sessions", async () => {
    const issued = h.issue();
    await h.connect(issued.token);
    const idle = await h.rawInitialize(OWNER_TOKEN);
    expect(h.endpoint.sessionCount).toBe(2);
    expect(await h.endpoint.sweep()).toBe(0);
    h.registry.revoke(issued.credentialId);
    expect(await h.endpoint.sweep()).toBe(1);
    expect(h.endpoint.sessionCount).toBe(1);
    h.clock.now += DEFAULT_SESSION_IDLE_TTL_MS - 1;
    expect(await h.endpoint.sweep()).toBe(0);
    h.clock.now += 1;
    expect(await h.endpoint.sweep()).toBe(1);
    expect((await h.post(listTools, { sessionId: idle })).status).toBe(404);
  });

  it("a client cancelling a call aborts the handler's signal", async () => {
    const { client } = await h.connect(OWNER_TOKEN);
    const controller = new AbortController();
    const startedWait = nextStart();
    const call = client.callTool({ name: "test_wait", arguments: { label: "cancelled" } }, undefined, { signal: controller.signal });
    await startedWait;
    controller.abort("changed my mind");
    await expect(call).rejects.toThrow();
    await until(() => aborted.includes("cancelled"), "the handler abort");
  });

  it("dropping the HTTP response of a call aborts the handler's signal", async () => {
    const sessionId = await h.rawInitialize(OWNER_TOKEN);
    const controller = new AbortController();
    const startedWait = nextStart();
    const res = await h.post(
      { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "test_wait", arguments: { label: "dropped" } } },
      { sessionId, signal: controller.signal },
    );
    expect(res.status).toBe(200);
    await startedWait;
    controller.abort();
    await until(() => aborted.includes("dropped"), "the handler abort");
    expect(h.endpoint.sessionCount).toBe(1);
  });

  it("close() ends every session and later requests get 503", async () => {
    await h.connect(OWNER_TOKEN);
    await h.endpoint.close();
    expect(h.endpoint.sessionCount).toBe(0);
    expect((await h.post(initializeRequest(1))).status).toBe(503);
  });
});
