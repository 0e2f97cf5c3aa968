import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import type { ServedLoom } from "../testkit/browser.js";
import { UI_WAIT, launchFromUi, screenshotDir, signedInPage, timelineItems } from "../testkit/browser.js";
import { gitSync } from "../testkit/gitRepo.js";
import { script } from "../testkit/loomHarness.js";

/**
 * The web UI's work views in a real browser (Debian chromium via
 * playwright-core) against a real `loom serve` on a real git repository with
 * per-turn checkpoints, whose agent is the scripted driver writing files:
 * a turn's diff and the whole thread's, side by side and unified, a
 * confirmed rollback that restores the files on disk, the queue editor, the
 * search box over the search methods, and the schedules and providers views;
 * a merge refused for a conflict, handed back to the child from the UI.
 */

const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted" }], workspaces: { checkpoints: true } }, { repoFiles: { "README.md": "hello\n" } });
let loom: ServedLoom;
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ loom, page, errors } = ui);
});

const item = (kind: string, text?: string) => timelineItems(page, kind, text);

describe("diffs and rollback in chromium", () => {
  it("shows a turn's diff and the thread's, side by side and unified, and rolls back to a checkpoint after a confirmation", async () => {
    await launchFromUi(page, script({ write: { path: "notes.txt", content: "one\ntwo\n" } }, { say: "Wrote the notes." }), { title: "Notes writer" });
    await item("checkpoint", "notes.txt").waitFor({ timeout: UI_WAIT });
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: UI_WAIT });
    // The file change is in the timeline with its path and line counts.
    const change = item("file_change", "notes.txt");
    expect(await change.locator(".item-title").innerText()).toBe("Changed 1 file");
    expect(await change.locator(".add").innerText()).toBe("+2");
    await page.getByLabel("Message").fill(script({ write: { path: "notes.txt", content: "one\nTWO\nthree\n" } }, { write: { path: "README.md", content: "hello\nagain\n" } }, { say: "Edited." }));
    await page.getByRole("button", { name: "Send" }).click();
    const second = item("checkpoint", "Checkpoint after run 2");
    await second.waitFor({ timeout: UI_WAIT });

    // The second turn's diff: side by side on a wide window, the old line beside the new.
    await second.getByRole("button", { name: "Show diff" }).click();
    const panel = page.getByRole("region", { name: "Diff: Changes of run 2" });
    await panel.locator("table.diff-split").first().waitFor({ timeout: UI_WAIT });
    expect(await panel.locator(".diff-file-head").allInnerTexts()).toEqual(["README.md modify", "notes.txt modify"]);
    expect(await panel.locator(".diff-summary").innerText()).toContain("2 files +3 −1");
    expect(await panel.locator(".diff-code-delete").allInnerTexts()).toContain("two");
    expect(await panel.locator(".diff-code-insert").allInnerTexts()).toEqual(expect.arrayContaining(["TWO", "three", "again"]));
    await page.screenshot({ path: join(shots, "turn-diff-split.png") });
    await panel.getByRole("button", { name: "Unified" }).click();
    await panel.locator("table.diff-unified").first().waitFor();
    expect(await panel.locator("table.diff-split").count()).toBe(0);
    await page.screenshot({ path: join(shots, "turn-diff-unified.png") });

    // The whole thread's diff: both turns, against the first checkpoint.
    await page.getByRole("button", { name: "Thread diff" }).click();
    const whole = page.getByRole("region", { name: "Diff: Changes of the whole thread" });
    await whole.locator(".diff-file").first().waitFor({ timeout: UI_WAIT });
    expect(await whole.locator(".diff-file-head").allInnerTexts()).toEqual(["README.md modify", "notes.txt add"]);
    await whole.getByRole("button", { name: "Close the diff" }).click();
    await whole.waitFor({ state: "detached" });

    // Roll back to the first turn's checkpoint: nothing happens until confirmed.
    const first = item("checkpoint", "Checkpoint after run 1");
    await first.getByRole("button", { name: "Roll back…" }).click();
    const dialog = page.getByRole("dialog", { name: "Roll back" });
    await dialog.getByText("the checkpoint after run 1").waitFor();
    await page.screenshot({ path: join(shots, "rollback.png") });
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(readFileSync(join(loom.projectDir, "notes.txt"), "utf8")).toBe("one\nTWO\nthree\n");
    await first.getByRole("button", { name: "Roll back…" }).click();
    await dialog.getByRole("button", { name: "Roll back" }).click();
    await dialog.waitFor({ state: "detached" });
    // The recovery turn tells the agent (the scripted agent echoes it) after the files were restored.
    await item("assistant_message", "rolled back to checkpoint").waitFor({ timeout: UI_WAIT });
    expect(readFileSync(join(loom.projectDir, "notes.txt"), "utf8")).toBe("one\ntwo\n");
    expect(readFileSync(join(loom.projectDir, "README.md"), "utf8")).toBe("hello\n");
    // The later checkpoint went stale: no "Roll back…" on it, the reason instead; the first still offers it.
    await second.locator(".not-restorable", { hasText: "a rollback to an earlier checkpoint superseded it" }).waitFor({ timeout: UI_WAIT });
    expect(await second.getByRole("button", { name: "Roll back…" }).count()).toBe(0);
    expect(await first.getByRole("button", { name: "Roll back…" }).count()).toBe(1);
    await second.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, "checkpoint-stale.png") });
    expect(errors).toEqual([]);
  }, 90_000);

  it("edits, reorders, cancels and steers queued messages from the queue editor", async () => {
    await launchFromUi(page, script({ sleep: 60_000 }, { say: "never said" }), { title: "Busy with a queue" });
    await page.locator(".thread-meta .badge-running").waitFor({ timeout: UI_WAIT });
    for (const text of ["first follow-up", "second follow-up", "third follow-up"]) {
      await page.getByLabel("Send mode").selectOption("queue");
      await page.getByLabel("Message").fill(text);
      await page.getByRole("button", { name: "Send" }).click();
      await page.locator(".queue-text", { hasText: text }).waitFor({ timeout: UI_WAIT });
    }
    const queue = page.getByRole("region", { name: "Queue" });
    const order = () => queue.locator(".queue-text").allInnerTexts();
    expect(await order()).toEqual(["first follow-up", "second follow-up", "third follow-up"]);
    // The turn in flight stays the thread's status, not the runs queued behind it.
    await page.locator(".thread-meta .badge-running").waitFor();

    await queue.getByRole("button", { name: "Move up: third follow-up" }).click();
    await expect.poll(order, { timeout: UI_WAIT }).toEqual(["first follow-up", "third follow-up", "second follow-up"]);
    await queue.locator(".queue-row", { hasText: "second follow-up" }).getByRole("button", { name: "Edit" }).click();
    await queue.getByLabel("Edit the queued message").fill("second, edited");
    await page.screenshot({ path: join(shots, "queue.png") });
    await queue.getByRole("button", { name: "Save" }).click();
    await expect.poll(order, { timeout: UI_WAIT }).toEqual(["first follow-up", "third follow-up", "second, edited"]);
    await queue.locator(".queue-row", { hasText: "first follow-up" }).getByRole("button", { name: "Cancel" }).click();
    await expect.poll(order, { timeout: UI_WAIT }).toEqual(["third follow-up", "second, edited"]);

    // Steer one into the running turn now: it leaves the queue and the agent takes it.
    await queue.locator(".queue-row", { hasText: "third follow-up" }).getByRole("button", { name: "Steer now" }).click();
    await item("assistant_message", "Steered: third follow-up").waitFor({ timeout: UI_WAIT });
    await expect.poll(order, { timeout: UI_WAIT }).toEqual(["second, edited"]);

    // Interrupted, the turn ends and the edited message runs next; the queue empties.
    await page.getByRole("button", { name: "Interrupt" }).click();
    await item("assistant_message", "Echo: second, edited").waitFor({ timeout: UI_WAIT });
    await queue.waitFor({ state: "detached", timeout: UI_WAIT });
    expect(await item("assistant_message", "first follow-up").count()).toBe(0);
    expect(errors).toEqual([]);
  }, 90_000);

  it("finds a word in a timeline from the search box and opens its thread", async () => {
    const threadId = await launchFromUi(page, "Remember the word zephyrine for later.", { title: "Weather words" });
    await item("assistant_message", "Echo: Remember the word zephyrine").waitFor({ timeout: UI_WAIT });
    // A child of another thread, whose timeline holds the word too, under the same title.
    await launchFromUi(page, script({ call: "delegate_task", args: { task: "zephyrine again", title: "Weather words" }, as: "d" }, { say: "Delegated." }), { title: "Weather parent" });
    await item("subagent", "Echo: zephyrine again").waitFor({ timeout: UI_WAIT });
    await page.locator(".sidebar .brand").click();
    await page.getByRole("heading", { name: "Needs you" }).waitFor();
    await page.keyboard.press("/");
    await page.keyboard.type("zephyrine");
    const results = page.getByRole("region", { name: "Search results" });
    const hit = results.locator(".search-hit", { hasText: "Remember the word" }).first();
    await hit.waitFor({ timeout: UI_WAIT });
    expect(await hit.locator("mark").first().innerText()).toBe("zephyrine");
    // Two threads called "Weather words": each hit says where its thread sits.
    expect(await hit.locator(".search-hit-where").innerText()).toBe("in demo");
    expect(await hit.getAttribute("href")).toBe(`/t/${encodeURIComponent(threadId)}`);
    const childHit = results.locator(".search-hit", { hasText: "under Weather parent" }).first();
    await childHit.waitFor({ timeout: UI_WAIT });
    expect(await childHit.locator(".search-hit-title").innerText()).toBe("Weather words");
    expect(await childHit.locator(".search-hit-where").innerText()).toBe("in demo · under Weather parent");
    await page.screenshot({ path: join(shots, "search.png") });
    // Enter opens the best match's thread (one of the three that hold the word).
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname.startsWith("/t/"), { timeout: UI_WAIT });
    expect(["Weather words", "Weather parent"]).toContain(await page.locator(".thread-head h2").innerText());
    await page.getByLabel("Search threads").fill("no-such-word-anywhere");
    await results.getByText("No matches.").waitFor({ timeout: UI_WAIT });
    await page.getByLabel("Search threads").fill("");
    await results.waitFor({ state: "detached" });
    expect(errors).toEqual([]);
  }, 60_000);

  it("shows a tool call with its arguments and result", async () => {
    await launchFromUi(page, script({ call: "list_threads", args: {} }, { say: "Listed them." }), { title: "Tool caller" });
    await item("assistant_message", "Listed them.").waitFor({ timeout: UI_WAIT });
    const tool = item("dynamic_tool", "list_threads");
    await tool.locator(".pill").waitFor({ timeout: UI_WAIT });
    const status = await tool.locator(".pill").innerText();
    await tool.locator("summary", { hasText: "Arguments and result" }).click();
    const shown = JSON.parse(await tool.locator("pre").innerText()) as { arguments: unknown; result: unknown };
    expect(shown.arguments).toEqual({});
    expect(shown.result).not.toBeNull();
    expect(["done", "failed"]).toContain(status);
    expect(errors).toEqual([]);
  }, 60_000);

  it("shows a worktree child's readable branch in its header, none on a thread without a worktree, and merges the child into its parent", async () => {
    const child = script({ write: { path: "login.txt", content: "fixed\n" } }, { say: "Fixed it." });
    await launchFromUi(page, script({ call: "delegate_task", args: { task: child, title: "Fix the login page", isolation: "worktree" }, as: "d" }, { say: "Delegated." }), {
      title: "Worktree parent",
    });
    const card = item("subagent", "Fixed it.");
    await card.waitFor({ timeout: UI_WAIT });
    expect(await page.getByTestId("branch").count()).toBe(0);
    // The parent has taken the child's result (its notice turn is over), so neither workspace is busy.
    await page.locator('.timeline [data-task-done="true"]').waitFor({ timeout: UI_WAIT });
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: UI_WAIT });
    // The parent's thread diff says where the child's change is: on its branch, in its own worktree.
    await page.getByRole("button", { name: "Thread diff" }).click();
    const work = page.getByRole("region", { name: "Diff: Changes of the whole thread" }).getByLabel("Children's work");
    await work.waitFor({ timeout: UI_WAIT });
    expect(await work.innerText()).toMatch(/^A child works in a worktree of its own; their changes are on their branches, not in this diff:\s+Fix the login page ⎇ loom\/fix-the-login-page-[0-9a-f]{8} 1 file changed$/);
    await page.getByRole("button", { name: "Close the diff" }).click();
    await card.getByRole("link", { name: "Open the child thread →" }).click();
    const chip = page.getByTestId("branch");
    await chip.waitFor({ timeout: UI_WAIT });
    expect(await chip.innerText()).toMatch(/^⎇ loom\/fix-the-login-page-[0-9a-f]{8}$/);
    expect(await chip.getAttribute("title")).toContain("in the worktree ");
    // Merge into parent. The project's checkout still holds an earlier test's uncommitted notes.txt, which the
    // child's branch started from: the merge cannot run over it, and says which file is in the way.
    await page.getByRole("button", { name: "Merge into parent" }).click();
    const said = page.locator(".merge-result");
    await said.waitFor({ timeout: UI_WAIT });
    expect(await said.innerText()).toBe("workspace_conflict: local changes in the parent worktree are in the way of the merge: notes.txt");
    expect(await said.getAttribute("class")).toContain("error-text");
    // Once the parent's own change is committed, the merge brings the child's file into the parent's checkout.
    gitSync(ui.loom.projectDir, "add", "-A");
    gitSync(ui.loom.projectDir, "-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "the parent's notes");
    await page.getByRole("button", { name: "Merge into parent" }).click();
    await expect.poll(() => said.innerText(), { timeout: UI_WAIT }).toMatch(/^Merged into "Worktree parent": (fast-forward|merge commit), \d+ files?$/);
    expect(readFileSync(join(ui.loom.projectDir, "login.txt"), "utf8")).toBe("fixed\n");
    await page.screenshot({ path: join(shots, "branch-chip.png") });
    // A second merge has nothing new.
    await page.getByRole("button", { name: "Merge into parent" }).click();
    await expect.poll(() => said.innerText()).toBe('Merged into "Worktree parent": nothing new to merge, 0 files');
    // The refused merge is the one failed request the browser reports; nothing else went wrong.
    expect(errors.splice(0)).toEqual(["console: Failed to load resource: the server responded with a status of 409 (Conflict)"]);
  }, 60_000);

  it("marks worktree siblings that changed the same file in their headers, naming the file, opens the other from the mark, and hands a refused merge back", async () => {
    const child = (content: string) => script({ write: { path: "overlap.txt", content } }, { say: "Wrote it." });
    await launchFromUi(
      page,
      script(
        { call: "delegate_task", args: { task: child("one\n"), title: "Overlap one", isolation: "worktree" }, as: "a" },
        { call: "delegate_task", args: { task: child("two\n"), title: "Overlap two", isolation: "worktree" }, as: "b" },
        { say: "Delegated both." },
      ),
      { title: "Overlap parent" },
    );
    await item("subagent", "Wrote it.").nth(1).waitFor({ timeout: UI_WAIT });
    await item("subagent", "Wrote it.").first().getByRole("link", { name: "Open the child thread →" }).click();
    await page.locator(".thread-head h2", { hasText: /^Overlap (one|two)$/ }).waitFor({ timeout: UI_WAIT });
    const here = await page.locator(".thread-head h2").innerText();
    const other = here === "Overlap one" ? "Overlap two" : "Overlap one";
    const mark = page.getByTestId("overlap");
    await mark.waitFor({ timeout: UI_WAIT });
    expect(await mark.innerText()).toBe(`⚠ overlaps ${other}: overlap.txt`);
    expect(await mark.getAttribute("title")).toContain("changed the same files: overlap.txt");
    await page.screenshot({ path: join(shots, "overlap-chip.png") });
    await mark.click();
    await page.locator(".thread-head h2", { hasText: other }).waitFor({ timeout: UI_WAIT });
    await expect.poll(() => page.getByTestId("overlap").innerText(), { timeout: UI_WAIT }).toBe(`⚠ overlaps ${here}: overlap.txt`);
    expect(errors.splice(0)).toEqual([]);

    // Merged one after the other: the second meets the first's overlap.txt, is refused with nothing changed, and can be handed on.
    const said = page.locator(".merge-result");
    await page.getByRole("button", { name: "Merge into parent" }).click();
    await expect.poll(() => said.innerText(), { timeout: UI_WAIT }).toMatch(/^Merged into "Overlap parent": (fast-forward|merge commit), 1 file$/);
    const landed = readFileSync(join(ui.loom.projectDir, "overlap.txt"), "utf8");
    await page.getByTestId("overlap").click();
    await page.locator(".thread-head h2", { hasText: here }).waitFor({ timeout: UI_WAIT });
    expect(await said.count()).toBe(0);
    await page.getByRole("button", { name: "Merge into parent" }).click();
    await expect.poll(() => said.innerText(), { timeout: UI_WAIT }).toBe("workspace_conflict: the merge has conflicts in: overlap.txt");
    expect(await page.getByRole("button", { name: "Resolve with an agent" }).getAttribute("title")).toContain("a resolver thread on scripted");
    await page.screenshot({ path: join(shots, "merge-refused.png") });
    await page.getByRole("button", { name: "Hand back to this thread" }).click();
    await expect.poll(() => said.innerText(), { timeout: UI_WAIT }).toBe("Not merged: handed back to this thread (overlap.txt), with a run to resolve it; merge again once it is done");
    expect(await said.getAttribute("class")).not.toContain("error-text");
    expect(await page.getByRole("button", { name: "Hand back to this thread" }).count()).toBe(0);
    expect(readFileSync(join(ui.loom.projectDir, "overlap.txt"), "utf8")).toBe(landed);
    // The refused merge is the one failed request the browser reports.
    expect(errors.splice(0)).toEqual(["console: Failed to load resource: the server responded with a status of 409 (Conflict)"]);
  }, 90_000);

  it("launches a thread in a new worktree from a base ref, picked in the new-thread dialog", async () => {
    const base = gitSync(ui.loom.projectDir, "rev-parse", "HEAD");
    await page.getByRole("button", { name: "New thread" }).click();
    const dialog = page.getByRole("dialog", { name: "New thread" });
    // One project configured: no project picker; where the thread works is offered in words.
    expect(await dialog.getByLabel("Project").count()).toBe(0);
    const workspace = dialog.getByLabel("Workspace");
    expect(await workspace.locator("option").allTextContents()).toEqual(["project root", "new worktree (a branch of its own)", "existing worktree"]);
    // An existing worktree needs its path before Launch is offered.
    await dialog.getByLabel("Title").fill("Worktree from the dialog");
    await dialog.getByLabel("First message").fill(script({ write: { path: "dialog.txt", content: "in the worktree\n" } }, { say: "Wrote it in my worktree." }));
    await workspace.selectOption("existing_worktree");
    expect(await dialog.getByRole("button", { name: "Launch" }).isDisabled()).toBe(true);
    await workspace.selectOption("worktree");
    expect(await dialog.getByLabel("Worktree path").count()).toBe(0);
    await dialog.getByLabel("Base ref").fill(base);
    await page.screenshot({ path: join(shots, "new-thread-worktree.png") });
    await dialog.getByRole("button", { name: "Launch" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/t/"), { timeout: UI_WAIT });
    await item("assistant_message", "Wrote it in my worktree.").waitFor({ timeout: UI_WAIT });
    // The thread works on a branch of its own, named for its title, started from the base ref; the project root is untouched.
    const chip = page.getByTestId("branch");
    await chip.waitFor({ timeout: UI_WAIT });
    const branch = (await chip.innerText()).replace(/^⎇ /, "");
    expect(branch).toMatch(/^loom\/worktree-from-the-dialog-[0-9a-f]{8}$/);
    expect(gitSync(ui.loom.projectDir, "merge-base", "--is-ancestor", base, branch)).toBe("");
    expect(existsSync(join(ui.loom.projectDir, "dialog.txt"))).toBe(false);
    // Open pull request is offered on a worktree branch, and says why it cannot here: the project has no origin.
    await page.getByRole("button", { name: "Open pull request" }).click();
    const pr = page.locator(".pr-result");
    await pr.waitFor({ timeout: UI_WAIT });
    expect(await pr.innerText()).toMatch(/^workspace_unavailable: the repository of .+ has no origin remote to push loom\/worktree-from-the-dialog-[0-9a-f]{8} to$/);
    expect(errors.splice(0)).toEqual([expect.stringMatching(/^console: Failed to load resource: the server responded with a status of \d+/)]);
  }, 60_000);

  it("searches inside the open thread only and jumps to the matched item", async () => {
    await launchFromUi(page, "The quokka lives in another thread.", { title: "Elsewhere" });
    await item("assistant_message", "Echo: The quokka lives").waitFor({ timeout: UI_WAIT });
    const filler = Array.from({ length: 40 }, (_, i) => ({ say: `filler ${i}` }));
    const threadId = await launchFromUi(page, script({ say: "An early quokka sighting." }, ...filler, { say: "A late quokka sighting." }), { title: "Sightings" });
    await item("assistant_message", "A late quokka sighting.").waitFor({ timeout: UI_WAIT });
    await page.locator(".thread-meta .badge-done").waitFor({ timeout: UI_WAIT });
    // At the bottom, the early sighting is out of view.
    const early = page.locator(".timeline-row").filter({ hasText: "An early quokka sighting." });
    expect(await early.isVisible().catch(() => false)).toBe(false);

    await page.getByLabel("Search this thread").fill("quokka");
    const results = page.getByRole("region", { name: "Search results in this thread" });
    // (The user message holding the script matches too; the hits wanted are what the agent said.)
    const said = results.locator(".search-hit").filter({ hasNotText: "say" });
    await said.filter({ hasText: "late" }).waitFor({ timeout: UI_WAIT });
    expect((await said.allInnerTexts()).map((t) => t.replace(/\s+/g, " "))).toEqual([expect.stringContaining("quokka sighting"), expect.stringContaining("quokka sighting")]);
    // Only this thread: the other thread's quokka is not among the hits.
    expect(await results.locator(".search-hit", { hasText: "another thread" }).count()).toBe(0);
    expect(await page.getByRole("region", { name: "Search results", exact: true }).count()).toBe(0);
    await page.screenshot({ path: join(shots, "thread-search.png") });

    await said.filter({ hasText: "early" }).click();
    const target = page.locator(".timeline-row.jump-target").filter({ hasText: "An early quokka sighting." });
    await target.waitFor({ timeout: UI_WAIT });
    const [box, view] = [await target.boundingBox(), await page.locator(".timeline").boundingBox()];
    expect(box!.y).toBeGreaterThanOrEqual(view!.y);
    expect(box!.y + box!.height).toBeLessThanOrEqual(view!.y + view!.height);
    expect(new URL(page.url()).pathname).toBe(`/t/${encodeURIComponent(threadId)}`);
    // Enter jumps to the best hit; Escape clears the field and the hits.
    await page.getByLabel("Search this thread").press("Escape");
    await results.waitFor({ state: "detached" });
    await page.getByLabel("Search this thread").fill("late quokka");
    await results.locator(".search-hit", { hasText: "late" }).first().waitFor({ timeout: UI_WAIT });
    await page.getByLabel("Search this thread").press("Enter");
    await page.locator(".timeline-row.jump-target").filter({ hasText: "A late quokka sighting." }).waitFor({ timeout: UI_WAIT });
    expect(errors).toEqual([]);
  }, 60_000);

  it("lists, runs, pauses and deletes a scheduled task, and shows the providers", async () => {
    const ownerToken = readFileSync(join(loom.stateDir, "owner-token"), "utf8").trim();
    const owner = (method: string, path: string, body?: unknown) =>
      fetch(`${loom.url}${path}`, { method, headers: { authorization: `Bearer ${ownerToken}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const created = await owner("POST", "/api/schedules", { title: "Hourly summary", prompt: "Summarize the hour.", trigger: { type: "interval", everyMs: 3_600_000 } });
    expect(created.status).toBe(201);
    const taskId = ((await created.json()) as { scheduledTaskId: string }).scheduledTaskId;
    const enabled = async () => ((await (await owner("GET", "/api/schedules")).json()) as { tasks: { scheduledTaskId: string; enabled: boolean }[] }).tasks.map((t) => [t.scheduledTaskId, t.enabled]);

    await page.getByRole("link", { name: "Schedules" }).click();
    const row = page.locator(`tr[data-task-id="${taskId}"]`);
    await row.waitFor({ timeout: UI_WAIT });
    expect(await row.innerText()).toContain("every 1 h");
    // Run now: the fire starts a thread, linked from the row.
    await row.getByRole("button", { name: "Run now" }).click();
    await row.locator(".last-fire").getByRole("link", { name: "Open" }).waitFor({ timeout: UI_WAIT });
    await page.screenshot({ path: join(shots, "schedules.png") });
    await row.locator(".last-fire").getByRole("link", { name: "Open" }).click();
    await item("assistant_message", "Summarize the hour.").waitFor({ timeout: UI_WAIT });
    await page.keyboard.press("g");
    await page.keyboard.press("s");
    // The page's writes carry the CSRF header; the cookie alone is refused.
    const forged = await page.evaluate(async (path) => (await fetch(path, { method: "PATCH", body: JSON.stringify({ enabled: false }), headers: { "content-type": "application/json" } })).status, `/api/schedules/${encodeURIComponent(taskId)}`);
    expect(forged).toBe(401);
    expect(await enabled()).toEqual([[taskId, true]]);
    errors.length = 0; // the browser reports the refused request on the console
    await row.getByRole("button", { name: "Pause" }).click();
    await row.locator(".badge", { hasText: "paused" }).waitFor({ timeout: UI_WAIT });
    expect(await enabled()).toEqual([[taskId, false]]);
    await row.getByRole("button", { name: "Resume" }).waitFor();
    // Delete asks twice.
    await row.getByRole("button", { name: "Delete" }).click();
    expect(await enabled()).toEqual([[taskId, false]]);
    await row.getByRole("button", { name: "Really delete" }).click();
    await row.waitFor({ state: "detached", timeout: UI_WAIT });
    expect(await enabled()).toEqual([]);

    await page.getByRole("link", { name: "Providers" }).click();
    const provider = page.locator('tr[data-provider-id="scripted"]');
    await provider.waitFor({ timeout: UI_WAIT });
    expect(await provider.locator("td").allInnerTexts()).toEqual([expect.stringContaining("scripted"), "available", expect.any(String), expect.any(String), "yes", expect.any(String)]);
    await page.screenshot({ path: join(shots, "providers.png") });
    expect(errors).toEqual([]);
  }, 60_000);
});
