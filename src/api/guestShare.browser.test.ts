import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { UI_WAIT, collectPageErrors, launchFromUi, signedInPage } from "../testkit/browser.js";
import { script } from "../testkit/loomHarness.js";

/**
 * Live guest share in a real browser (Debian chromium via playwright-core)
 * against a real `loom serve` with the scripted agent: the owner, signed in,
 * shares a running thread; a guest in a second browser context opens the
 * link, watches the run go on live, suggests a message; the owner sends it and
 * the agent receives it with the guest's name before it; the owner closes the
 * share while the guest watches, and the guest's page says it ended.
 */

const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted" }] });
let page: Page;
let errors: string[];

beforeAll(() => {
  ({ page, errors } = ui);
});

/** An owner API call from the signed-in page: its session cookie, its Origin and the CSRF header, as the web UI sends them. */
async function asOwner<T>(method: "GET" | "POST" | "DELETE", path: string): Promise<T> {
  const answer = await page.evaluate(
    async ([m, p]) => {
      const res = await fetch(p!, { method: m, headers: { "x-loom-csrf": "1" } });
      return { status: res.status, body: await res.json() };
    },
    [method, path],
  );
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as T;
}

describe("a guest watches and suggests", () => {
  it("watches a run live, suggests a message the owner sends to the agent, and sees the share end", async () => {
    const threadId = await launchFromUi(page, script({ say: "Step one" }, { ask: "Which branch?" }, { say: "Going with {{answer}}" }), { title: "Shared work" });
    const shareRoute = `/api/threads/${encodeURIComponent(threadId)}/guest-share`;
    // The owner shares from the thread's header: the link to hand out, to copy, and Stop sharing.
    await page.locator(".thread-head").getByRole("button", { name: "Share…" }).click();
    const linkBox = page.getByLabel("Guest link");
    await linkBox.waitFor({ timeout: UI_WAIT });
    const link = { url: await linkBox.inputValue() };
    expect(link.url).toMatch(/\/g\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    await page.locator(".guest-share", { hasText: "Shared, not opened yet" }).waitFor({ timeout: UI_WAIT });
    expect(await asOwner<{ link: { url: string } }>("GET", shareRoute)).toMatchObject({ link: { url: link.url } });

    const guestContext = await ui.browser.newContext({ viewport: { width: 390, height: 844 } });
    const guest = await guestContext.newPage();
    const guestErrors = collectPageErrors(guest);
    await guest.goto(link.url);
    await guest.getByLabel("Your name").fill("Ada");
    await guest.getByRole("button", { name: "Watch" }).click();
    await guest.locator("#rows li[data-kind='assistant']", { hasText: "Step one" }).waitFor({ timeout: UI_WAIT });
    expect(await guest.locator("#title").innerText()).toBe("Shared work");
    await guest.locator("#status", { hasText: "Working · watching as Ada" }).waitFor();
    await page.locator(".guest-share", { hasText: "Shared with Ada" }).waitFor({ timeout: UI_WAIT });

    // The owner answers the agent's question; the guest sees the run go on without reloading.
    await page.goto(new URL("/", page.url()).href);
    const question = page.locator(".inbox-request", { hasText: "Which branch?" });
    await question.waitFor({ timeout: UI_WAIT });
    await question.getByLabel("reply to Which branch?").fill("main");
    await question.getByRole("button", { name: "Reply" }).click();
    await guest.locator("#rows li[data-kind='assistant']", { hasText: "Going with main" }).waitFor({ timeout: UI_WAIT });
    await guest.locator("#status", { hasText: "Idle" }).waitFor({ timeout: UI_WAIT });

    // The guest suggests; the owner sees it waiting and sends it; the agent receives it under the guest's name.
    await guest.getByLabel("Message for the owner").fill("Please also run the tests");
    await guest.locator("#files").setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("run them twice") });
    await guest.getByRole("button", { name: "Send to the owner" }).click();
    await guest.locator("#messages li[data-status='pending']", { hasText: "Please also run the tests" }).waitFor({ timeout: UI_WAIT });
    const inbox = await asOwner<{ messages: { id: string; threadId: string; guestName: string; text: string }[] }>("GET", "/api/guest-messages");
    const waiting = inbox.messages.find((m) => m.threadId === threadId)!;
    expect(waiting).toMatchObject({ guestName: "Ada", text: "Please also run the tests", attachments: [{ name: "notes.txt", type: "text/plain", size: 14 }] });
    // It waits in the owner's inbox, with its thread and its attachment's name.
    await page.goto(new URL("/", page.url()).href);
    const inboxed = page.getByLabel("Guest suggestions").locator(".inbox-guest-message", { hasText: "Please also run the tests" });
    await inboxed.waitFor({ timeout: UI_WAIT });
    expect(await inboxed.innerText()).toMatch(/^Shared work Ada suggests: Please also run the tests \(notes\.txt\)/);
    // On the thread's page the suggestion waits under the header; the owner sends it to the agent from there.
    await page.goto(new URL(`/t/${encodeURIComponent(threadId)}`, page.url()).href);
    const suggestion = page.getByLabel("Guest messages").locator(".guest-message", { hasText: "Please also run the tests" });
    await suggestion.waitFor({ timeout: UI_WAIT });
    expect(await suggestion.innerText()).toContain("Ada suggests:");
    // Its attachment is a download link on the owner's page, answering the guest's bytes to the owner's session.
    const attachment = suggestion.getByRole("link", { name: "notes.txt" });
    const href = await attachment.getAttribute("href");
    const downloaded = await page.evaluate(async (path) => (await fetch(path!)).text(), href);
    expect(downloaded).toBe("run them twice");
    await suggestion.getByRole("button", { name: "Send to the agent" }).click();
    await suggestion.waitFor({ state: "detached", timeout: UI_WAIT });
    await guest.locator("#rows li[data-kind='assistant']", { hasText: "Echo: Message from guest Ada, sent by the owner:" }).waitFor({ timeout: UI_WAIT });
    expect(await guest.locator("#rows li[data-kind='assistant']", { hasText: "Echo: Message from guest Ada" }).innerText()).toContain("Attachments:\n- notes.txt: ");
    await guest.locator("#messages li[data-status='sent']").waitFor({ timeout: UI_WAIT });
    // A second suggestion the owner dismisses from the inbox: it leaves the inbox and the guest sees it dismissed.
    await guest.getByLabel("Message for the owner").fill("Maybe rename it all");
    await guest.getByRole("button", { name: "Send to the owner" }).click();
    await page.goto(new URL("/", page.url()).href);
    const second = page.getByLabel("Guest suggestions").locator(".inbox-guest-message", { hasText: "Maybe rename it all" });
    await second.waitFor({ timeout: UI_WAIT });
    await second.getByRole("button", { name: "Dismiss" }).click();
    await second.waitFor({ state: "detached", timeout: UI_WAIT });
    await guest.locator("#messages li[data-status='dismissed']", { hasText: "Maybe rename it all" }).waitFor({ timeout: UI_WAIT });
    await page.goto(new URL(`/t/${encodeURIComponent(threadId)}`, page.url()).href);

    // A second browser with the same link is refused.
    const other = await (await ui.browser.newContext()).newPage();
    await other.goto(link.url);
    await other.getByLabel("Your name").fill("Eve");
    await other.getByRole("button", { name: "Watch" }).click();
    await other.locator("#notice", { hasText: "this guest link is not valid" }).waitFor({ timeout: UI_WAIT });
    expect(await other.locator("#thread").isHidden()).toBe(true);

    // The owner closes the share while the guest watches, from the header.
    await page.locator(".thread-head").getByRole("button", { name: "Stop sharing" }).click();
    await page.locator(".thread-head").getByRole("button", { name: "Share…" }).waitFor({ timeout: UI_WAIT });
    await guest.locator("#notice", { hasText: "This share has ended." }).waitFor({ timeout: UI_WAIT });
    expect(await guest.locator("#suggest").isHidden()).toBe(true);
    // The page's first read, before the guest joined, is the one refusal (404), which chromium logs; nothing else failed.
    expect(guestErrors).toEqual(["console: Failed to load resource: the server responded with a status of 404 (Not Found)"]);
    expect(errors).toEqual([]);
    await guestContext.close();
  }, 90_000);
});
