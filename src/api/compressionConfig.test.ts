import { request } from "node:http";
import { brotliDecompressSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { LoomWsClient } from "../client/loomWsClient.js";
import { ConfigError, type LoomConfigFile } from "../config/config.js";
import { LoomHarness } from "../testkit/loomHarness.js";

/**
 * The config switch `wire.compression`, on the real server: true compresses
 * for every client (br by Accept-Encoding, permessage-deflate negotiated);
 * false sends identity answers and no WebSocket extension; "remote", the
 * default, compresses only for clients on another machine, so these
 * loopback requests get what false gives (the remote side of it is the
 * true path, chosen by the peer address: compression.test.ts).
 */

let on: LoomHarness;
let off: LoomHarness;
let local: LoomHarness;

beforeAll(async () => {
  [on, off, local] = await Promise.all([LoomHarness.start({ config: { wire: { compression: true } } }), LoomHarness.start({ config: { wire: { compression: false } } }), LoomHarness.start()]);
  // Enough threads that the shell snapshot is well past the 1 KiB floor.
  for (const h of [on, off, local]) {
    for (let i = 0; i < 8; i++) await h.createThread({ title: `thread number ${i} with a title long enough to matter` });
  }
});

afterAll(async () => {
  await Promise.all([on.close(), off.close(), local.close()]);
});

/** The shell snapshot's raw bytes and headers, as the owner, offering br and gzip. */
function snapshot(h: LoomHarness): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const url = new URL("/api/orchestration/shell-snapshot", h.server.url);
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${h.ownerToken}`, "accept-encoding": "br, gzip" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A raw MCP POST as the owner offering br; `sessionId` once one is open. */
function mcpPost(h: LoomHarness, body: unknown, sessionId?: string): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${h.ownerToken}`,
    "accept-encoding": "br",
    ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" }),
  };
  return new Promise((resolve, reject) => {
    const req = request(h.server.mcpUrl, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** tools/list in a fresh MCP session, raw: its content-encoding and its decoded text. */
async function toolsList(h: LoomHarness): Promise<{ coding: string; text: string }> {
  const init = await mcpPost(h, { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  const sessionId = String(init.headers["mcp-session-id"]);
  await mcpPost(h, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId);
  const list = await mcpPost(h, { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }, sessionId);
  const coding = String(list.headers["content-encoding"] ?? "identity");
  return { coding, text: (coding === "br" ? brotliDecompressSync(list.body) : list.body).toString("utf8") };
}

/** The Sec-WebSocket-Extensions the server answered an upgrade offering permessage-deflate with ("" for none). */
async function negotiatedExtensions(h: LoomHarness): Promise<{ header: string; extensions: string }> {
  const socket = new WebSocket(LoomWsClient.wsUrl(h.server.url), { headers: { authorization: `Bearer ${h.ownerToken}` }, perMessageDeflate: true });
  const header = await new Promise<string>((resolve, reject) => {
    socket.once("upgrade", (res) => resolve(String(res.headers["sec-websocket-extensions"] ?? "")));
    socket.once("error", reject);
  });
  await new Promise<void>((resolve) => (socket.readyState === WebSocket.OPEN ? resolve() : socket.once("open", () => resolve())));
  const extensions = socket.extensions;
  socket.close();
  return { header, extensions };
}

describe("wire.compression", () => {
  it("true: an answer offered br is brotli (HTTP API and MCP), and the WebSocket negotiates permessage-deflate, loopback clients included", async () => {
    expect(on.server.config.wire.compression).toBe(true);
    const answer = await snapshot(on);
    expect(answer.headers["content-encoding"]).toBe("br");
    const json = JSON.parse(brotliDecompressSync(answer.body).toString("utf8")) as { threads: unknown[] };
    expect(json.threads).toHaveLength(8);
    const ws = await negotiatedExtensions(on);
    expect(ws.header).toContain("permessage-deflate");
    expect(ws.extensions).toBe("permessage-deflate");
    const tools = await toolsList(on);
    expect(tools.coding).toBe("br");
    expect(tools.text).toContain('"t3_thread_wait"');
  });

  it("off, and by default for a client on this machine: the same requests get identity, and the WebSocket negotiates no extension", async () => {
    expect(off.server.config.wire.compression).toBe(false);
    expect(local.server.config.wire.compression).toBe("remote");
    for (const h of [off, local]) await identityEverywhere(h);
  });

  it("a value other than true, false or \"remote\" stops the server before it starts, naming the field", async () => {
    const bad = { wire: { compression: "off" } } as unknown as LoomConfigFile;
    const start = LoomHarness.start({ config: bad });
    await expect(start).rejects.toBeInstanceOf(ConfigError);
    await expect(start).rejects.toMatchObject({ code: "invalid_config", message: expect.stringContaining('wire.compression: must be true, false or "remote"') });
  });
});

async function identityEverywhere(h: LoomHarness): Promise<void> {
    const answer = await snapshot(h);
    expect(answer.headers["content-encoding"]).toBeUndefined();
    expect(answer.headers.vary).toBe("Accept-Encoding");
    expect(answer.body.length).toBeGreaterThan(1024);
    expect(Number(answer.headers["content-length"])).toBe(answer.body.length);
    const json = JSON.parse(answer.body.toString("utf8")) as { threads: unknown[] };
    expect(json.threads).toHaveLength(8);
    const ws = await negotiatedExtensions(h);
    expect(ws.header).toBe("");
    expect(ws.extensions).toBe("");
    const tools = await toolsList(h);
    expect(tools.coding).toBe("identity");
    expect(tools.text).toContain('"t3_thread_wait"');
}
