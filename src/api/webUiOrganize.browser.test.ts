import { join } from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { UI_WAIT, launchFromUi, screenshotDir, signedInPage, timelineItems } from "../testkit/browser.js";
import { script } from "../testkit/loomHarness.js";

/**
 * Organizing threads and watching budgets in a real browser (Debian chromium
 * via playwright-core) against a real `loom serve` whose agents are the
 * scripted driver: Pin / Unpin and Snooze / Unsnooze on a thread, reflected
 * in the sidebar, and a delegated task's spend against its budget.
 */

const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted" }] });
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ page, errors } = ui);
});

const sidebarRow = (threadId: string) => page.locator(`.sidebar .tree-row[data-thread-id="${threadId}"]`);
const firstSidebarRow = () => page.locator(".sidebar .tree-row").first().getAttribute("data-thread-id");

describe("organizing threads in chromium", () => {
  it("pins and unpins a thread, and snoozes and unsnoozes it", async () => {
    const pinned = await launchFromUi(page, "pin me", { title: "Pin me" });
    await timelineItems(page, "assistant_message", "Echo: pin me").waitFor({ timeout: UI_WAIT });
    const other = await launchFromUi(page, "the newer one", { title: "Newer" });
    await timelineItems(page, "assistant_message", "Echo: the newer one").waitFor({ timeout: UI_WAIT });
    await sidebarRow(pinned).locator(".badge-done").waitFor({ timeout: UI_WAIT });
    expect(await firstSidebarRow()).toBe(other);

    // Pinned, it goes to the top of the sidebar with the pin mark.
    await sidebarRow(pinned).locator(".tree-link").click();
    await page.getByRole("button", { name: "Pin", exact: true }).click();
    await sidebarRow(pinned).getByLabel("pinned").waitFor({ timeout: UI_WAIT });
    expect(await firstSidebarRow()).toBe(pinned);
    await page.getByRole("button", { name: "Unpin" }).click();
    await sidebarRow(pinned).getByLabel("pinned").waitFor({ state: "detached", timeout: UI_WAIT });
    await page.getByRole("button", { name: "Pin", exact: true }).waitFor();

    // Snoozed for an hour: the badge and the header say so, until unsnoozed.
    await page.getByLabel("Snooze").selectOption("1 hour");
    await sidebarRow(pinned).locator(".badge-snoozed").waitFor({ timeout: UI_WAIT });
    await page.locator(".snoozed-until").waitFor();
    await page.screenshot({ path: join(shots, "snoozed.png") });
    await page.getByRole("button", { name: "Unsnooze" }).click();
    await sidebarRow(pinned).locator(".badge-done").waitFor({ timeout: UI_WAIT });
    await page.getByLabel("Snooze").waitFor();
    expect(errors).toEqual([]);
  }, 60_000);

  it("shows a delegated task's spend against its budget on the child thread, and nothing on a thread without one", async () => {
    const child = script({ say: "Within budget." });
    await launchFromUi(page, script({ call: "delegate_task", args: { task: child, title: "Budgeted child", budget: { turns: 5, spawns: 2 } }, as: "d" }, { say: "Delegated." }), {
      title: "Parent with a budget",
    });
    const card = timelineItems(page, "subagent", "Within budget.");
    await card.waitFor({ timeout: UI_WAIT });
    expect(await page.getByLabel("Budget").count()).toBe(0);
    await card.getByRole("link", { name: "Open the child thread →" }).click();
    const budget = page.getByLabel("Budget");
    await budget.locator('[data-kind="turns"]', { hasText: "turns 1 / 5" }).waitFor({ timeout: UI_WAIT });
    expect(await budget.locator('[data-kind="spawns"]').innerText()).toContain("spawns 0 / 2");
    expect(await budget.locator(".budget-kind").count()).toBe(2);
    await page.screenshot({ path: join(shots, "budget.png") });
    expect(errors).toEqual([]);
  }, 60_000);
});
