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
 *   the same commit reaching a bare WebSocket subscriber in Node;
 * - sidebar: navigation to the inbox until the sidebar shows its first row, on
 *   a server of 10,000 threads against one of 100 (runSidebarBench).
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

/**
 * First paint of the sidebar: navigation to the inbox until the sidebar's
 * first thread row is in the DOM, on a server holding `large` root threads
 * against one holding `small`, each measured in the same browser run (one
 * server at a time), medians of `rounds` after a warm-up round. Each round
 * opens a page of its own and waits for the whole list before closing it, so
 * every round starts on an idle server.
 */
export async function runSidebarBench(options: { readonly small: number; readonly large: number; readonly rounds: number }): Promise<void> {
  const browser = await launchChromium();
  try {
    const median = (xs: number[]) => percentile([...xs].sort((x, y) => x - y), 50);
    const firstRow = new Map<number, number>();
    for (const count of [options.small, options.large]) {
      const stateDir = mkdtempSync(join(tmpdir(), "loom-ui-bench-sidebar-"));
      const server = await startLoomServer({ stateDir, port: 0, cwd: stateDir, uiDir: resolve("dist/ui") });
      try {
        for (let done = 0; done < count; done += 500) {
          const batch = Math.min(500, count - done);
          const receipts = await Promise.all(
            Array.from({ length: batch }, (_, i) =>
              server.orchestrator.dispatch({ type: "thread.create", commandId: `cmd:bench-sidebar:${done + i}`, data: { threadId: `thread:bench-${done + i}`, projectId: "default", title: `Sidebar thread ${done + i}` } }),
            ),
          );
          if (receipts.some((receipt) => receipt.status !== "accepted")) throw new Error("a bulk thread.create was rejected");
        }
        const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
        const linkRes = await fetch(`${server.url}/api/ui/login-link`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } });
        const link = ((await linkRes.json()) as { url: string }).url;
        const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
        const page = await context.newPage();
        await page.goto(link);
        await page.getByRole("heading", { name: "Needs you" }).waitFor();
        await page.close();
        const times: number[] = [];
        for (let round = 0; round < options.rounds + 1; round++) {
          // A page of its own each round (the session cookie is the context's): nothing of the last page's work overlaps.
          const fresh = await context.newPage();
          const start = Date.now();
          await fresh.goto(`${server.url}/`);
          await fresh.locator(".sidebar .tree-row").first().waitFor({ timeout: 120_000 });
          if (round > 0) times.push(Date.now() - start);
          // The whole list arrives before the page closes, so no round starts on a server still sending the last one's.
          await fresh.getByTestId("list-loading").waitFor({ state: "detached", timeout: 120_000 });
          await fresh.close();
        }
        firstRow.set(count, median(times));
        await context.close();
      } finally {
        await server.close();
      }
    }
    const small = firstRow.get(options.small)!;
    const large = firstRow.get(options.large)!;
    printTable(`web UI sidebar, first row painted (chromium, median of ${options.rounds})`, [
      ["threads", "ms", "ratio"],
      [options.small.toLocaleString("en-US"), fmt(small), "1.00×"],
      [options.large.toLocaleString("en-US"), fmt(large), `${(large / small).toFixed(2)}×`],
    ]);
  } finally {
    await browser.close();
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
