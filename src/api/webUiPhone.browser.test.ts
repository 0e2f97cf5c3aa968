import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { UI_WAIT, launchFromUi, screenshotDir, signedInPage } from "../testkit/browser.js";
import { script } from "../testkit/loomHarness.js";

/**
 * The web UI at phone width (390×844) in a real browser (Debian chromium via
 * playwright-core) against a real `loom serve` with a scripted agent: the
 * sidebar is a drawer over the page, closed until "Threads" opens it and
 * closed again when a thread opens; the thread takes the whole width, no
 * page scrolls sideways, and an approval's buttons are on screen and work.
 */

const WIDTH = 390;
const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted" }] }, {}, { width: WIDTH, height: 844 });
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ page, errors } = ui);
});

/** Whether the element's box lies wholly inside the viewport's width. */
async function onScreen(locator: Locator): Promise<boolean> {
  const box = await locator.boundingBox();
  return box !== null && box.x >= 0 && box.x + box.width <= WIDTH && box.width > 0;
}

const sideways = () => page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");

describe("the web UI at phone width", () => {
  it("keeps the sidebar in a drawer, gives the thread the whole width, and an approval can be answered", async () => {
    const sidebar = page.locator("nav.sidebar");
    const toggle = page.getByRole("button", { name: "☰ Threads" });
    // Signed in: the inbox fills the page and the drawer is shut.
    expect(await sidebar.isVisible()).toBe(false);
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");

    const threadId = await launchFromUi(page, script({ say: "Before the approval." }, { approve: { kind: "command", detail: "rm -rf build", title: "Clean the build" } }, { say: "Cleaned: {{approval.decision}}" }), {
      title: "Phone approval",
    });
    const approve = page.getByRole("button", { name: "Approve", exact: true });
    await approve.waitFor({ timeout: UI_WAIT });
    // The thread takes the width; nothing of the page is off to the side.
    const main = await page.locator("main.main").boundingBox();
    expect(main!.width).toBeGreaterThanOrEqual(WIDTH - 1);
    expect(await sideways()).toBeLessThanOrEqual(0);
    expect(await onScreen(approve)).toBe(true);
    expect(await onScreen(page.getByRole("button", { name: "Decline", exact: true }))).toBe(true);
    expect(await onScreen(page.locator(".thread-head h2"))).toBe(true);
    await page.screenshot({ path: join(shots, "phone-thread.png") });

    // The drawer opens over the page with the thread in it, and closes when a thread opens.
    await toggle.click();
    await expect.poll(() => sidebar.isVisible()).toBe(true);
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");
    const row = sidebar.locator(`.tree-row[data-thread-id="${threadId}"] .tree-link`);
    // Once it has slid in, the thread's row is on screen.
    await expect.poll(() => onScreen(row)).toBe(true);
    await page.screenshot({ path: join(shots, "phone-drawer.png") });
    await row.click();
    await expect.poll(() => sidebar.isVisible()).toBe(false);
    // The scrim closes it too.
    await toggle.click();
    await expect.poll(() => sidebar.isVisible()).toBe(true);
    await page.locator(".scrim").click({ position: { x: WIDTH - 10, y: 400 } });
    await expect.poll(() => sidebar.isVisible()).toBe(false);

    // Approve, at phone width: the run goes on and says so.
    await approve.click();
    await page.locator(".timeline").getByText("Cleaned: accept").waitFor({ timeout: UI_WAIT });
    expect(await sideways()).toBeLessThanOrEqual(0);
    expect(errors).toEqual([]);
  }, 90_000);
});
