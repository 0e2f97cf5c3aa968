import { join } from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { UI_WAIT, launchFromUi, screenshotDir, signedInPage, threadIdOfPage, timelineItems } from "../testkit/browser.js";
import { script } from "../testkit/loomHarness.js";

/**
 * The web UI's keyboard and Markdown in a real browser (Debian chromium via
 * playwright-core) against a real `loom serve` whose agents are the scripted
 * driver: j/k/Enter through the sidebar, `w` to the next thread waiting on
 * the reader, `a`/`d` on its approval, `n`, `/`, `?`, Enter, Shift+Enter and Ctrl+Enter in the
 * composer, shortcuts inert while typing; and highlighted code blocks.
 */

const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted" }] });
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ page, errors } = ui);
});

const item = (kind: string, text?: string) => timelineItems(page, kind, text);

/** The thread ids of the sidebar's rows, top to bottom. */
async function sidebarIds(): Promise<string[]> {
  const rows = await page.locator(".sidebar .tree-row").all();
  return Promise.all(rows.map(async (row) => (await row.getAttribute("data-thread-id")) ?? ""));
}

describe("the keyboard in chromium", () => {
  let first = "";
  let second = "";

  it("opens the new-thread dialog with n, and w goes from thread to thread waiting on you, where a approves and d declines", async () => {
    const waitsOnYou = (name: string) => script({ approve: { kind: "command", title: `Run ${name}`, detail: `make ${name}` } }, { say: `${name}: {{approval.decision}}` });
    // `n` opens the dialog (launchFromUi would click the button; here the key does).
    await page.keyboard.press("n");
    const dialog = page.getByRole("dialog", { name: "New thread" });
    // Every picker lists each option once; interaction mode is default or plan.
    expect(await dialog.getByLabel("Interaction mode").locator("option").allInnerTexts()).toEqual(["default", "plan"]);
    for (const picker of await dialog.locator("select").all()) {
      const options = await picker.locator("option").allInnerTexts();
      expect(new Set(options).size).toBe(options.length);
    }
    await dialog.getByLabel("Title").fill("First waiter");
    await dialog.getByLabel("First message").fill(waitsOnYou("first"));
    await dialog.getByRole("button", { name: "Launch" }).click();
    await page.waitForURL("**/t/**");
    first = threadIdOfPage(page);
    await item("approval_request", "Run first").waitFor({ timeout: UI_WAIT });
    second = await launchFromUi(page, waitsOnYou("second"), { title: "Second waiter" });
    await item("approval_request", "Run second").waitFor({ timeout: UI_WAIT });
    await launchFromUi(page, "nothing to ask", { title: "Quiet one" });
    await item("assistant_message", "Echo: nothing to ask").waitFor({ timeout: UI_WAIT });
    await page.locator(`.tree-row[data-thread-id="${second}"] .badge-waiting-approval`).waitFor({ timeout: UI_WAIT });
    await page.locator(`.tree-row[data-thread-id="${first}"] .badge-waiting-approval`).waitFor({ timeout: UI_WAIT });

    // From the quiet thread, w opens a waiting one (the newest first), its approval marked for the keys.
    await page.keyboard.press("w");
    await page.waitForURL(`**/t/${encodeURIComponent(second)}`);
    const pending = item("approval_request", "Run second");
    await pending.locator(".key-hint").waitFor();
    expect(await pending.getAttribute("class")).toContain("key-target");
    await page.screenshot({ path: join(shots, "approval-keys.png") });
    await page.keyboard.press("a");
    await item("assistant_message", "second: accept").waitFor({ timeout: UI_WAIT });
    // w again: the other waiting thread; d declines its approval.
    await page.keyboard.press("w");
    await page.waitForURL(`**/t/${encodeURIComponent(first)}`);
    await item("approval_request", "Run first").locator(".key-hint").waitFor();
    await page.keyboard.press("d");
    await item("assistant_message", "first: decline").waitFor({ timeout: UI_WAIT });
  }, 90_000);

  it("moves through the sidebar with j and k and opens with Enter", async () => {
    await page.locator(`.tree-row[data-thread-id="${first}"] .badge-done`).waitFor({ timeout: UI_WAIT });
    const ids = await sidebarIds();
    expect(ids).toHaveLength(3);
    // The cursor starts at the open thread; j moves down, k up, never past the ends.
    const start = ids.indexOf(first);
    const cursor = () => page.locator(".sidebar .tree-row.cursor-row").getAttribute("data-thread-id");
    await page.keyboard.press("k");
    expect(await cursor()).toBe(ids[Math.max(start - 1, 0)]);
    for (let i = 0; i < 4; i++) await page.keyboard.press("j");
    expect(await cursor()).toBe(ids[2]);
    await page.keyboard.press("k");
    expect(await cursor()).toBe(ids[1]);
    await page.keyboard.press("Enter");
    await page.waitForURL(`**/t/${encodeURIComponent(ids[1] ?? "")}`);
  }, 30_000);

  it("focuses the search box with /, shows the help with ?, and ignores shortcuts while typing; Ctrl+Enter and Enter send, Shift+Enter is a new line", async () => {
    await page.keyboard.press("/");
    expect(await page.evaluate<string | null>("document.activeElement?.getAttribute('aria-label') ?? null")).toBe("Search threads");
    await page.keyboard.press("Escape");
    await page.locator("main").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("?");
    const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
    await help.waitFor();
    expect(await help.locator("kbd").allInnerTexts()).toEqual(expect.arrayContaining(["j / k", "w", "a / d", "Enter / Shift+Enter", "?"]));
    await page.screenshot({ path: join(shots, "shortcuts.png") });
    await page.keyboard.press("Escape");
    await help.waitFor({ state: "detached" });

    // Typed into the composer, the shortcut keys are just text; Ctrl+Enter sends it.
    const threadId = threadIdOfPage(page);
    await page.getByLabel("Message").click();
    await page.keyboard.type("n w j ? a /");
    await page.keyboard.press("Control+Enter");
    await item("assistant_message", "Echo: n w j ? a /").waitFor({ timeout: UI_WAIT });
    expect(threadIdOfPage(page)).toBe(threadId);
    expect(await page.getByRole("dialog").count()).toBe(0);
    expect(await page.getByLabel("Message").inputValue()).toBe("");

    // Shift+Enter is a new line and sends nothing; Enter sends both lines.
    await page.keyboard.type("first line");
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type("second line");
    expect(await page.getByLabel("Message").inputValue()).toBe("first line\nsecond line");
    expect(await item("user_message", "first line").count()).toBe(0);
    await page.keyboard.press("Enter");
    await item("assistant_message", "second line").waitFor({ timeout: UI_WAIT });
    expect(await item("user_message", "first line").count()).toBe(1);
    expect(await page.getByLabel("Message").inputValue()).toBe("");
  }, 60_000);
});

describe("Markdown in chromium", () => {
  it("highlights fenced code blocks by language and leaves unknown ones plain", async () => {
    const text = ["Here is the fix:", "", "```ts", "const limit: number = 3; // the cap", "```", "", "```", "plain <b>text</b>", "```"].join("\n");
    await launchFromUi(page, script({ say: text }), { title: "Code sample" });
    const message = item("assistant_message", "Here is the fix");
    await message.waitFor({ timeout: UI_WAIT });
    const code = message.locator("code.language-ts");
    expect(await code.locator(".hljs-keyword").first().innerText()).toBe("const");
    expect(await code.locator(".hljs-comment").innerText()).toBe("// the cap");
    expect(await code.locator(".hljs-number").innerText()).toBe("3");
    // An unlabelled block: escaped text, no markup from it.
    const plain = message.locator("pre code:not(.hljs)");
    expect((await plain.innerText()).trim()).toBe("plain <b>text</b>");
    expect(await plain.locator("b").count()).toBe(0);
    await page.screenshot({ path: join(shots, "code-highlight.png") });
    expect(errors).toEqual([]);
  }, 60_000);
});
