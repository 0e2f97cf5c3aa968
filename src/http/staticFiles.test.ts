import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerUncompressed } from "./compression.js";
import { staticFiles } from "./staticFiles.js";

/** The built-app file server over real HTTP: types, caching, revalidation, the app fallback, and nothing outside its root. */

let server: Server;
let url: string;

beforeAll(async () => {
  const root = mkdtempSync(join(tmpdir(), "loom-static-"));
  mkdirSync(join(root, "assets"));
  writeFileSync(join(root, "index.html"), "<!doctype html><title>app</title>");
  writeFileSync(join(root, "assets", "index-abc123.js"), "console.log(1)");
  writeFileSync(join(root, "assets", "index-abc123.css"), "body{}");
  writeFileSync(join(root, "assets", "big-abc123.js"), "console.log('a long line of script');\n".repeat(100));
  writeFileSync(join(root, "..", "secret.txt"), "outside");
  const route = staticFiles({ root, reserved: (path) => path.startsWith("/api/") });
  server = createServer((req, res) => {
    // What the server does for every request under wire.compression false.
    if (req.headers["x-test-uncompressed"] === "1") answerUncompressed(req);
    void route(req, res, new URL(req.url ?? "/", "http://x")).then((handled) => {
      if (!handled) {
        res.writeHead(404);
        res.end("not mine");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("staticFiles", () => {
  it("serves files with their content type; hashed assets immutable, pages revalidated", async () => {
    const js = await fetch(`${url}/assets/index-abc123.js`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await js.text()).toBe("console.log(1)");
    expect((await fetch(`${url}/assets/index-abc123.css`)).headers.get("content-type")).toBe("text/css; charset=utf-8");
    const page = await fetch(`${url}/`);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    const again = await fetch(`${url}/`, { headers: { "if-none-match": page.headers.get("etag")! } });
    expect(again.status).toBe(304);
  });

  it("answers the app's own routes with index.html, but not missing files or reserved paths", async () => {
    const deep = await fetch(`${url}/t/thread%3Aabc`);
    expect(deep.status).toBe(200);
    expect(await deep.text()).toContain("<title>app</title>");
    expect((await fetch(`${url}/assets/missing.js`)).status).toBe(404);
    expect(await (await fetch(`${url}/api/orchestration/x`)).text()).toBe("not mine");
    expect((await fetch(`${url}/`, { method: "POST" })).status).toBe(404);
    const head = await fetch(`${url}/assets/index-abc123.js`, { method: "HEAD" });
    expect(head.headers.get("content-length")).toBe("14");
  });

  it("serves a large asset compressed by Accept-Encoding, a small one as it is", async () => {
    const br = await fetch(`${url}/assets/big-abc123.js`, { headers: { "accept-encoding": "br" } });
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(br.headers.get("vary")).toBe("Accept-Encoding");
    expect(Number(br.headers.get("content-length"))).toBeLessThan(500);
    expect(await br.text()).toBe("console.log('a long line of script');\n".repeat(100));
    const gzip = await fetch(`${url}/assets/big-abc123.js`, { headers: { "accept-encoding": "gzip" } });
    expect(gzip.headers.get("content-encoding")).toBe("gzip");
    const plain = await fetch(`${url}/assets/big-abc123.js`, { headers: { "accept-encoding": "identity" } });
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("content-length")).toBe("3800");
    const small = await fetch(`${url}/assets/index-abc123.js`, { headers: { "accept-encoding": "br" } });
    expect(small.headers.get("content-encoding")).toBeNull();
  });

  it("serves a request marked uncompressed as it is, whatever it accepts", async () => {
    const plain = await fetch(`${url}/assets/big-abc123.js`, { headers: { "accept-encoding": "br, gzip", "x-test-uncompressed": "1" } });
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("content-length")).toBe("3800");
    expect(await plain.text()).toBe("console.log('a long line of script');\n".repeat(100));
  });

  it("never serves a file outside its root", async () => {
    for (const path of ["/..%2fsecret.txt", "/assets/..%2f..%2fsecret.txt", "/%2e%2e/secret.txt", "/%00"]) {
      const res = await fetch(`${url}${path}`);
      expect(await res.text(), path).not.toBe("outside");
    }
  });
});
