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
 * The inbox answers a child's question and an approval in place there. Then
 * a delegation tree at the same width: a running command's live card
 * with its command, a worktree child's task-done card, the composer sending
 * on Enter, the child's branch chip with Merge into parent and Open pull
 * request, every header action on screen, and Delete taking the parent with
 * its child after the confirmation.
 */

const WIDTH = 390;
const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted" }] }, { repoFiles: { "README.md": "hello\n" } }, { width: WIDTH, height: 844 });
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

  it("answers a child's question and an approval in place in the inbox at phone width, every control on screen", async () => {
    const child = script({ ask: "Which size should the logo be?" }, { say: "Sizing it now." });
    await launchFromUi(page, script({ call: "delegate_task", args: { task: child, title: "Size the logo" }, as: "d" }, { say: "Delegated." }), { title: "Logo parent" });
    await launchFromUi(page, script({ approve: { kind: "command", detail: "npm run build", title: "Build it" } }, { say: "built: {{approval.decision}}" }), { title: "Builder" });
    await page.goto(new URL("/", page.url()).href);
    await page.getByRole("heading", { name: "Needs you" }).waitFor({ timeout: UI_WAIT });
    const approval = page.locator(".inbox-request", { hasText: "Approval: Build it" });
    const question = page.locator(".inbox-request", { hasText: "Which size should the logo be?" });
    await approval.waitFor({ timeout: UI_WAIT });
    await question.waitFor({ timeout: UI_WAIT });
    // The question says where it sits in its tree, and its controls fit the screen.
    expect(await question.locator(".item-head a").innerText()).toBe("Logo parent › Size the logo");
    for (const target of [approval.getByRole("button", { name: "Approve", exact: true }), approval.getByRole("button", { name: "Approve for session" }), approval.getByRole("button", { name: "Decline" }), question.getByRole("button", { name: "Reply" })]) {
      await target.scrollIntoViewIfNeeded();
      expect(await onScreen(target)).toBe(true);
    }
    expect(await sideways()).toBeLessThanOrEqual(0);
    await approval.getByRole("button", { name: "Approve", exact: true }).click();
    await approval.waitFor({ state: "detached", timeout: UI_WAIT });
    await question.getByLabel("reply to Which size should the logo be?").fill("large");
    await question.getByRole("button", { name: "Reply" }).click();
    await question.waitFor({ state: "detached", timeout: UI_WAIT });
    expect(await page.locator(".inbox-request").count()).toBe(0);
    expect(errors).toEqual([]);
  }, 90_000);

  it("runs a delegation tree from the phone: live command, task-done card, Enter to send, branch and merge actions, and Delete of the subtree", async () => {
    const child = script({ write: { path: "phone.txt", content: "from the phone\n" } }, { say: "Wrote phone.txt." });
    const command = "for i in $(seq 1 8); do echo tick-$i; sleep 0.4; done";
    const parentId = await launchFromUi(page, script({ run: command }, { call: "delegate_task", args: { task: child, title: "Phone child", isolation: "worktree" }, as: "d" }, { say: "Delegated." }), {
      title: "Phone parent",
    });
    // The running command's card shows the command and its output, within the width.
    const live = page.locator('.timeline [data-kind="live-output"]');
    await live.filter({ hasText: "tick-1" }).waitFor({ timeout: UI_WAIT });
    expect(await live.locator(".item-title").innerText()).toMatch(/^\$ for i in/);
    expect(await onScreen(live)).toBe(true);
    // The child's completion is a compact card that fits.
    const done = page.locator('.timeline [data-task-done="true"]');
    await done.waitFor({ timeout: UI_WAIT });
    expect(await done.innerText()).toContain("Phone child");
    expect(await onScreen(done)).toBe(true);
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: UI_WAIT });
    // Enter sends from the composer.
    const composer = page.getByPlaceholder("Message the agent (Enter to send, Shift+Enter for a new line)");
    await composer.fill(script({ say: "Sent from the phone." }));
    await composer.press("Enter");
    await page.locator(".timeline").getByText("Sent from the phone.").waitFor({ timeout: UI_WAIT });
    // Every header action is on screen once scrolled to.
    for (const name of ["Waterfall", "Thread diff", "Archive", "Delete", "Stop"]) {
      const button = page.locator(".thread-head").getByRole("button", { name, exact: true });
      await button.scrollIntoViewIfNeeded();
      expect(await onScreen(button), name).toBe(true);
    }
    expect(await sideways()).toBeLessThanOrEqual(0);

    // The child: its branch chip and its integration actions fit too.
    await done.getByRole("link").first().click();
    const chip = page.getByTestId("branch");
    await chip.waitFor({ timeout: UI_WAIT });
    const childId = new URL(page.url()).pathname.split("/t/")[1]!;
    for (const target of [chip, page.getByRole("button", { name: "Merge into parent" }), page.getByRole("button", { name: "Open pull request" })]) {
      await target.scrollIntoViewIfNeeded();
      expect(await onScreen(target)).toBe(true);
    }
    expect(await sideways()).toBeLessThanOrEqual(0);

    // Delete from the phone: back on the parent, the confirmation counts the child, and both go.
    await page.locator(".breadcrumb a", { hasText: "Phone parent" }).click();
    await page.waitForURL(`**/t/${encodeURIComponent(parentId)}`, { timeout: UI_WAIT });
    const asked: string[] = [];
    page.once("dialog", (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    await page.locator(".thread-head").getByRole("button", { name: "Delete", exact: true }).click();
    await page.getByText("This thread was deleted.").waitFor({ timeout: UI_WAIT });
    expect(asked).toEqual(['Delete "Phone parent" and the 1 thread under it? Worktrees are removed after a last checkpoint; this cannot be undone.']);
    const sidebar = page.locator("nav.sidebar");
    await page.getByRole("button", { name: "☰ Threads" }).click();
    await expect.poll(() => sidebar.isVisible()).toBe(true);
    await sidebar.locator(`.tree-row[data-thread-id="${parentId}"]`).waitFor({ state: "detached", timeout: UI_WAIT });
    expect(await sidebar.locator(`.tree-row[data-thread-id="${decodeURIComponent(childId)}"]`).count()).toBe(0);
    expect(errors).toEqual([]);
  }, 120_000);
});
