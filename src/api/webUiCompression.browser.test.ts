import type { Browser, Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServedLoom, launchChromium } from "../testkit/browser.js";

/**
 * A cold load of the web UI in chromium against a real `loom serve`: the
 * hashed scripts and styles arrive compressed and cached for good, the page
 * itself revalidated (docs/wire.md#compression).
 */

let loom: ServedLoom;
let browser: Browser;

beforeAll(async () => {
  // Compression for every client: the browser here is on the same machine, which the default leaves uncompressed.
  loom = await ServedLoom.start({ providers: [{ id: "scripted", driver: "scripted" }], wire: { compression: true } });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await loom?.stop();
});

describe("the web UI's files in chromium", () => {
  it("loads its JS and CSS compressed with immutable caching, and its page revalidated", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const responses: Response[] = [];
    page.on("response", (response) => responses.push(response));
    await page.goto(loom.url);
    await page.getByText("loom open").first().waitFor();
    const html = responses.find((r) => r.request().resourceType() === "document");
    expect(html?.status()).toBe(200);
    expect(html?.headers()["cache-control"]).toBe("no-cache");
    expect(html?.headers().etag).toMatch(/^".+"$/);
    const assets = responses.filter((r) => new URL(r.url()).pathname.startsWith("/assets/"));
    expect(assets.map((r) => new URL(r.url()).pathname.replace(/-[\w-]+\./, ".")).sort()).toEqual(["/assets/index.css", "/assets/index.js"]);
    for (const asset of assets) {
      const headers = asset.headers();
      expect(["br", "gzip"], asset.url()).toContain(headers["content-encoding"]);
      expect(headers["cache-control"], asset.url()).toBe("public, max-age=31536000, immutable");
      expect(headers.vary).toBe("Accept-Encoding");
      // What crossed the wire is a fraction of what the page got.
      const sizes = await asset.request().sizes();
      expect(sizes.responseBodySize, asset.url()).toBeLessThan((await asset.body()).length / 2);
    }
    await context.close();
  });
});
