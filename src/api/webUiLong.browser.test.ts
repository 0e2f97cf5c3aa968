import { join } from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { UI_WAIT, launchFromUi, screenshotDir, signedInPage, timelineItems } from "../testkit/browser.js";
import { script } from "../testkit/loomHarness.js";

/**
 * The windowed timeline in a real browser (Debian chromium via
 * playwright-core) against a real `loom serve` whose scripted agent says
 * 4,999 lines: the DOM holds only the visible items and a few more, a live
 * item still appends at the bottom, and scrolling up pages in older items
 * until the thread's first item shows.
 */

const ITEMS = 5_000;
/** The one line with a word found nowhere else, for the search jump. */
const NEEDLE = 42;
const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted" }] });
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ page, errors } = ui);
});

const item = (kind: string, text?: string) => timelineItems(page, kind, text);
const itemNodes = () => page.locator(".timeline [data-kind]").count();
/** The reader scrolls the timeline all the way up with the mouse wheel. */
async function scrollToTop(): Promise<void> {
  await page.locator(".timeline").hover();
  await page.mouse.wheel(0, -1_000_000);
}
const loaded = async () => Number(await page.locator(".timeline-items").getAttribute("data-loaded"));

describe("a thread of 5,000 items in chromium", () => {
  it("keeps only the visible items in the DOM, appends live ones, and pages back to the first item", async () => {
    // One run saying 4,999 lines: with its user message, 5,000 turn items.
    const steps = Array.from({ length: ITEMS - 1 }, (_, i) => ({ say: i === NEEDLE ? `line ${i} zebra` : `line ${i}` }));
    await launchFromUi(page, script(...steps), { title: "Five thousand items" });
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: 240_000 });
    await item("assistant_message", `line ${ITEMS - 2}`).waitFor({ timeout: UI_WAIT });
    expect(await loaded()).toBeGreaterThanOrEqual(100);
    expect(await itemNodes()).toBeLessThan(60);

    // A live item appends at the bottom and is in view.
    await page.getByLabel("Message").fill("after five thousand");
    await page.keyboard.press("Control+Enter");
    const echo = item("assistant_message", "Echo: after five thousand");
    await echo.waitFor({ timeout: UI_WAIT });
    expect(await echo.isVisible()).toBe(true);

    // A search hit far back in the thread: older pages load until its item is there, then it is centered in view and marked.
    await page.getByLabel("Search threads").fill("zebra");
    // (The user message holding the script matches too; the hit wanted is the line the agent said.)
    await page.locator(".search-hit", { hasText: "zebra" }).filter({ hasNotText: "say" }).click();
    const needle = page.locator(".timeline-row.jump-target").filter({ hasText: `line ${NEEDLE} zebra` });
    await needle.waitFor({ timeout: UI_WAIT });
    const [box, view] = [await needle.boundingBox(), await page.locator(".timeline").boundingBox()];
    expect(box!.y).toBeGreaterThanOrEqual(view!.y);
    expect(box!.y + box!.height).toBeLessThanOrEqual(view!.y + view!.height);
    expect(await itemNodes()).toBeLessThan(60);
    await page.screenshot({ path: join(shots, "search-jump.png") });
    await page.getByLabel("Search threads").fill("");

    // Scrolling to the top pages in older items (keeping the view in place) until the first is loaded.
    for (let pages = 0; (await page.locator(".timeline-items").getAttribute("data-complete")) !== "true"; pages++) {
      expect(pages).toBeLessThan(ITEMS / 100);
      const before = await loaded();
      await scrollToTop();
      await page.locator(`.timeline-items:not([data-loaded="${before}"])`).waitFor({ timeout: UI_WAIT });
      expect(await loaded()).toBeGreaterThan(before);
    }
    expect(await loaded()).toBeGreaterThanOrEqual(ITEMS + 2);
    await scrollToTop();
    await item("assistant_message", "line 0").waitFor({ timeout: UI_WAIT });
    await page.locator('.timeline [data-kind="user_message"]').first().waitFor();
    expect(await item("assistant_message", "line 0").isVisible()).toBe(true);
    // Every item loaded, only a window of them in the DOM.
    expect(await itemNodes()).toBeLessThan(60);
    await page.screenshot({ path: join(shots, "long-thread-top.png") });
    expect(errors).toEqual([]);
  }, 400_000);
});
