import { join } from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { UI_WAIT, launchFromUi, screenshotDir, signedInPage, timelineItems } from "../testkit/browser.js";
import { script } from "../testkit/loomHarness.js";

/**
 * "Needs you" answered in place, in a real browser (Debian chromium via
 * playwright-core) against a real `loom serve` with scripted agents: the
 * inbox lists each pending approval with its command and each question with
 * a reply box, under the thread's place in its tree; Approve for session and
 * a reply sent from there reach the agents, and the answered rows go.
 */

const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted" }] });
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ page, errors } = ui);
});

const inboxRequest = (text: string) => page.locator(".inbox-request", { hasText: text });

async function toInbox(): Promise<void> {
  await page.goto(new URL("/", page.url()).href);
  await page.getByRole("heading", { name: "Needs you" }).waitFor({ timeout: UI_WAIT });
}

describe("the inbox answers requests in place", () => {
  it("approves for the session and replies to a child's question from the inbox, and the agents go on", async () => {
    const cleaner = await launchFromUi(page, script({ approve: { kind: "command", detail: "rm -rf build", title: "Clean the build" } }, { say: "decision: {{approval.decision}}" }), { title: "Cleaner" });
    const child = script({ ask: "Which colour should the button be?" }, { say: "Painting it now." });
    await launchFromUi(page, script({ call: "delegate_task", args: { task: child, title: "Paint the button" }, as: "d" }, { say: "Delegated." }), { title: "Painter's parent" });

    await toInbox();
    const approval = inboxRequest("Approval: Clean the build");
    await approval.waitFor({ timeout: UI_WAIT });
    await approval.locator("pre", { hasText: "rm -rf build" }).waitFor();
    expect(await approval.locator(".item-head a").innerText()).toBe("Cleaner");
    const question = inboxRequest("Which colour should the button be?");
    await question.waitFor({ timeout: UI_WAIT });
    // The child's row says where it sits: under its parent.
    expect(await question.locator(".item-head a").innerText()).toBe("Painter's parent › Paint the button");
    await page.screenshot({ path: join(shots, "inbox-requests.png") });

    await approval.getByRole("button", { name: "Approve for session" }).click();
    await approval.waitFor({ state: "detached", timeout: UI_WAIT });
    const reply = question.getByRole("button", { name: "Reply" });
    expect(await reply.isDisabled()).toBe(true);
    await question.getByLabel("reply to Which colour should the button be?").fill("teal");
    await reply.click();
    await question.waitFor({ state: "detached", timeout: UI_WAIT });
    expect(await page.locator(".inbox-request").count()).toBe(0);

    // Both agents went on with what the inbox sent them.
    await page.goto(new URL(`/t/${encodeURIComponent(cleaner)}`, page.url()).href);
    // The scripted agent names the decision as its provider protocol carries it.
    await timelineItems(page, "assistant_message", "decision: acceptForSession").waitFor({ timeout: UI_WAIT });
    await page.locator(".sidebar .tree-link", { hasText: "Paint the button" }).click();
    await timelineItems(page, "assistant_message", "Painting it now.").waitFor({ timeout: UI_WAIT });
    await timelineItems(page, "user_input_request").locator(".answer", { hasText: "teal" }).waitFor();
    expect(errors).toEqual([]);
  }, 90_000);
});
