import { type Server, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLoopbackAddress, negotiateCoding } from "./compression.js";
import { sendJson } from "./http.js";

/** JSON answers over real HTTP, compressed by Accept-Encoding and round-tripped. */

const big = { items: Array.from({ length: 200 }, (_, i) => ({ id: `turn-item:${i}`, text: `message number ${i}` })) };
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => sendJson(res, 200, req.url === "/small" ? { ok: true } : big));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Raw bytes and headers, with no client-side decoding. */
function get(path: string, acceptEncoding?: string): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: "127.0.0.1", path, headers: acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("HTTP compression", () => {
  it("answers br, gzip or identity by Accept-Encoding, and the bytes round-trip", async () => {
    const raw = Buffer.from(JSON.stringify(big));
    const br = await get("/", "gzip, deflate, br");
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toBe("Accept-Encoding");
    expect(Number(br.headers["content-length"])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(raw.length / 4);
    expect(JSON.parse(brotliDecompressSync(br.body).toString())).toEqual(big);
    const gzip = await get("/", "gzip");
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    expect(JSON.parse(gunzipSync(gzip.body).toString())).toEqual(big);
    for (const accept of [undefined, "identity", "br;q=0, gzip;q=0"]) {
      const plain = await get("/", accept);
      expect(plain.headers["content-encoding"], String(accept)).toBeUndefined();
      expect(plain.headers.vary).toBe("Accept-Encoding");
      expect(plain.body.equals(raw)).toBe(true);
    }
  });

  it("sends a body under 1 KiB uncompressed", async () => {
    const small = await get("/small", "br, gzip");
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(small.body.toString()).toBe('{"ok":true}');
  });

  it("weighs codings: q values, wildcards, br first at equal weight", () => {
    expect(negotiateCoding("gzip;q=1, br;q=0.5")).toBe("gzip");
    expect(negotiateCoding("*")).toBe("br");
    expect(negotiateCoding("*, br;q=0")).toBe("gzip");
    expect(negotiateCoding("deflate")).toBe("identity");
  });
});

describe("isLoopbackAddress (wire.compression \"remote\")", () => {
  it("is true for this machine's addresses and false for any other peer", () => {
    for (const address of ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"]) expect(isLoopbackAddress(address), address).toBe(true);
    for (const address of ["10.0.0.7", "192.168.1.20", "::ffff:10.0.0.7", "fe80::1", "128.0.0.1", "1270.0.0.1", undefined]) expect(isLoopbackAddress(address), String(address)).toBe(false);
  });
});
