import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acpScript, scriptedAgentSetup } from "../testkit/acpAgentHarness.js";
import { UI_WAIT, launchFromUi, screenshotDir, signedInPage, timelineItems } from "../testkit/browser.js";

/**
 * A usage limit in the web UI, in a real browser (Debian chromium via
 * playwright-core) against a real `loom serve` whose "acp" instance is a
 * real ACP agent process (the scripted agent) that fails its prompt on a
 * usage limit resetting in an hour: the thread's header says when it resets
 * and that the work resumes by itself; Switch now with no failover instance
 * says why it cannot, and Switch now to the scripted instance moves the
 * thread and its work goes on there. An outage (a 503 on every try) whose
 * failover instance is off waits for its retry, and the banner says so.
 */

const agent = scriptedAgentSetup();
const acp = agent.instance({ id: "acp", driver: "acp" });
const ui = signedInPage({
  providers: [
    { id: "acp", driver: "acp", options: acp.options },
    { id: "scripted", driver: "scripted" },
    // An outage on flaky has somewhere to go, but its failover instance is off: the thread waits for the retry.
    { id: "flaky", driver: "acp", options: acp.options, failover: ["off"] },
    { id: "off", driver: "scripted", enabled: false },
  ],
});
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ page, errors } = ui);
});

afterAll(() => agent.close());

describe("a usage limit in chromium", () => {
  it("shows when the limit resets, refuses Switch now with nowhere to go, and switches to the instance picked", async () => {
    const resetAt = new Date(Date.now() + 3_600_000);
    await launchFromUi(page, acpScript({ fail: { code: -32603, message: "You have reached your usage limit", data: { resetAt: resetAt.toISOString() } } }), { title: "Limited", provider: "acp" });
    const banner = page.getByTestId("limit-banner");
    await banner.waitFor({ timeout: UI_WAIT });
    const at = resetAt.toLocaleTimeString("en-US", { hour: "2-digit", minute: "2-digit" });
    expect(await banner.locator("span").first().innerText()).toMatch(new RegExp(`^Waiting for the usage limit to reset at (.+ )?${at.replace(/\s/g, "\\s")}; the work resumes by itself\\.$`));
    await page.screenshot({ path: join(shots, "limit-banner.png") });

    await banner.getByRole("button", { name: "Switch now" }).click();
    const refused = banner.locator(".error-text");
    await refused.waitFor({ timeout: UI_WAIT });
    expect(await refused.innerText()).toMatch(/^provider_unavailable: thread \S+ has no failover instance/);

    await banner.getByLabel("Switch to").selectOption("scripted");
    await banner.getByRole("button", { name: "Switch now" }).click();
    await banner.waitFor({ state: "detached", timeout: UI_WAIT });
    await timelineItems(page, "system_notice", "Moved to scripted on request").waitFor({ timeout: UI_WAIT });
    await page.locator(".thread-meta .pill", { hasText: /^scripted$/ }).first().waitFor({ timeout: UI_WAIT });
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: UI_WAIT });
    await page.screenshot({ path: join(shots, "limit-switched.png") });
    // The refused switch is the one failed request the browser reports.
    expect(errors.splice(0)).toEqual(["console: Failed to load resource: the server responded with a status of 409 (Conflict)"]);
  }, 60_000);

  it("after an outage with its failover instance off, says when the work is tried again, and Switch now moves it", async () => {
    await launchFromUi(page, acpScript({ fail: { code: -32603, message: "Service unavailable", data: { status: 503 } } }), { title: "Outage", provider: "flaky" });
    const banner = page.getByTestId("limit-banner");
    // Loom's three retries come first (about 7 to 11 s of backoff).
    await banner.waitFor({ timeout: 30_000 });
    expect(await banner.locator("span").first().innerText()).toMatch(/^Stopped by provider errors past Loom's retries; the work moves to a failover instance once one is available, else it is tried here again at .+\.$/);
    await timelineItems(page, "system_notice", "Stopped by provider errors past Loom's retries").waitFor({ timeout: UI_WAIT });
    await page.screenshot({ path: join(shots, "limit-outage.png") });

    await banner.getByLabel("Switch to").selectOption("scripted");
    await banner.getByRole("button", { name: "Switch now" }).click();
    await banner.waitFor({ state: "detached", timeout: UI_WAIT });
    await timelineItems(page, "system_notice", "Moved to scripted on request, instead of waiting for flaky's errors past Loom's retries").waitFor({ timeout: UI_WAIT });
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: UI_WAIT });
    // The launch form's cost estimate for its first instance, acp, still in the limit window of the test above.
    expect(errors.splice(0)).toEqual(["console: Failed to load resource: the server responded with a status of 409 (Conflict)"]);
  }, 60_000);
});
