import { join } from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { UI_WAIT, launchFromUi, screenshotDir, signedInPage, threadIdOfPage } from "../testkit/browser.js";
import { childScript } from "../testkit/delegationHarness.js";
import { script } from "../testkit/loomHarness.js";

/**
 * A workflow's panel on its parent thread, in a real browser (Debian
 * chromium via playwright-core) against a real `loom serve` whose agents are
 * the scripted driver: a parent launched from the UI starts a workflow of two
 * phases (two reviews in parallel on one instance, then a verify on the
 * parent's), and the panel follows it live: its name and description, the
 * phases going from not started to in progress to done, each step running
 * then done with its provider, time, spend and schema result, a link that
 * opens the step's child thread; then at phone width a workflow stopped from
 * its panel, its step failed with workflow_stopped and Stop no longer offered.
 */

const ui = signedInPage(
  {
    providers: [
      { id: "scripted", driver: "scripted", options: { costPerTokenUsd: 0.00002 } },
      { id: "helper", driver: "scripted" },
    ],
  },
  {},
  { width: 1440, height: 900 },
);
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ page, errors } = ui);
});

const js = (value: unknown) => JSON.stringify(value);
const FINDINGS = { type: "object", properties: { file: { type: "string" }, issues: { type: "integer" } }, required: ["file", "issues"] };
const VERDICT = { type: "object", properties: { ok: { type: "boolean" }, note: { type: "string" } }, required: ["ok"] };

const REVIEW_VERIFY = `
export const meta = { name: "review-then-verify", description: "Review two files in parallel, then verify the reviews.", phases: [{ title: "Review" }, { title: "Verify" }] };
phase("Review");
const reviews = await parallel(["auth.ts", "session.ts"].map((file) => () => agent(${js(childScript({ sleep: 2_500 }, { say: '{"file": "FILE", "issues": 2}' }))}.replace("FILE", file), { label: "review " + file, schema: ${js(FINDINGS)}, target: { providerInstanceId: "helper" } })));
phase("Verify");
const verdict = await agent(${js(childScript({ sleep: 3_000 }, { say: '{"ok": true, "note": "both reviews hold"}' }))}, { label: "verify the reviews", schema: ${js(VERDICT)} });
return { reviews, verdict };
`;

const SLOW = `
export const meta = { name: "slow-one", description: "One agent that takes its time.", phases: [{ title: "Slow" }, { title: "Never reached" }] };
phase("Slow");
await agent(${js(childScript({ sleep: 60_000 }, { say: "late" }))}, { label: "the slow agent" });
phase("Never reached");
return "finished";
`;

const panel = () => page.locator('.timeline [data-kind="workflow"]');
const phase = (title: string, status: string) => panel().locator(`.workflow-phase[data-phase="${title}"][data-status="${status}"]`);
const step = (label: string, status?: string) => panel().locator(`.workflow-step${status === undefined ? "" : `[data-status="${status}"]`}`, { hasText: label });
const sideways = () => page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");

let reviewParent = "";

describe("a workflow's panel in chromium", () => {
  it("follows a workflow live: phases, steps running then done with provider, spend and result, and a link to a child", async () => {
    reviewParent = await launchFromUi(page, script({ call: "t3_workflow_start", args: { script: REVIEW_VERIFY }, as: "w" }, { say: "Workflow started." }), {
      title: "Review the login code",
      provider: "scripted",
    });
    await panel().waitFor({ timeout: UI_WAIT });
    await panel().locator(".item-title", { hasText: "Workflow: review-then-verify" }).waitFor({ timeout: UI_WAIT });
    await panel().getByText("Review two files in parallel, then verify the reviews.").waitFor({ timeout: UI_WAIT });

    // Review runs: both reviews at once on helper, Verify not started.
    await phase("Review", "active").waitFor({ timeout: UI_WAIT });
    expect(await phase("Verify", "pending").count()).toBe(1);
    await step("review auth.ts", "running").waitFor({ timeout: UI_WAIT });
    await step("review session.ts", "running").waitFor({ timeout: UI_WAIT });
    expect(await step("review auth.ts").locator(".step-provider").innerText()).toBe("helper");
    expect(await step("review auth.ts").locator(".pill-running").innerText()).toBe("running");
    await panel().getByRole("button", { name: "Stop workflow" }).waitFor();
    // The sidebar marks the parent's row with the workflow's steps done so far, live.
    const mark = page.locator(`.sidebar .tree-row[data-thread-id="${reviewParent}"] [data-testid="workflow-mark"]`);
    await mark.filter({ hasText: "⚙ 0/2" }).waitFor({ timeout: UI_WAIT });
    expect(await mark.getAttribute("title")).toBe("Workflow review-then-verify: running, 0/2 steps done");

    // Verify runs once both reviews are done, their schema results shown.
    await phase("Verify", "active").waitFor({ timeout: UI_WAIT });
    await phase("Review", "done").waitFor({ timeout: UI_WAIT });
    await step("verify the reviews", "running").waitFor({ timeout: UI_WAIT });
    await mark.filter({ hasText: "⚙ 2/3" }).waitFor({ timeout: UI_WAIT });
    const review = step("review auth.ts", "completed");
    await review.waitFor({ timeout: UI_WAIT });
    expect(await review.locator(".pill-completed").innerText()).toBe("done");
    expect(JSON.parse(await review.locator(".workflow-result").innerText())).toEqual({ file: "auth.ts", issues: 2 });
    await review.locator(".step-spend", { hasText: "tokens" }).waitFor({ timeout: UI_WAIT });
    expect(await review.locator(".step-elapsed").innerText()).toMatch(/\d(\.\d)? s$/);
    expect(await step("verify the reviews").locator(".step-provider").innerText()).toBe("scripted");
    await panel().scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, "workflow-panel-running.png") });

    // Done: every phase and step, the workflow's result, and no Stop (with the reason).
    await page.locator('.timeline [data-kind="workflow"][data-status="completed"]').waitFor({ timeout: UI_WAIT });
    await phase("Verify", "done").waitFor({ timeout: UI_WAIT });
    expect(await panel().locator('.workflow-step[data-status="completed"]').count()).toBe(3);
    const verify = step("verify the reviews", "completed");
    expect(JSON.parse(await verify.locator(".workflow-result").innerText())).toEqual({ ok: true, note: "both reviews hold" });
    // The verify ran on the instance that reports a cost.
    await verify.locator(".step-spend", { hasText: "$" }).waitFor({ timeout: UI_WAIT });
    await panel().locator(".no-stop", { hasText: "Stop is not offered: it already finished." }).waitFor({ timeout: UI_WAIT });
    expect(await panel().getByRole("button", { name: "Stop workflow" }).count()).toBe(0);
    expect(await panel().locator(".item-title + .pill").innerText()).toBe("done");
    await mark.filter({ hasText: "⚙ done" }).waitFor({ timeout: UI_WAIT });
    // The agent's own t3_workflow_start call is one folded line, not a JSON block.
    await page.locator('.timeline .workflow-call[data-tool="t3_workflow_start"]', { hasText: "Started the workflow “review-then-verify”" }).waitFor({ timeout: UI_WAIT });
    await panel().scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, "workflow-panel.png") });

    // A step's link opens its child thread, under the parent.
    await step("review session.ts").getByRole("link").click();
    await page.waitForURL((url) => url.pathname.startsWith("/t/") && !url.pathname.endsWith(encodeURIComponent(reviewParent)), { timeout: UI_WAIT });
    const child = threadIdOfPage(page);
    await page.locator(".breadcrumb a", { hasText: "Review the login code" }).waitFor({ timeout: UI_WAIT });
    await page.locator(".timeline").getByText('"file": "session.ts"', { exact: false }).first().waitFor({ timeout: UI_WAIT });
    expect(child).not.toBe(reviewParent);

    // The panel's read: the workflow with its description, times and spend (the session cookie); an unknown one is a 404.
    await page.goBack();
    await page.waitForURL(`**/t/${encodeURIComponent(reviewParent)}`, { timeout: UI_WAIT });
    const workflowId = await panel().getAttribute("data-workflow-id", { timeout: UI_WAIT });
    const read = await page.request.get(new URL(`/api/ui/workflows/${encodeURIComponent(workflowId!)}`, page.url()).href);
    expect(read.status()).toBe(200);
    expect(await read.json()).toMatchObject({ name: "review-then-verify", description: "Review two files in parallel, then verify the reviews.", status: "completed", steps: [{ label: "review auth.ts" }, { label: "review session.ts" }, { label: "verify the reviews" }] });
    const missing = await page.request.get(new URL("/api/ui/workflows/workflow%3Anone", page.url()).href);
    expect(missing.status()).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("workflow_not_found");
    expect(errors).toEqual([]);
  }, 120_000);

  it("at phone width: the panel fits the screen, and Stop on a running workflow stops it", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(new URL(`/t/${encodeURIComponent(reviewParent)}`, page.url()).href);
    await page.locator('.timeline [data-kind="workflow"][data-status="completed"]').waitFor({ timeout: UI_WAIT });
    // Its top at the top of the timeline (the test's own tsconfig has no DOM types).
    await panel().evaluate((element: { scrollIntoView(options: { block: "start" }): void }) => element.scrollIntoView({ block: "start" }));
    expect(await sideways()).toBeLessThanOrEqual(0);
    const box = await panel().boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(shots, "workflow-panel-phone.png") });

    await launchFromUi(page, script({ call: "t3_workflow_start", args: { script: SLOW }, as: "w" }, { say: "Started the slow one." }), { title: "A slow workflow", provider: "scripted" });
    await panel().locator(".item-title", { hasText: "Workflow: slow-one" }).waitFor({ timeout: UI_WAIT });
    await step("the slow agent", "running").waitFor({ timeout: UI_WAIT });
    await phase("Slow", "active").waitFor({ timeout: UI_WAIT });
    const stop = panel().getByRole("button", { name: "Stop workflow" });
    await stop.click();
    await page.locator('.timeline [data-kind="workflow"][data-status="stopped"]').waitFor({ timeout: UI_WAIT });
    expect(await panel().locator(".item-title + .pill").innerText()).toBe("stopped");
    const stopped = step("the slow agent", "failed");
    await stopped.waitFor({ timeout: UI_WAIT });
    expect(await stopped.locator(".step-error").innerText()).toContain("workflow_stopped");
    await panel().locator(".no-stop", { hasText: "Stop is not offered: it was stopped" }).waitFor({ timeout: UI_WAIT });
    expect(await phase("Never reached", "pending").count()).toBe(1);
    expect(await sideways()).toBeLessThanOrEqual(0);
    expect(errors).toEqual([]);
  }, 120_000);
});
