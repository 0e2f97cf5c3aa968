import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { UI_WAIT, signedInPage } from "../testkit/browser.js";

/**
 * A long thread list in a real browser (Debian chromium via playwright-core)
 * against a real `loom serve`: with more root threads than the sidebar's
 * window (ROOT_PAGE, 200), it renders the first 200 and says how many more
 * there are, renders more as the list's end scrolls into view, and a thread
 * beyond the window opened by its address still shows its row. The list's
 * first page comes over HTTP beside the subscription's whole snapshot.
 */

const THREADS = 450;
const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted" }] });
let page: Page;
let errors: string[];

beforeAll(async () => {
  ({ page, errors } = ui);
  const token = readFileSync(join(ui.loom.stateDir, "owner-token"), "utf8").trim();
  // Oldest first: thread 0 is the oldest, so it sorts last.
  for (let i = 0; i < THREADS; i++) {
    const res = await fetch(new URL("/api/orchestration/dispatch", ui.loom.url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "thread.create", commandId: `cmd:sidebar-${i}`, data: { threadId: `thread:sidebar-${i}`, projectId: "demo", title: `Listed ${i}` } }),
    });
    if (res.status !== 200) throw new Error(`thread.create ${i}: ${res.status} ${await res.text()}`);
  }
}, 120_000);

const rows = () => page.locator(".sidebar .tree-row");
const more = () => page.getByTestId("more-roots");

describe("a sidebar of 450 threads in chromium", () => {
  it("renders the first 200 roots, more as the end scrolls into view, and an opened thread beyond the window", async () => {
    // The list's first page is asked for over HTTP beside the WebSocket's whole snapshot, which replaces it.
    const firstPage = page.waitForResponse((res) => res.url().includes("/api/orchestration/shell-snapshot?limit=200"));
    await page.goto(new URL("/", ui.loom.url).href);
    const answered = await firstPage;
    expect(answered.status()).toBe(200);
    expect(((await answered.json()) as { threads: unknown[]; total: number }).threads).toHaveLength(200);
    await more().waitFor({ timeout: UI_WAIT });
    expect(await page.getByTestId("list-loading").count()).toBe(0);
    expect(await rows().count()).toBe(200);
    expect(await more().innerText()).toBe("Show more (250 more threads)");
    expect(await rows().first().getAttribute("data-thread-id")).toBe(`thread:sidebar-${THREADS - 1}`);
    expect(await page.locator('.sidebar .tree-row[data-thread-id="thread:sidebar-0"]').count()).toBe(0);

    // Scrolled to the end, the next 200 render; then the last 50, and the end is gone.
    await more().scrollIntoViewIfNeeded();
    await expect.poll(() => rows().count(), { timeout: UI_WAIT }).toBeGreaterThanOrEqual(400);
    await more().scrollIntoViewIfNeeded().catch(() => undefined);
    await expect.poll(() => rows().count(), { timeout: UI_WAIT }).toBe(THREADS);
    expect(await more().count()).toBe(0);

    // A fresh page opened on the oldest thread: its row is there though it sorts beyond the window, and the window is back to 200.
    await page.goto(new URL(`/t/${encodeURIComponent("thread:sidebar-0")}`, ui.loom.url).href);
    await page.locator('.sidebar .tree-row.selected[data-thread-id="thread:sidebar-0"]').waitFor({ timeout: UI_WAIT });
    await more().waitFor({ timeout: UI_WAIT });
    expect(await rows().count()).toBeLessThanOrEqual(201);
    expect(await more().innerText()).toMatch(/^Show more \(249 more threads\)$|^Show more \(250 more threads\)$/);
    expect(errors).toEqual([]);
  }, 90_000);
});
