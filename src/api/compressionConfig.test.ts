import { request } from "node:http";
import { brotliDecompressSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { LoomWsClient } from "../client/loomWsClient.js";
import { ConfigError, type LoomConfigFile } from "../config/config.js";
import { LoomHarness } from "../testkit/loomHarness.js";

/**
 * The config switch `wire.compression`: on by default (br by Accept-Encoding,
 * permessage-deflate negotiated), and off sends identity answers and no
 * WebSocket extension, on the real server.
 */

let on: LoomHarness;
let off: LoomHarness;

beforeAll(async () => {
  [on, off] = await Promise.all([LoomHarness.start(), LoomHarness.start({ config: { wire: { compression: false } } })]);
  // Enough threads that the shell snapshot is well past the 1 KiB floor.
  for (const h of [on, off]) {
    for (let i = 0; i < 8; i++) await h.createThread({ title: `thread number ${i} with a title long enough to matter` });
  }
});

afterAll(async () => {
  await Promise.all([on.close(), off.close()]);
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
  it("on by default: an answer offered br is brotli, and the WebSocket negotiates permessage-deflate", async () => {
    expect(on.server.config.wire.compression).toBe(true);
    const answer = await snapshot(on);
    expect(answer.headers["content-encoding"]).toBe("br");
    const json = JSON.parse(brotliDecompressSync(answer.body).toString("utf8")) as { threads: unknown[] };
    expect(json.threads).toHaveLength(8);
    const ws = await negotiatedExtensions(on);
    expect(ws.header).toContain("permessage-deflate");
    expect(ws.extensions).toBe("permessage-deflate");
  });

  it("off: the same request gets identity, and the WebSocket negotiates no extension", async () => {
    expect(off.server.config.wire.compression).toBe(false);
    const answer = await snapshot(off);
    expect(answer.headers["content-encoding"]).toBeUndefined();
    expect(answer.headers.vary).toBe("Accept-Encoding");
    expect(answer.body.length).toBeGreaterThan(1024);
    expect(Number(answer.headers["content-length"])).toBe(answer.body.length);
    const json = JSON.parse(answer.body.toString("utf8")) as { threads: unknown[] };
    expect(json.threads).toHaveLength(8);
    const ws = await negotiatedExtensions(off);
    expect(ws.header).toBe("");
    expect(ws.extensions).toBe("");
  });

  it("a value other than true or false stops the server before it starts, naming the field", async () => {
    const bad = { wire: { compression: "off" } } as unknown as LoomConfigFile;
    const start = LoomHarness.start({ config: bad });
    await expect(start).rejects.toBeInstanceOf(ConfigError);
    await expect(start).rejects.toMatchObject({ code: "invalid_config", message: expect.stringContaining("wire.compression: must be true or false") });
  });
});
