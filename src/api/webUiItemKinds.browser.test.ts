import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { Orchestrator } from "../engine/orchestrator.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import type { ServedLoom } from "../testkit/browser.js";
import { UI_WAIT, launchFromUi, screenshotDir, signedInPage, threadIdOfPage, timelineItems } from "../testkit/browser.js";
import { script } from "../testkit/loomHarness.js";
import { playRecordedThread, recordedProviderFacts, recordedTurns } from "../testkit/recordedThreads.js";

/**
 * Turn item kinds of spec 004 that the other browser tests do not show, in a
 * real browser against a real `loom serve`. Each is produced by Loom itself:
 * a scripted agent asking for a secret the owner then provides (the secret
 * request and the notification that tells the agent), launching a thread,
 * forking its own thread and switching its provider (thread created, fork,
 * handoff), an interrupt (its request and its result) and a Stop on a
 * provider that cannot interrupt (a system notice). A plan, file and web
 * searches and a compaction, which no recorded transcript holds, are the
 * scripted agent's `emit` step reporting those provider items.
 * Reasoning and a todo list come from the drivers' recorded real transcripts
 * (src/providers/claude/fixtures), played through Loom's engine into the
 * served state dir's event log before the server starts.
 */

const RECORDED_THREAD = "thread:recorded-claude";

const ui = signedInPage(
  {
    providers: [
      { id: "scripted", driver: "scripted" },
      { id: "other", driver: "scripted" },
      { id: "stubborn", driver: "scripted", options: { capabilities: { interrupt: false } } },
    ],
  },
  {
    prepare: async (stateDir) => {
      const orchestrator = await Orchestrator.open({ store: SqliteEventStore.open(join(stateDir, "loom.db")), providers: recordedProviderFacts });
      const turns = recordedTurns().filter((turn) => turn.driver === "claude" && (turn.scenario === "thinking" || turn.scenario === "todo"));
      expect(turns.map((turn) => turn.scenario)).toEqual(["thinking", "todo"]);
      await playRecordedThread(orchestrator, RECORDED_THREAD, turns, "Recorded Claude turns", "demo");
      await orchestrator.close();
    },
  },
);
let loom: ServedLoom;
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ loom, page, errors } = ui);
});

const item = (kind: string, text?: string) => timelineItems(page, kind, text);

function owner(method: string, path: string, body?: unknown): Promise<Response> {
  const token = readFileSync(join(loom.stateDir, "owner-token"), "utf8").trim();
  return fetch(`${loom.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

async function send(text: string): Promise<void> {
  await page.getByLabel("Message").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

describe("turn item kinds in chromium", () => {
  it("shows a secret request with its prompt but never the value, and the notification that the owner provided it", async () => {
    const threadId = await launchFromUi(
      page,
      script({ call: "request_secret", args: { secretName: "Deploy token", envVarName: "DEPLOY_TOKEN", description: "To push the release tag." }, as: "asked" }, { say: "Asked: {{asked.status}}" }),
      { title: "Secret keeper" },
    );
    await item("assistant_message", "Asked: pending").waitFor({ timeout: UI_WAIT });
    const request = item("secret_request", "Deploy token");
    expect(await request.locator(".item-title").innerText()).toBe("Secret requested: Deploy token as DEPLOY_TOKEN");
    expect(await request.locator(".item-body").innerText()).toContain("To push the release tag.");
    expect(await request.locator(".pill").innerText()).toBe("waiting for you");

    const listed = (await (await owner("GET", `/api/orchestration/threads/${encodeURIComponent(threadId)}/secret-requests`)).json()) as { requests: { requestId: string }[] };
    expect(listed.requests).toHaveLength(1);
    const value = "s3cr3t-value-never-shown-9f2c";
    const provided = await owner("POST", `/api/orchestration/threads/${encodeURIComponent(threadId)}/secret-requests/${encodeURIComponent(listed.requests[0]!.requestId)}`, { value });
    expect(provided.status).toBe(200);
    await request.locator(".pill", { hasText: "provided" }).waitFor({ timeout: UI_WAIT });
    // Loom tells the agent with a notification (a follow-up run), shown as a card with its title and text.
    const notice = item("notification", "Secret provided: Deploy token");
    await notice.waitFor({ timeout: UI_WAIT });
    expect(await notice.locator(".item-body").innerText()).toContain("environment variable DEPLOY_TOKEN");
    expect(await notice.locator(".pill").innerText()).toBe("queued");
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: UI_WAIT });
    await request.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, "secret-request.png") });
    // The value is nowhere on the page, nor in what the page keeps.
    expect(await page.content()).not.toContain(value);
    expect(await page.evaluate<string>("JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage), document.cookie])")).not.toContain(value);
    expect(errors).toEqual([]);
  }, 60_000);

  it("shows a thread the agent created, a fork linking both ways and a provider handoff", async () => {
    const sourceId = await launchFromUi(page, "Start the lineage.", { title: "Lineage source" });
    await item("assistant_message", "Echo: Start the lineage.").waitFor({ timeout: UI_WAIT });
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: UI_WAIT });
    await send(script({ call: "t3_thread_launch", args: { message: "Hello from the launcher.", title: "Launched helper" }, as: "launched" }, { say: "Launched." }));
    await item("assistant_message", "Launched.").waitFor({ timeout: UI_WAIT });
    const created = item("thread_created", "Launched helper");
    expect(await created.locator(".item-title").innerText()).toBe("New root thread: Launched helper");
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: UI_WAIT });

    await send(script({ call: "t3_thread_fork", args: { threadId: sourceId, title: "Lineage fork" }, as: "forked" }, { say: "Forked." }));
    await item("assistant_message", "Forked.").waitFor({ timeout: UI_WAIT });
    const fork = item("fork");
    await fork.waitFor({ timeout: UI_WAIT });
    expect(await fork.locator(".muted").innerText()).toMatch(/through run \d+/);
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: UI_WAIT });

    await send(script({ call: "t3_thread_configure", args: { threadId: sourceId, providerInstanceId: "other" } }, { say: "Switched." }));
    await item("assistant_message", "Switched.").waitFor({ timeout: UI_WAIT });
    const handoff = item("handoff");
    await handoff.waitFor({ timeout: UI_WAIT });
    expect(await handoff.locator(".item-title").innerText()).toMatch(/^Handoff scripted → other \(\w+\)$/);
    // The next run goes to the other provider and carries the handoff: it is delivered.
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: UI_WAIT });
    await send("After the switch.");
    await item("assistant_message", "After the switch.").waitFor({ timeout: UI_WAIT });
    await handoff.locator(".pill", { hasText: "ready" }).waitFor({ timeout: UI_WAIT });
    await handoff.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, "lineage-items.png") });

    // The created thread's link opens it.
    await created.getByRole("link", { name: "Launched helper" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/t/") && decodeURIComponent(url.pathname.slice(3)) !== sourceId, { timeout: UI_WAIT });
    await item("user_message", "Hello from the launcher.").waitFor({ timeout: UI_WAIT });
    expect(await page.locator(".thread-head h2").innerText()).toContain("Launched helper");

    // The fork's card links to the fork, whose own card links back to its source.
    await page.goto(`${loom.url}/t/${encodeURIComponent(sourceId)}`);
    await fork.getByRole("link", { name: "open the fork" }).click();
    await page.waitForURL((url) => decodeURIComponent(url.pathname.slice(3)) !== sourceId, { timeout: UI_WAIT });
    await page.locator(".thread-head h2", { hasText: "Lineage fork" }).waitFor({ timeout: UI_WAIT });
    const forkId = threadIdOfPage(page);
    await item("fork").getByRole("link", { name: "its source" }).click();
    await page.waitForURL(`**/t/${encodeURIComponent(sourceId)}`, { timeout: UI_WAIT });
    expect(forkId).not.toBe(sourceId);
    expect(errors).toEqual([]);
  }, 90_000);

  it("shows the notice Loom writes when Stop ends a turn its provider cannot interrupt", async () => {
    await launchFromUi(page, script({ say: "Sleeping." }, { sleep: 60_000 }, { say: "never said" }), { title: "Unstoppable", provider: "stubborn" });
    await item("assistant_message", "Sleeping.").waitFor({ timeout: UI_WAIT });
    await page.locator(".thread-meta .badge-running").waitFor({ timeout: UI_WAIT });
    await page.getByRole("button", { name: "Stop", exact: true }).click();
    const notice = item("system_notice", "The provider cannot interrupt a turn");
    await notice.waitFor({ timeout: UI_WAIT });
    expect(await notice.getAttribute("class")).toContain("notice-warning");
    expect(await notice.innerText()).toBe("Stopped. The provider cannot interrupt a turn, so its session was released.");
    await page.screenshot({ path: join(shots, "system-notice.png") });
    expect(await item("assistant_message", "never said").count()).toBe(0);
    expect(errors).toEqual([]);
  }, 60_000);

  it("shows an interrupt request's result once the turn stopped", async () => {
    await launchFromUi(page, script({ say: "Working a while." }, { sleep: 60_000 }, { say: "never said" }), { title: "Interrupted work" });
    await item("assistant_message", "Working a while.").waitFor({ timeout: UI_WAIT });
    await page.locator(".thread-meta .badge-running").waitFor({ timeout: UI_WAIT });
    await page.getByRole("button", { name: "Interrupt" }).click();
    await item("run_interrupt_request", "Interrupt requested by user").waitFor({ timeout: UI_WAIT });
    const result = item("run_interrupt_result");
    await result.waitFor({ timeout: UI_WAIT });
    expect(await result.locator(".item-title").innerText()).toBe("Interrupted");
    expect(await result.locator(".pill").innerText()).toBe("interrupted");
    await page.locator(".thread-meta .badge-interrupted").waitFor({ timeout: UI_WAIT });
    expect(await item("assistant_message", "never said").count()).toBe(0);
    expect(errors).toEqual([]);
  }, 60_000);

  it("shows a plan's steps, a file search, a web search and a compaction the agent reported", async () => {
    await launchFromUi(
      page,
      script(
        { emit: { kind: "proposed_plan", title: "Release plan", markdown: "Ship **1.2**.", steps: [{ text: "Tag the release", status: "completed" }, { text: "Publish the notes", status: "pending" }] } },
        { emit: { kind: "file_search", query: "TODO", matches: [{ path: "src/app.ts", line: 12, preview: "// TODO: retry" }], truncated: true } },
        { emit: { kind: "web_search", query: "zod discriminated union", results: [{ title: "Zod docs", url: "https://zod.dev/api", snippet: "Unions of objects" }] } },
        { emit: { kind: "compaction", trigger: "auto", tokensBefore: 120000, tokensAfter: 8000, summary: "Kept the release plan." } },
        { say: "Reported." },
      ),
      { title: "Reporting agent" },
    );
    await item("assistant_message", "Reported.").waitFor({ timeout: UI_WAIT });
    const plan = item("proposed_plan");
    expect(await plan.locator(".item-title").innerText()).toBe("Release plan");
    expect(await plan.locator("strong").innerText()).toBe("1.2");
    expect(await plan.locator("ol.steps li").allInnerTexts()).toEqual(["Tag the release", "Publish the notes"]);
    expect(await Promise.all((await plan.locator("ol.steps li").all()).map((step) => step.getAttribute("class")))).toEqual(["step-completed", "step-pending"]);
    const files = item("file_search");
    expect(await files.locator(".item-title").innerText()).toBe("File search: TODO");
    expect((await files.locator("li").innerText()).trim()).toBe("src/app.ts:12 // TODO: retry");
    expect(await files.locator(".muted").innerText()).toBe("more matches not shown");
    const web = item("web_search");
    expect(await web.locator(".item-title").innerText()).toBe("Web search: zod discriminated union");
    expect(await web.getByRole("link", { name: "Zod docs" }).getAttribute("href")).toBe("https://zod.dev/api");
    const compaction = item("compaction");
    expect(await compaction.locator(".item-title").innerText()).toBe("Context compacted (auto, provider native)");
    expect(await compaction.locator(".muted").first().innerText()).toBe("120000 → 8000 tokens");
    await compaction.locator("summary", { hasText: "Summary" }).click();
    await compaction.getByText("Kept the release plan.").waitFor({ state: "visible" });
    await plan.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, "plan-searches.png") });
    expect(errors).toEqual([]);
  }, 60_000);

  it("shows a recorded Claude turn's reasoning collapsed and its todo list with each entry's state", async () => {
    await page.goto(`${loom.url}/t/${encodeURIComponent(RECORDED_THREAD)}`);
    await page.locator(".thread-head h2", { hasText: "Recorded Claude turns" }).waitFor({ timeout: UI_WAIT });
    const reasoning = item("reasoning");
    await reasoning.waitFor({ timeout: UI_WAIT });
    // Collapsed: the label shows, the text only once opened.
    const details = reasoning.locator("details");
    expect(await details.getAttribute("open")).toBeNull();
    expect(await reasoning.locator("summary").innerText()).toBe("Reasoning");
    expect(await reasoning.getByText("pondering").isVisible()).toBe(false);
    await reasoning.locator("summary").click();
    await reasoning.getByText("pondering").waitFor({ state: "visible" });

    const todos = item("todo_list");
    await todos.waitFor({ timeout: UI_WAIT });
    expect(await todos.locator(".item-title").innerText()).toBe("To do");
    const entries = todos.locator("li");
    expect((await entries.allInnerTexts()).map((t) => t.trim())).toEqual(["☑ read the code", "◐ fix the bug", "☐ write a test"]);
    expect(await Promise.all((await entries.all()).map((entry) => entry.getAttribute("class")))).toEqual(["todo-completed", "todo-in_progress", "todo-pending"]);
    await todos.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, "reasoning-todos.png") });
    expect(errors).toEqual([]);
  }, 60_000);
});
