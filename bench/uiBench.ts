import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { LoomWsClient } from "../src/client/loomWsClient.js";
import { bearerWebSocket } from "../src/client/nodeWebSocket.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { launchChromium } from "../src/testkit/browser.js";
import { fmt, percentile, printTable } from "./stats.js";

/**
 * The web UI in Debian chromium (docs/ui.md) on a thread of `items` turn items:
 * - cold open: navigation to the thread's page until its first timeline item
 *   is in the DOM (the page's bounded snapshot over the WebSocket), against a
 *   baseline measured in the same browser run: navigating to a JSON page of
 *   the same origin and loading the same bounded snapshot with fetch alone;
 * - live update: a committed message until it is in the page's DOM, against
 *   the same commit reaching a bare WebSocket subscriber in Node.
 */
export async function runUiBench(options: { readonly items: number; readonly rounds: number }): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-ui-bench-"));
  const server = await startLoomServer({ stateDir, port: 0, cwd: stateDir, uiDir: resolve("dist/ui") });
  const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const browser = await launchChromium();
  const ws = await LoomWsClient.connect({ url: server.url, connect: bearerWebSocket(token) });
  try {
    // One run whose script says items - 1 lines: with its user message, `items` turn items.
    const steps = Array.from({ length: options.items - 1 }, (_, i) => ({ say: `line ${i}` }));
    const launched = await ws.request("orchestration.launchThread", { message: JSON.stringify({ script: steps }), title: "Bench thread" });
    const threadId = launched.threadId;
    const runId = launched.runId!;
    await waitFor(() => server.orchestrator.state.runs.get(runId)?.endedAt != null, 600_000);
    const linkRes = await fetch(`${server.url}/api/ui/login-link`, { method: "POST", headers: auth });
    const link = ((await linkRes.json()) as { url: string }).url;
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole("heading", { name: "Needs you" }).waitFor();

    const threadUrl = `${server.url}/t/${encodeURIComponent(threadId)}`;
    const snapshotUrl = `/api/orchestration/threads/${encodeURIComponent(threadId)}/bounded-snapshot?limit=100`;
    const ui: number[] = [];
    const fetchOnly: number[] = [];
    for (let round = 0; round < options.rounds + 1; round++) {
      const a = await timeFetchOnly(page, `${server.url}/api/ui/session`, snapshotUrl);
      const b = await timeFirstItem(page, threadUrl);
      // The first round warms the browser's caches and is not counted.
      if (round > 0) {
        fetchOnly.push(a);
        ui.push(b);
      }
    }

    // Live updates: the page shows the thread; each round commits one queued message.
    await page.goto(threadUrl);
    await page.locator(".timeline .item").first().waitFor();
    const dom: number[] = [];
    const wire: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const text = `live update ${round} ${Date.now()}`;
      let wireAt = 0;
      const sub = ws.subscribe("orchestration.subscribeThread", { threadId, afterSequence: server.orchestrator.state.lastSequence }, {
        next: (u) => {
          if (u.kind === "event" && u.event.type === "turn-item.updated" && JSON.stringify(u.event.data).includes(text) && wireAt === 0) wireAt = performance.timeOrigin + performance.now();
        },
      });
      // In the page: the moment the text is in the timeline (a string, so the bench compiles without the DOM library).
      const seen = page.evaluate<number>(`new Promise((done) => {
        const observer = new MutationObserver(() => {
          if (document.querySelector(".timeline")?.textContent?.includes(${JSON.stringify(text)})) {
            observer.disconnect();
            done(performance.timeOrigin + performance.now());
          }
        });
        observer.observe(document.body, { childList: true, subtree: true, characterData: true });
      })`);
      await new Promise((r) => setTimeout(r, 50));
      const before = performance.timeOrigin + performance.now();
      const res = await fetch(`${server.url}/api/orchestration/dispatch`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ type: "message.dispatch", commandId: `cmd:bench:${round}:${Date.now()}`, data: { threadId, text, mode: "queue" } }),
      });
      if (res.status !== 200) throw new Error(`dispatch failed: ${res.status} ${await res.text()}`);
      const domAt = await seen;
      await waitFor(() => wireAt !== 0, 10_000);
      sub.close();
      dom.push(domAt - before);
      wire.push(wireAt - before);
      await waitFor(() => [...server.orchestrator.state.runs.values()].every((run) => run.endedAt !== null), 30_000);
    }
    await context.close();

    const median = (xs: number[]) => percentile([...xs].sort((x, y) => x - y), 50);
    printTable(`web UI, thread of ${options.items.toLocaleString("en-US")} items (chromium, median of ${options.rounds})`, [
      ["measure", "ms", "baseline ms", "ratio"],
      ["navigation → first timeline item (UI)", fmt(median(ui)), fmt(median(fetchOnly)), `${(median(ui) / median(fetchOnly)).toFixed(2)}×`],
      ["commit → in the page's DOM", fmt(median(dom)), fmt(median(wire)), `${(median(dom) / median(wire)).toFixed(2)}×`],
    ]);
    console.log("baselines: navigation to a JSON page of the same origin + fetch and parse of the same bounded snapshot; the same commit reaching a Node WebSocket subscriber");
  } finally {
    await ws.close();
    await browser.close();
    await server.close();
  }
}

async function timeFetchOnly(page: Page, jsonPage: string, snapshotUrl: string): Promise<number> {
  const start = Date.now();
  await page.goto(jsonPage);
  await page.evaluate(async (url) => {
    const res = await fetch(url);
    const body = (await res.json()) as { items: unknown[] };
    if (body.items.length === 0) throw new Error("empty snapshot");
  }, snapshotUrl);
  return Date.now() - start;
}

async function timeFirstItem(page: Page, threadUrl: string): Promise<number> {
  const start = Date.now();
  await page.goto(threadUrl);
  await page.locator(".timeline .item").first().waitFor({ timeout: 60_000 });
  return Date.now() - start;
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("bench: timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}
