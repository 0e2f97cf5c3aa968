import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ServedLoom, UI_WAIT, collectPageErrors, launchChromium, launchFromUi, screenshotDir, threadIdOfPage as pageThreadId, timelineItems, reportFailedPage } from "../testkit/browser.js";
import { script } from "../testkit/loomHarness.js";

/**
 * The web UI in a real browser (Debian chromium via playwright-core) against
 * a real `loom serve` whose agents are the scripted driver: sign-in, a live
 * thread, questions, approvals, steering, interrupts, the delegation tree and
 * a server restart under an open page. Screenshots land in docs/ui/ with
 * LOOM_UI_SCREENSHOTS=1 (docs/ui.md), else in a temp dir.
 */

const WAIT = UI_WAIT;
let loom: ServedLoom;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(async () => {
  loom = await ServedLoom.start({
    providers: [
      { id: "scripted", driver: "scripted" },
      { id: "rigid", driver: "scripted", options: { capabilities: { steering: false } } },
      { id: "stubborn", driver: "scripted", options: { capabilities: { interrupt: false } } },
      { id: "careful", driver: "scripted", models: ["careful-small", "careful-large"], options: { capabilities: { runtimeModes: ["approval-required"] } } },
      // An agent CLI that is not installed: an unavailable provider, with the reason.
      { id: "broken", driver: "codex", options: { binaryPath: "/nonexistent/codex" } },
    ],
  });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light" });
  page = await context.newPage();
  errors = collectPageErrors(page);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await loom?.stop();
});

// A failed test shows what the page showed.
afterEach((ctx) => reportFailedPage(ctx.task.result?.state === "fail", page, () => loom.stderr()));

async function shot(name: string, target: Page = page): Promise<void> {
  await target.screenshot({ path: join(shots, `${name}.png`) });
}

function threadIdOfPage(): string {
  return pageThreadId(page);
}

function launch(message: string, options: { title?: string; provider?: string } = {}): Promise<string> {
  return launchFromUi(page, message, options);
}

function item(kind: string, text?: string) {
  return timelineItems(page, kind, text);
}

describe("the web UI in chromium", () => {
  it("signs in with a one-time login link: HttpOnly SameSite=Strict cookie, no token left in the URL or storage", async () => {
    // Signed out first: the page explains how to sign in.
    await page.goto(loom.url);
    await page.getByText("loom open").first().waitFor();
    const link = await loom.loginUrl();
    expect(link).toMatch(new RegExp(`^${loom.url}/login\\?code=[\\w-]{43}$`));
    await page.goto(link);
    await page.getByRole("heading", { name: "Needs you" }).waitFor({ timeout: WAIT });
    expect(new URL(page.url()).pathname).toBe("/");
    expect(page.url()).not.toContain("code=");
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: "loom_session", httpOnly: true, sameSite: "Strict", path: "/" });
    expect(await page.evaluate("[localStorage.length, sessionStorage.length, document.cookie]")).toEqual([0, 0, ""]);
    // The link is spent: a second use is refused and sets nothing.
    const other = await browser.newContext();
    const reused = await other.newPage();
    const answer = await reused.goto(link);
    expect(answer?.status()).toBe(401);
    expect(await other.cookies()).toEqual([]);
    await other.close();
    // A write with the cookie but without the CSRF header is refused; with it, accepted.
    const [forged, allowed] = await page.evaluate(async () => {
      const a = await fetch("/api/ws-ticket", { method: "POST" });
      const b = await fetch("/api/ws-ticket", { method: "POST", headers: { "x-loom-csrf": "1" } });
      return [a.status, b.status];
    });
    expect([forged, allowed]).toEqual([401, 200]);
    // That refusal was on purpose; the console check of the last tests starts after it.
    errors.length = 0;
    await shot("inbox-empty");
  }, 60_000);

  it("launches a thread and streams its command output live, then shows the finished command", async () => {
    // Long enough (6 s) that a loaded machine still shows it running.
    const command = "for i in $(seq 1 12); do echo line-$i; sleep 0.5; done";
    const threadId = await launch(script({ say: "Starting the count." }, { run: command }, { say: "Counted to **twelve**." }), { title: "Count to twelve" });
    expect(threadId).toMatch(/^thread:/);
    // The output arrives while the command still runs: the live view, before the completed item exists.
    await page.locator('.timeline [data-kind="live-output"] pre', { hasText: "line-2" }).waitFor({ timeout: WAIT });
    expect(await item("command_execution").count()).toBe(0);
    await shot("thread-streaming");
    await item("command_execution", "line-12").waitFor({ timeout: WAIT });
    await item("assistant_message", "Counted to twelve.").waitFor({ timeout: WAIT });
    // Markdown renders: the bold is an element, not asterisks.
    expect(await item("assistant_message", "Counted to").locator("strong").textContent()).toBe("twelve");
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: WAIT });
    expect(await page.locator('.timeline [data-kind="live-output"]').count()).toBe(0);
    await shot("thread-finished");
  }, 60_000);

  it("approves one request and declines another from the timeline", async () => {
    await launch(
      script(
        { approve: { kind: "command", title: "Clean the build", detail: "rm -rf build" } },
        { say: "first: {{approval.decision}}" },
        { approve: { kind: "file-change", title: "Edit the README", detail: "README.md" } },
        { say: "second: {{approval.decision}}" },
      ),
      { title: "Needs approvals" },
    );
    const first = item("approval_request", "Clean the build");
    await first.getByRole("button", { name: "Approve" }).waitFor({ timeout: WAIT });
    await page.locator(".thread-meta .badge-waiting-approval").waitFor({ timeout: WAIT });
    await shot("approval");
    await first.getByRole("button", { name: "Approve" }).click();
    await item("assistant_message", "first: accept").waitFor({ timeout: WAIT });
    expect(await first.getByRole("button", { name: "Approve" }).count()).toBe(0);
    // The decision reads in people's words, not the wire's ("accept", "decline").
    expect(await first.locator(".pill").innerText()).toBe("approved");
    const second = item("approval_request", "Edit the README");
    await second.getByRole("button", { name: "Decline" }).click();
    await item("assistant_message", "second: decline").waitFor({ timeout: WAIT });
    await item("assistant_message", "Approval declined: Edit the README").waitFor({ timeout: WAIT });
    expect(await second.locator(".pill").innerText()).toBe("declined");
  }, 60_000);

  it("steers a running turn, then interrupts it", async () => {
    await launch(script({ sleep: 60_000 }, { say: "never said" }), { title: "Long sleeper" });
    await page.locator(".thread-meta .badge-running").waitFor({ timeout: WAIT });
    await page.getByLabel("Send mode").selectOption("steer");
    await page.getByLabel("Message").fill("Go left instead.");
    await page.getByRole("button", { name: "Send" }).click();
    await item("assistant_message", "Steered: Go left instead.").waitFor({ timeout: WAIT });
    await page.getByRole("button", { name: "Interrupt" }).click();
    await page.locator(".thread-meta .badge-interrupted").waitFor({ timeout: WAIT });
    expect(await item("assistant_message", "never said").count()).toBe(0);
  }, 60_000);

  it("restarts a running turn with a new message, and Stop holds the queue until it is resumed", async () => {
    await launch(script({ sleep: 60_000 }, { say: "never said" }), { title: "Restarted sleeper" });
    await page.locator(".thread-meta .badge-running").waitFor({ timeout: WAIT });
    await page.getByLabel("Send mode").selectOption("restart");
    await page.getByLabel("Message").fill("Start over.");
    await page.getByRole("button", { name: "Send" }).click();
    await item("assistant_message", "Echo: Start over.").waitFor({ timeout: WAIT });
    await item("run_interrupt_request", "restarted with a new message").waitFor({ timeout: WAIT });
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: WAIT });
    expect(await item("assistant_message", "never said").count()).toBe(0);
    // The runs: the restarted one interrupted, the new one completed.
    await page.locator(".runs > summary", { hasText: "2 runs" }).click();
    const runs = page.getByRole("list", { name: "Runs" });
    await runs.locator('[data-run-ordinal="1"] .badge-interrupted').waitFor({ timeout: WAIT });
    await runs.locator('[data-run-ordinal="2"] .badge-done').waitFor({ timeout: WAIT });
    await shot("runs");
    await page.locator(".runs > summary").click();

    // Stop interrupts the turn and holds what was queued behind it; Resume queue runs it.
    await launch(script({ sleep: 60_000 }, { say: "never said either" }), { title: "Stopped sleeper" });
    await page.locator(".thread-meta .badge-running").waitFor({ timeout: WAIT });
    await page.getByLabel("Send mode").selectOption("queue");
    await page.getByLabel("Message").fill("After the stop.");
    await page.getByRole("button", { name: "Send" }).click();
    const queue = page.getByRole("region", { name: "Queue" });
    await queue.locator(".queue-text", { hasText: "After the stop." }).waitFor({ timeout: WAIT });
    await page.getByRole("button", { name: "Stop", exact: true }).click();
    await queue.getByText("held by Stop").waitFor({ timeout: WAIT });
    expect(await item("assistant_message", "Echo: After the stop.").count()).toBe(0);
    await queue.getByRole("button", { name: "Resume queue" }).click();
    await item("assistant_message", "Echo: After the stop.").waitFor({ timeout: WAIT });
    expect(await item("assistant_message", "never said either").count()).toBe(0);
  }, 90_000);

  it("says why steering is not offered for a provider that cannot steer", async () => {
    await launch(script({ sleep: 60_000 }), { title: "Rigid sleeper", provider: "rigid" });
    await page.locator(".thread-meta .badge-running").waitFor({ timeout: WAIT });
    const steer = page.getByLabel("Send mode").locator('option[value="steer"]');
    expect(await steer.isDisabled()).toBe(true);
    expect(await steer.textContent()).toContain("cannot be steered");
    await page.getByRole("button", { name: "Interrupt" }).click();
    await page.locator(".thread-meta .badge-interrupted").waitFor({ timeout: WAIT });
  }, 60_000);

  it("says why a provider that cannot stop a turn offers no restart and no Interrupt", async () => {
    await launch(script({ sleep: 3_000 }, { say: "Slept it off." }), { title: "Stubborn sleeper", provider: "stubborn" });
    await page.locator(".thread-meta .badge-running").waitFor({ timeout: WAIT });
    const restart = page.getByLabel("Send mode").locator('option[value="restart"]');
    expect(await restart.isDisabled()).toBe(true);
    expect(await restart.textContent()).toContain("cannot stop a turn, so it cannot restart one");
    const interrupt = page.getByRole("button", { name: "Interrupt" });
    expect(await interrupt.isDisabled()).toBe(true);
    expect(await interrupt.getAttribute("title")).toContain("cannot stop a turn");
    await item("assistant_message", "Slept it off.").waitFor({ timeout: WAIT });
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: WAIT });
  }, 60_000);

  it("renders the delegation tree, answers a child's question from the UI, and the child continues", async () => {
    // (The parent templates its whole step, so the child cannot say {{answer}}; the answered item shows it instead.)
    const child = script({ ask: "Which colour should the button be?" }, { say: "Painting it now." });
    const parentId = await launch(script({ call: "delegate_task", args: { task: child, title: "Paint the button" }, as: "d" }, { say: "Delegated {{d.taskId}}." }), {
      title: "Parent of a painter",
    });
    // The subagent card links to the child; the sidebar nests the child under its parent.
    const card = item("subagent");
    await card.waitFor({ timeout: WAIT });
    const childRow = page.locator(`li:has(> .tree-row[data-thread-id="${parentId}"]) > ul .tree-row`);
    await childRow.waitFor({ timeout: WAIT });
    const childId = await childRow.getAttribute("data-thread-id");
    expect(childId).toMatch(/^thread:/);
    await childRow.locator(".badge-waiting-input").waitFor({ timeout: WAIT });
    // The parent's own turn is over while its child still works: it waits on children.
    await page.locator(`.tree-row[data-thread-id="${parentId}"] .badge-waiting-children`).waitFor({ timeout: WAIT });
    // Collapsing the parent keeps a roll-up of what it hides.
    await page.locator(`.tree-row[data-thread-id="${parentId}"] .twisty`).click();
    await page.locator(".rollup", { hasText: "1 needs you" }).waitFor();
    await shot("tree-collapsed");
    await page.locator(`.tree-row[data-thread-id="${parentId}"] .twisty`).click();
    // The project folder is outside git: its checkpoint saved nothing, and says so instead of calling it lost.
    // No file changed, so each checkpoint is one quiet line with its reason folded inside, not a card.
    const quiet = page.locator(".item-checkpoint.checkpoint-quiet", { hasText: "no files changed" }).first();
    await quiet.waitFor({ timeout: WAIT });
    expect(await quiet.locator(".not-restorable").textContent()).toContain("nothing was saved to restore (a folder outside git");
    expect(await page.locator(".item-checkpoint:not(.checkpoint-quiet)").count()).toBe(0);
    expect(await page.locator(".item-checkpoint button", { hasText: "Show diff" }).count()).toBe(0);
    await shot("delegation-tree");
    // Open the child from the card; its breadcrumb leads back to the parent.
    await card.getByRole("link", { name: "Open the child thread →" }).click();
    await page.waitForURL(`**/t/${encodeURIComponent(childId!)}`);
    await page.locator(".breadcrumb a", { hasText: "Parent of a painter" }).waitFor();
    const question = item("user_input_request", "Which colour");
    await question.getByLabel("answer q1").fill("teal");
    await shot("question");
    await question.getByRole("button", { name: "Answer" }).click();
    await item("assistant_message", "Painting it now.").waitFor({ timeout: WAIT });
    await question.locator(".answer", { hasText: "teal" }).waitFor();
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: WAIT });
    // Back up the breadcrumb to the parent.
    await page.locator(".breadcrumb a", { hasText: "Parent of a painter" }).click();
    await page.waitForURL(`**/t/${encodeURIComponent(parentId)}`);
    await item("subagent", "Painting it now.").waitFor({ timeout: WAIT });
    // The completion notice reads for a person: the task, its status and result, a link; the agent's text folded away.
    const done = page.locator('.timeline [data-task-done="true"]');
    await done.waitFor({ timeout: WAIT });
    expect(await done.locator(".item-title").innerText()).toBe("Task done: Paint the button");
    expect(await done.locator(".pill").innerText()).toBe("done");
    await done.locator(".item-body .markdown", { hasText: "Painting it now." }).waitFor();
    expect(await done.getByText("Use task_status", { exact: false }).isVisible()).toBe(false);
    await shot("task-done");
    await done.getByText("What the agent was told").click();
    expect(await done.getByText("Use task_status", { exact: false }).isVisible()).toBe(true);
    await done.getByRole("link", { name: "Open the child thread →" }).click();
    await page.waitForURL(`**/t/${encodeURIComponent(childId!)}`);
  }, 90_000);

  it("shows a parent blocked in a delegate_task wait as waiting on children, and running again once the child's result is back", async () => {
    const child = script({ sleep: 2_500 }, { say: "Measured twice." });
    const parentId = await launch(script({ call: "delegate_task", args: { task: child, title: "Measure", mode: "wait" }, as: "d" }, { say: "Back from the child: {{d.status}}." }), {
      title: "Parent that waits",
    });
    const parentRow = page.locator(`.tree-row[data-thread-id="${parentId}"]`);
    await parentRow.locator(".badge-waiting-children").waitFor({ timeout: WAIT });
    await page.locator(".thread-meta .badge-waiting-children").waitFor({ timeout: WAIT });
    await shot("waiting-on-children");
    await item("assistant_message", "Back from the child: completed.").waitFor({ timeout: WAIT });
    await parentRow.locator(".badge-done").waitFor({ timeout: WAIT });
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: WAIT });
  }, 60_000);

  it("shows every provider with its availability and the reason when unavailable, pickers that follow the capability records, and the likely spend", async () => {
    await page.getByRole("button", { name: "New thread" }).click();
    const dialog = page.getByRole("dialog", { name: "New thread" });
    const options = await dialog.getByLabel("Provider").locator("option").allTextContents();
    expect(options.some((o) => o.includes("(scripted)"))).toBe(true);
    expect(options.some((o) => o.includes("(rigid)"))).toBe(true);
    // An unavailable provider cannot be picked, and says why.
    const broken = dialog.getByLabel("Provider").locator('option[value="broken"]');
    expect(await broken.isDisabled()).toBe(true);
    expect(await broken.textContent()).toMatch(/unavailable: .*\/nonexistent\/codex/);
    // The model and runtime mode pickers follow the provider's capability record.
    await dialog.getByLabel("Provider").selectOption("careful");
    expect(await dialog.getByLabel("Model").locator("option").allTextContents()).toEqual(["provider default", "careful-small", "careful-large"]);
    const runtime = dialog.getByLabel("Runtime mode");
    expect(await runtime.locator('option[value="approval-required"]').isDisabled()).toBe(false);
    expect(await runtime.locator('option[value="full-access"]').isDisabled()).toBe(true);
    expect(await runtime.locator('option[value="full-access"]').textContent()).toContain("not offered by this provider");
    expect((await dialog.getByLabel("Interaction mode").locator("option").allTextContents()).length).toBeGreaterThan(1);
    // The likely spend on the chosen provider and model, before anything starts: none on careful, which ran nothing yet.
    const estimate = dialog.getByLabel("Estimate");
    await dialog.getByText("No earlier task on this provider and model yet: no estimate.").waitFor({ timeout: WAIT });
    await dialog.getByLabel("Provider").selectOption("scripted");
    expect(await runtime.locator('option[value="full-access"]').isDisabled()).toBe(false);
    // The delegated child above ran on scripted: its history gives the figures, and says how many tasks they come from.
    await estimate.getByText(/^Likely spend/).waitFor({ timeout: WAIT });
    expect(await estimate.innerText()).toMatch(/^Likely spend: ~[\d,]+ tokens, cost unknown, ~\d+ s \(from \d+ earlier tasks?\)$/);
    await dialog.getByLabel("First message").fill("Summarize the open pull requests.");
    await shot("new-thread");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    // The providers page says the same.
    await page.getByRole("link", { name: "Providers" }).click();
    const row = page.locator('tr[data-provider-id="broken"]');
    await row.waitFor({ timeout: WAIT });
    expect(await row.innerText()).toMatch(/unavailable[\s\S]*\/nonexistent\/codex/);
    expect(await page.locator('tr[data-provider-id="careful"]').innerText()).toContain("available");
  }, 30_000);

  it("logs no console errors on any view", async () => {
    await page.goto(`${loom.url}/`);
    await page.getByRole("heading", { name: "Needs you" }).waitFor({ timeout: WAIT });
    await shot("inbox");
    const dark = await context.browser()!.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "dark", storageState: await context.storageState() });
    const darkPage = await dark.newPage();
    const darkErrors = collectPageErrors(darkPage);
    await darkPage.goto(page.url());
    await darkPage.locator(".tree-row").first().click();
    await darkPage.locator(".timeline .item").first().waitFor({ timeout: WAIT });
    await shot("thread-dark", darkPage);
    await dark.close();
    expect([...errors, ...darkErrors]).toEqual([]);
  }, 60_000);

  it("recovers when the server restarts under an open page", async () => {
    const threadId = await launch("before the restart", { title: "Survives restarts" });
    await item("assistant_message", "Echo: before the restart").waitFor({ timeout: WAIT });
    const errorsBefore = errors.length;
    await loom.stop();
    await page.getByRole("status").filter({ hasText: "reconnecting" }).waitFor({ timeout: WAIT });
    // It says what to do if the server does not come back where it was.
    expect(await page.getByRole("status").innerText()).toContain("run loom open for a sign-in link to its new address");
    await shot("reconnecting");
    await loom.restart();
    // The page reconnects by itself (the session cookie survived the restart) and its subscriptions resume.
    await page.getByRole("status").waitFor({ state: "detached", timeout: WAIT });
    expect(threadIdOfPage()).toBe(threadId);
    await page.getByLabel("Message").fill("after the restart");
    await page.getByRole("button", { name: "Send" }).click();
    await item("assistant_message", "Echo: after the restart").waitFor({ timeout: WAIT });
    // The only errors are the browser's own reports of the refused connections while the server was down.
    const outage = errors.slice(errorsBefore);
    expect(outage.every((e) => /ERR_CONNECTION_(REFUSED|RESET)|WebSocket connection to .* failed/.test(e)), outage.join("\n")).toBe(true);
  }, 90_000);
});
