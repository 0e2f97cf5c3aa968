import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { UI_WAIT, launchFromUi, screenshotDir, signedInPage, timelineItems } from "../testkit/browser.js";
import { childScript } from "../testkit/delegationHarness.js";
import { LoomMcpClient } from "../testkit/mcpClient.js";
import { script } from "../testkit/loomHarness.js";

/**
 * The tree at a glance in a real browser (Debian chromium via playwright-core)
 * against a real `loom serve` whose agents are the scripted driver: a root
 * launched from the UI, given a budget through the owner's HTTP API, delegates
 * two children that run at the same time, one of them asking for an
 * approval. The root's sidebar roll-up follows the tree (running, needs you,
 * done), with its elapsed time and spend against the budget; the tree's
 * waterfall has a row per thread whose bars overlap for the two children,
 * the approval and the root's wait marked, a bar telling its run when hovered
 * or focused, and a row opening its thread. Then the same at phone width,
 * the waterfall read while a child still runs.
 */

const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted", options: { costPerTokenUsd: 0.00002 } }] }, {}, { width: 1440, height: 900 });
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ page, errors } = ui);
});

/** A root's budget, set by the owner over MCP (t3_thread_update set_budget): the new-thread dialog has no budget field. */
async function setBudget(threadId: string, budget: Record<string, number>): Promise<void> {
  const token = readFileSync(join(ui.loom.stateDir, "owner-token"), "utf8").trim();
  const owner = await LoomMcpClient.connect(`${ui.loom.url}/mcp`, token, "tree-test-owner");
  try {
    await owner.ok("t3_thread_update", { threadId, action: "set_budget", budget });
  } finally {
    await owner.close();
  }
}

/** A root that delegates `first` (sleeps, then answers) and `second` (asks an approval first, waited on), then finishes its turn. */
function treeScript(first: string, second: string, firstSleepMs: number): string {
  return script(
    { call: "delegate_task", args: { task: childScript({ sleep: firstSleepMs }, { say: `${first} done.` }), title: first } },
    { call: "delegate_task", args: { task: childScript({ approve: { kind: "command", title: "Clean the build", detail: "rm -rf build" } }, { sleep: 1_500 }, { say: `${second} done.` }), title: second, mode: "wait" } },
    { say: "Both delegated." },
  );
}

const sidebarRow = (threadId: string) => page.locator(`.sidebar .tree-row[data-thread-id="${threadId}"]`);
const rollupOf = (rootId: string) => page.locator(`.sidebar .tree-rollup[data-root="${rootId}"]`);
const count = (rollup: Locator, kind: string, n: number) => rollup.locator(`[data-kind="${kind}"][data-count="${n}"]`);
const childRowId = async (rootId: string, title: string) => {
  const row = page.locator(`.sidebar li:has(> .tree-row[data-thread-id="${rootId}"]) > ul .tree-row`, { has: page.locator(".tree-title", { hasText: title }) });
  await row.waitFor({ timeout: UI_WAIT });
  return (await row.getAttribute("data-thread-id"))!;
};
const box = async (locator: Locator) => (await locator.boundingBox())!;
const sideways = () => page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");

describe("the tree at a glance in chromium", () => {
  it("rolls a root's tree up in the sidebar and draws its waterfall", async () => {
    const root = await launchFromUi(page, treeScript("First child", "Second child", 2_500), { title: "Tree root" });
    await setBudget(root, { tokens: 100_000, turns: 10, costUsd: 1 });
    const rollup = rollupOf(root);
    // While the first child sleeps, the second waits on its approval: one running, one needing you.
    await rollup.locator(`[data-kind="running"]`).first().waitFor({ timeout: UI_WAIT });
    await count(rollup, "waitingOnYou", 1).waitFor({ timeout: UI_WAIT });
    expect(await count(rollup, "waitingOnYou", 1).innerText()).toBe("1 needs you");
    await rollup.locator(".rollup-time").waitFor();
    expect(await rollup.locator(".rollup-time").innerText()).toMatch(/^[\d.]+s( so far)?$|^\d+m \d+s( so far)?$/);
    // Spend against the root's budget: each limit with what the tree spent.
    await rollup.locator('[data-budget] [data-kind="turns"]').waitFor({ timeout: UI_WAIT });
    expect(await rollup.locator('[data-budget] [data-kind="turns"]').innerText()).toMatch(/^\d+\/10 turns$/);
    expect(await rollup.locator('[data-budget] [data-kind="tokens"]').innerText()).toMatch(/^[\d.k]+\/100k tok$/);
    expect(await rollup.locator('[data-budget] [data-kind="costUsd"]').innerText()).toMatch(/^\$[\d.e-]+\/\$1\.00$/);

    // The first child finishes: done grows, the approval still needs you.
    const first = await childRowId(root, "First child");
    const second = await childRowId(root, "Second child");
    await sidebarRow(first).locator(".badge-done").waitFor({ timeout: UI_WAIT });
    await count(rollup, "done", 2).waitFor({ timeout: UI_WAIT });
    await count(rollup, "waitingOnYou", 1).waitFor();
    await page.locator(".sidebar").screenshot({ path: join(shots, "tree-rollup.png") });

    // Approved from the child's page, the second child finishes and the whole tree is done.
    await sidebarRow(second).locator(".tree-link").click();
    await timelineItems(page, "approval_request").getByRole("button", { name: "Approve", exact: true }).click();
    await count(rollup, "done", 3).waitFor({ timeout: UI_WAIT });
    expect(await rollup.locator('[data-kind="waitingOnYou"], [data-kind="running"]').count()).toBe(0);
    const turns = await rollup.locator('[data-budget] [data-kind="turns"]').innerText();
    expect(Number(turns.split("/")[0])).toBeGreaterThanOrEqual(3);

    // The waterfall, from the root's header: a row per thread, depth first.
    await sidebarRow(root).locator(".tree-link").click();
    await page.getByRole("button", { name: "Waterfall", exact: true }).click();
    await page.waitForURL((url) => url.pathname === `/t/${encodeURIComponent(root)}/waterfall`, { timeout: UI_WAIT });
    const rows = page.locator(".waterfall .wf-row[data-thread-id]");
    await expect.poll(() => rows.count(), { timeout: UI_WAIT }).toBe(3);
    expect(await Promise.all((await rows.all()).map(async (row) => [await row.getAttribute("data-thread-id"), await row.getAttribute("data-depth")]))).toEqual([
      [root, "0"],
      [first, "1"],
      [second, "1"],
    ]);
    const bar = (threadId: string) => page.locator(`.wf-row[data-thread-id="${threadId}"] .wf-bar`).first();
    for (const id of [root, first, second]) await page.locator(`.wf-row[data-thread-id="${id}"] .wf-bar[data-status="completed"]`).first().waitFor({ timeout: UI_WAIT });
    const [rootBar, firstBar, secondBar] = [await box(bar(root)), await box(bar(first)), await box(bar(second))];
    // The children ran in parallel: their bars overlap in time, both after the root's started.
    expect(firstBar.x).toBeLessThan(secondBar.x + secondBar.width);
    expect(secondBar.x).toBeLessThan(firstBar.x + firstBar.width);
    expect(rootBar.x).toBeLessThanOrEqual(Math.min(firstBar.x, secondBar.x));
    // The second child's approval is marked on its bar, from the ask to the answer; the root's wait on it too.
    const ask = page.locator(`.wf-row[data-thread-id="${second}"] .wf-ask[data-category="approval"]`);
    await ask.waitFor();
    const askBox = await box(ask);
    expect(askBox.x).toBeGreaterThanOrEqual(secondBar.x - 1);
    expect(askBox.x + askBox.width).toBeLessThanOrEqual(secondBar.x + secondBar.width + 1);
    expect(await ask.locator(".wf-mark").getAttribute("aria-label")).toMatch(/^approval asked .+, approved after/);
    expect(await page.locator(`.wf-row[data-thread-id="${root}"] .wf-wait`).count()).toBeGreaterThanOrEqual(1);
    // Hovering a bar tells its run; so does focusing one.
    await bar(first).hover();
    const detail = page.locator(".wf-detail");
    await expect.poll(() => detail.innerText()).toMatch(/^First child · run 1 · done · started .+ · [\d.]+s · ended .+: completed/);
    await bar(second).focus();
    await expect.poll(() => detail.innerText()).toMatch(/^Second child · run 1 · done .* approval$/);
    await page.mouse.move(0, 0);
    await bar(second).hover();
    await page.screenshot({ path: join(shots, "tree-waterfall.png") });
    // A row opens its thread.
    await page.locator(`.wf-row[data-thread-id="${first}"] .wf-label`).click();
    await page.waitForURL((url) => url.pathname === `/t/${encodeURIComponent(first)}`, { timeout: UI_WAIT });
    await page.locator(".thread-head h2", { hasText: "First child" }).waitFor();
    expect(errors).toEqual([]);
  }, 90_000);

  it("at phone width: the roll-up fits the drawer, and the waterfall grows a running bar live and fits the screen", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    // The sidebar slides away as a drawer before the page's own New thread is the only one.
    await page.locator(".sidebar").waitFor({ state: "hidden", timeout: UI_WAIT });
    const root = await launchFromUi(page, treeScript("Slow child", "Asking child", 4_000), { title: "Phone root" });
    await setBudget(root, { turns: 12 });
    // The waterfall while the slow child runs: its bar running, then done.
    await page.getByRole("button", { name: "Waterfall", exact: true }).click();
    await expect.poll(() => page.locator(".waterfall .wf-row[data-thread-id]").count(), { timeout: UI_WAIT }).toBe(3);
    const slowBar = page.locator(".wf-row[data-depth='1'] .wf-bar").first();
    await page.locator(".wf-row[data-depth='1'] .wf-bar[data-status='running']").first().waitFor({ timeout: UI_WAIT });
    await page.locator(".wf-ask[data-category='approval'].pending").waitFor({ timeout: UI_WAIT });
    // Running, it reaches to now: it grows without a new read.
    const widthNow = (await box(slowBar)).width;
    await expect.poll(async () => (await box(slowBar)).width, { timeout: UI_WAIT }).toBeGreaterThan(widthNow + 2);
    expect(await sideways()).toBeLessThanOrEqual(0);

    // The drawer: the roll-up under the root, within the drawer's width.
    await page.getByRole("button", { name: "☰ Threads" }).click();
    const rollup = rollupOf(root);
    await count(rollup, "waitingOnYou", 1).waitFor({ timeout: UI_WAIT });
    await rollup.locator('[data-budget] [data-kind="turns"]').waitFor({ timeout: UI_WAIT });
    const drawer = await box(page.locator(".sidebar"));
    const line = await box(rollup);
    expect(line.x + line.width).toBeLessThanOrEqual(drawer.x + drawer.width);
    await page.screenshot({ path: join(shots, "tree-rollup-phone.png") });
    const asking = await childRowId(root, "Asking child");
    await sidebarRow(asking).locator(".tree-link").click();
    await timelineItems(page, "approval_request").getByRole("button", { name: "Approve", exact: true }).click();
    await page.getByRole("button", { name: "☰ Threads" }).click();
    await count(rollupOf(root), "done", 3).waitFor({ timeout: UI_WAIT });
    await sidebarRow(root).locator(".tree-link").click();
    await page.getByRole("button", { name: "Waterfall", exact: true }).click();
    await page.locator(".wf-row[data-depth='1'] .wf-bar[data-status='completed']").nth(1).waitFor({ timeout: UI_WAIT });
    expect(await slowBar.getAttribute("data-status")).toBe("completed");
    expect(await sideways()).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(shots, "tree-waterfall-phone.png") });
    expect(errors).toEqual([]);
  }, 90_000);
});
