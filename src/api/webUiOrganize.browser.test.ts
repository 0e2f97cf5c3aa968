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

  it("marks a thread that failed while you were elsewhere unread with its failed badge, and archives and unarchives it", async () => {
    // It fails a few seconds after launch, by when the page has opened another thread.
    const failing = await launchFromUi(page, script({ sleep: 5_000 }, { fail: "The build broke." }), { title: "Breaks later" });
    await sidebarRow(failing).locator(".badge-running").waitFor({ timeout: UI_WAIT });
    const other = await launchFromUi(page, "somewhere else", { title: "Somewhere else" });
    await timelineItems(page, "assistant_message", "Echo: somewhere else").waitFor({ timeout: UI_WAIT });
    await sidebarRow(failing).locator(".badge-failed").waitFor({ timeout: UI_WAIT });
    await sidebarRow(failing).getByLabel("unread").waitFor({ timeout: UI_WAIT });
    expect(await sidebarRow(other).getByLabel("unread").count()).toBe(0);
    await page.screenshot({ path: join(shots, "unread-failed.png") });
    // Opening it shows the error and clears the mark.
    await sidebarRow(failing).locator(".tree-link").click();
    await timelineItems(page, "error", "The build broke.").first().waitFor({ timeout: UI_WAIT });
    await page.locator(".thread-meta .badge-failed").waitFor();
    await sidebarRow(failing).getByLabel("unread").waitFor({ state: "detached", timeout: UI_WAIT });

    // Archived, it leaves the Active tab for the Archived one, and comes back when unarchived.
    await page.getByRole("button", { name: "Archive", exact: true }).click();
    await sidebarRow(failing).waitFor({ state: "detached", timeout: UI_WAIT });
    await page.getByRole("button", { name: "Archived", exact: true }).click();
    await sidebarRow(failing).waitFor({ timeout: UI_WAIT });
    expect(await sidebarRow(other).count()).toBe(0);
    await page.screenshot({ path: join(shots, "archived.png") });
    await page.getByRole("button", { name: "Unarchive" }).click();
    await sidebarRow(failing).waitFor({ state: "detached", timeout: UI_WAIT });
    await page.getByRole("button", { name: "Active", exact: true }).click();
    await sidebarRow(failing).locator(".badge-failed").waitFor({ timeout: UI_WAIT });
    expect(errors).toEqual([]);
  }, 60_000);

  it("reorders pinned threads by dragging and with Alt+Arrow keys, and the order persists after a reload", async () => {
    const ids: string[] = [];
    for (const name of ["first", "second", "third"]) {
      ids.push(await launchFromUi(page, `pinned ${name}`, { title: `Pinned ${name}` }));
      await timelineItems(page, "assistant_message", `Echo: pinned ${name}`).waitFor({ timeout: UI_WAIT });
      await page.getByRole("button", { name: "Pin", exact: true }).click();
      await sidebarRow(ids.at(-1)!).getByLabel("pinned").waitFor({ timeout: UI_WAIT });
    }
    const [first, second, third] = ids as [string, string, string];
    const pinnedRows = async () => Promise.all((await page.locator(".sidebar .tree-row:has([aria-label=pinned])").all()).map((row) => row.getAttribute("data-thread-id")));
    const orderIs = (order: string[]) => expect.poll(pinnedRows, { timeout: UI_WAIT }).toEqual(order);
    await orderIs([first, second, third]);

    // Dragged onto the top half of the first row, the third goes before it.
    await sidebarRow(third).dragTo(sidebarRow(first), { targetPosition: { x: 20, y: 2 } });
    await orderIs([third, first, second]);
    // Onto the bottom half of the last row, the first goes after it.
    const box = (await sidebarRow(second).boundingBox())!;
    await sidebarRow(first).dragTo(sidebarRow(second), { targetPosition: { x: 20, y: box.height - 2 } });
    await orderIs([third, second, first]);
    await page.screenshot({ path: join(shots, "pins-reordered.png") });

    // The keyboard: Alt+Arrow on a focused pinned thread moves it, and it keeps the focus.
    await sidebarRow(first).locator(".tree-link").focus();
    await page.keyboard.press("Alt+ArrowUp");
    await orderIs([third, first, second]);
    await page.keyboard.press("Alt+ArrowUp");
    await orderIs([first, third, second]);
    await sidebarRow(first).locator(".tree-link:focus").waitFor({ timeout: UI_WAIT });
    await page.keyboard.press("Alt+ArrowDown");
    await orderIs([third, first, second]);

    // The order is the server's: it survives a reload.
    await page.reload();
    await sidebarRow(second).getByLabel("pinned").waitFor({ timeout: UI_WAIT });
    await orderIs([third, first, second]);
    expect(errors).toEqual([]);
  }, 90_000);

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

  it("offers Raise on a spent budget, and the raise shows at once with the tree no longer paused", async () => {
    // The child's answer alone is 100 output tokens; its budget is 60 and pauses.
    const child = script({ say: "x".repeat(400) });
    await launchFromUi(page, script({ call: "delegate_task", args: { task: child, title: "Paused child", budget: { tokens: 60, onExceeded: "pause" } }, as: "d" }, { say: "Delegated." }), {
      title: "Parent of a paused child",
    });
    const card = timelineItems(page, "subagent", "xxxx");
    await card.waitFor({ timeout: UI_WAIT });
    await card.getByRole("link", { name: "Open the child thread →" }).click();
    const budget = page.getByLabel("Budget");
    await budget.getByRole("button", { name: "Raise…" }).click();
    const form = page.getByRole("form", { name: "Raise budget" });
    const tokens = form.getByLabel("tokens (tokens)");
    // Prefilled above what was spent: twice the spend, which is past the limit.
    const spent = Number(/tokens ([\d,]+) \/ 60/.exec(await budget.locator('[data-kind="tokens"]').innerText())![1]!.replaceAll(",", ""));
    expect(spent).toBeGreaterThan(60);
    expect(await tokens.inputValue()).toBe(String(spent * 2));
    await tokens.fill("-3");
    await form.getByRole("button", { name: "Raise", exact: true }).click();
    await form.locator(".error-text", { hasText: "enter a positive number of tokens" }).waitFor({ timeout: UI_WAIT });
    await tokens.fill("10000");
    // A word longer than the timeline is wide wraps inside its card: nothing of the timeline scrolls sideways.
    expect(await page.locator(".timeline").evaluate((timeline) => timeline.scrollWidth - timeline.clientWidth)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(shots, "budget-raise.png") });
    await form.getByRole("button", { name: "Raise", exact: true }).click();
    await budget.locator('[data-kind="tokens"]', { hasText: "/ 10,000" }).waitFor({ timeout: UI_WAIT });
    expect(await form.count()).toBe(0);
    expect(await budget.getByRole("button", { name: "Raise…" }).count()).toBe(0);
    expect(await budget.innerText()).not.toContain("paused on budget");
    expect(errors).toEqual([]);
  }, 60_000);

  it("archives a parent with its child after asking, leaving no child behind as a top-level row, and unarchives both", async () => {
    const child = script({ say: "Child work done." });
    const parentId = await launchFromUi(page, script({ call: "delegate_task", args: { task: child, title: "Archived with its parent" }, as: "d" }, { say: "Delegated." }), {
      title: "Parent to archive",
    });
    await timelineItems(page, "subagent", "Child work done.").waitFor({ timeout: UI_WAIT });
    const childRow = page.locator(`li:has(> .tree-row[data-thread-id="${parentId}"]) > ul .tree-row`);
    await childRow.waitFor({ timeout: UI_WAIT });
    const childId = (await childRow.getAttribute("data-thread-id"))!;
    // The confirmation names how many threads go with it; declining changes nothing.
    const asked: string[] = [];
    page.once("dialog", (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await page.getByRole("button", { name: "Archive", exact: true }).click();
    await expect.poll(() => asked).toEqual(['Archive "Parent to archive" and the 1 thread under it?']);
    expect(await sidebarRow(parentId).count()).toBe(1);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Archive", exact: true }).click();
    // Both leave the Active tab: the child is not left behind as a top-level row.
    await sidebarRow(parentId).waitFor({ state: "detached", timeout: UI_WAIT });
    await sidebarRow(childId).waitFor({ state: "detached", timeout: UI_WAIT });
    await page.getByRole("button", { name: "Archived", exact: true }).click();
    await sidebarRow(parentId).waitFor({ timeout: UI_WAIT });
    await page.locator(`li:has(> .tree-row[data-thread-id="${parentId}"]) > ul .tree-row[data-thread-id="${childId}"]`).waitFor({ timeout: UI_WAIT });
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Unarchive" }).click();
    await sidebarRow(parentId).waitFor({ state: "detached", timeout: UI_WAIT });
    await page.getByRole("button", { name: "Active", exact: true }).click();
    await sidebarRow(parentId).waitFor({ timeout: UI_WAIT });
    await sidebarRow(childId).waitFor({ timeout: UI_WAIT });
    expect(errors).toEqual([]);
  }, 60_000);

  it("deletes a parent with its child after a confirmation naming how many go with it; declining deletes nothing", async () => {
    const child = script({ say: "Child to delete done." });
    const parentId = await launchFromUi(page, script({ call: "delegate_task", args: { task: child, title: "Deleted with its parent" }, as: "d" }, { say: "Delegated." }), {
      title: "Parent to delete",
    });
    await timelineItems(page, "subagent", "Child to delete done.").waitFor({ timeout: UI_WAIT });
    const childRow = page.locator(`li:has(> .tree-row[data-thread-id="${parentId}"]) > ul .tree-row`);
    await childRow.waitFor({ timeout: UI_WAIT });
    const childId = (await childRow.getAttribute("data-thread-id"))!;
    const asked: string[] = [];
    page.once("dialog", (dialog) => {
      asked.push(dialog.message());
      void dialog.dismiss();
    });
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await expect.poll(() => asked).toEqual(['Delete "Parent to delete" and the 1 thread under it? Worktrees are removed after a last checkpoint; this cannot be undone.']);
    expect(await sidebarRow(parentId).count()).toBe(1);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await page.getByText("This thread was deleted.").waitFor({ timeout: UI_WAIT });
    await sidebarRow(parentId).waitFor({ state: "detached", timeout: UI_WAIT });
    await sidebarRow(childId).waitFor({ state: "detached", timeout: UI_WAIT });
    await page.getByRole("button", { name: "Archived", exact: true }).click();
    expect(await sidebarRow(childId).count()).toBe(0);
    await page.getByRole("button", { name: "Active", exact: true }).click();
    expect(errors).toEqual([]);
  }, 60_000);
});
