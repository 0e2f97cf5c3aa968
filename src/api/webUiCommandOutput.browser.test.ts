import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { UI_WAIT, launchFromUi, screenshotDir, signedInPage } from "../testkit/browser.js";
import { script } from "../testkit/loomHarness.js";

/**
 * A running command's live output in a real browser (Debian chromium via
 * playwright-core) against a real `loom serve` whose scripted agent runs a
 * shell command: the card shows the command line, follows the newest line
 * while the reader is at the bottom and stays put once they scroll up, and
 * Stop ends it with the turn, also after a reload.
 */

const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted" }] });
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ page, errors } = ui);
});

const card = () => page.locator('.timeline [data-kind="live-output"]');
const output = () => card().locator('[data-testid="command-output"]');
/** How far the output box is from showing its last line, in pixels, and whether it overflows at all. */
const distanceFromBottom = () => output().evaluate((pre) => ({ gap: pre.scrollHeight - pre.scrollTop - pre.clientHeight, overflows: pre.scrollHeight > pre.clientHeight, top: pre.scrollTop }));

describe("live command output in chromium", () => {
  it("shows the command, follows the newest line until the reader scrolls up, and ends with the turn on Stop", async () => {
    // Phase one prints 60 lines; phase two waits for the test's go-ahead, prints 20 more, then runs until stopped.
    const command =
      "for i in $(seq 1 60); do echo line-$i; done; while [ ! -e go ]; do sleep 0.1; done; for i in $(seq 61 80); do echo line-$i; done; while true; do sleep 0.2; done";
    await launchFromUi(page, script({ run: command }), { title: "Long output" });
    await card().filter({ hasText: "line-60" }).waitFor({ timeout: UI_WAIT });
    await expect.poll(async () => (await card().locator(".item-title").innerText()).startsWith("$ for i in")).toBe(true);
    expect(await card().locator(".pill").innerText()).toBe("running");
    // At the bottom, the newest line is in view.
    await expect.poll(distanceFromBottom).toMatchObject({ overflows: true });
    expect((await distanceFromBottom()).gap).toBeLessThanOrEqual(8);
    await page.screenshot({ path: join(shots, "command-output-following.png") });

    // Scrolled up to read, the box stays where the reader put it while more output arrives.
    await output().evaluate((pre) => {
      pre.scrollTop = 0;
      pre.dispatchEvent(new Event("scroll"));
    });
    writeFileSync(join(ui.loom.projectDir, "go"), "");
    await card().filter({ hasText: "line-80" }).waitFor({ timeout: UI_WAIT });
    expect((await distanceFromBottom()).top).toBe(0);

    // Stop: the turn ends interrupted, and so does the command's live card.
    await page.getByRole("button", { name: "Stop", exact: true }).click();
    await page.locator(".thread-meta .badge-interrupted").waitFor({ timeout: UI_WAIT });
    await expect.poll(() => card().locator(".pill").innerText(), { timeout: UI_WAIT }).toBe("interrupted");
    // After a reload nothing shows the command running.
    await page.reload();
    await page.locator(".thread-meta .badge-interrupted").waitFor({ timeout: UI_WAIT });
    await page.locator('.timeline [data-kind]').first().waitFor({ timeout: UI_WAIT });
    expect(await card().count()).toBe(0);
    expect(await page.locator(".timeline .pill-in_progress").count()).toBe(0);
    expect(errors).toEqual([]);
  }, 90_000);
});
