import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import type { ServedLoom } from "../testkit/browser.js";
import { UI_WAIT, screenshotDir, signedInPage } from "../testkit/browser.js";

/**
 * Scheduled tasks created and edited from the web UI in a real browser
 * (Debian chromium via playwright-core) against a real `loom serve`: bad
 * input answered with the server's typed error and nothing saved, and the
 * list following changes made elsewhere (the owner's HTTP API standing in
 * for an agent) through the change stream, without a reload.
 */

const ui = signedInPage({ providers: [{ id: "scripted", driver: "scripted" }] });
let loom: ServedLoom;
let page: Page;
let errors: string[];
const shots = screenshotDir();

beforeAll(() => {
  ({ loom, page, errors } = ui);
});

interface TaskRow {
  readonly scheduledTaskId: string;
  readonly title: string;
  readonly trigger: unknown;
  readonly fireCount: number;
}

describe("scheduled tasks from the page in chromium", () => {
  it("creates and edits a task, shows typed errors for bad input, and follows changes made elsewhere live", async () => {
    const ownerToken = readFileSync(join(loom.stateDir, "owner-token"), "utf8").trim();
    const owner = (method: string, path: string, body?: unknown) =>
      fetch(`${loom.url}${path}`, { method, headers: { authorization: `Bearer ${ownerToken}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const tasks = async () => ((await (await owner("GET", "/api/schedules")).json()) as { tasks: TaskRow[] }).tasks;

    await page.getByRole("link", { name: "Schedules" }).click();
    await page.getByText("No scheduled tasks.").waitFor({ timeout: UI_WAIT });

    // A bad time: the server's typed error in the form, nothing saved.
    await page.getByRole("button", { name: "New scheduled task" }).click();
    const form = page.getByRole("dialog", { name: "New scheduled task" });
    await form.getByLabel("Title").fill("Nightly tidy");
    await form.getByLabel("Prompt").fill("Tidy the notes.");
    await form.getByLabel("Trigger").selectOption("daily");
    await form.getByLabel("At", { exact: true }).fill("25:00");
    await form.getByRole("button", { name: "Create" }).click();
    await form.getByRole("alert").filter({ hasText: 'invalid_request: invalid request: trigger.at: must be "HH:MM" (24-hour)' }).waitFor({ timeout: UI_WAIT });
    await page.screenshot({ path: join(shots, "schedule-form-error.png") });
    expect(await tasks()).toEqual([]);

    // Fixed, it saves and the row shows.
    await form.getByLabel("At", { exact: true }).fill("02:30");
    await form.getByLabel("Mon").check();
    await form.getByRole("button", { name: "Create" }).click();
    await form.waitFor({ state: "detached", timeout: UI_WAIT });
    const [created] = await tasks();
    expect(created).toMatchObject({ title: "Nightly tidy", trigger: { type: "daily", at: "02:30", weekdays: [1] } });
    const row = page.locator(`tr[data-task-id="${created!.scheduledTaskId}"]`);
    await row.filter({ hasText: "daily at 02:30 on Mon" }).waitFor({ timeout: UI_WAIT });

    // Edit: an interval under the server's minimum is refused with its reason; a valid one saves.
    await row.getByRole("button", { name: "Edit" }).click();
    const edit = page.getByRole("dialog", { name: "Edit scheduled task" });
    expect(await edit.getByLabel("Prompt").inputValue()).toBe("Tidy the notes.");
    await edit.getByLabel("Trigger").selectOption("interval");
    await edit.getByLabel("Every (minutes)").fill("0.5");
    await edit.getByRole("button", { name: "Save" }).click();
    await edit.getByRole("alert").filter({ hasText: "trigger.everyMs must be at least 60000 ms" }).waitFor({ timeout: UI_WAIT });
    expect((await tasks())[0]!.trigger).toMatchObject({ type: "daily" });
    await edit.getByLabel("Every (minutes)").fill("90");
    await edit.getByLabel("Title").fill("Tidy every ninety minutes");
    await edit.getByRole("button", { name: "Save" }).click();
    await edit.waitFor({ state: "detached", timeout: UI_WAIT });
    await row.filter({ hasText: "Tidy every ninety minutes" }).filter({ hasText: "every 90 min" }).waitFor({ timeout: UI_WAIT });
    expect((await tasks())[0]).toMatchObject({ title: "Tidy every ninety minutes", trigger: { type: "interval", everyMs: 5_400_000 } });

    // Changed elsewhere (as an agent would): the page follows without a reload or Refresh.
    expect((await owner("PATCH", `/api/schedules/${encodeURIComponent(created!.scheduledTaskId)}`, { title: "Renamed elsewhere" })).status).toBe(200);
    await row.filter({ hasText: "Renamed elsewhere" }).waitFor({ timeout: UI_WAIT });
    // Fired elsewhere: its last fire and the thread it started show.
    expect((await owner("POST", `/api/schedules/${encodeURIComponent(created!.scheduledTaskId)}/run`)).status).toBe(200);
    await row.locator(".last-fire").getByRole("link", { name: "Open" }).waitFor({ timeout: UI_WAIT });
    await row.filter({ hasText: "1 fire" }).waitFor({ timeout: UI_WAIT });
    await page.screenshot({ path: join(shots, "schedules-live.png") });
    // The only console errors are the browser's reports of the two refused saves.
    expect(errors).toEqual(Array(2).fill("console: Failed to load resource: the server responded with a status of 400 (Bad Request)"));
  }, 90_000);
});
