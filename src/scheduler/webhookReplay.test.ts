import { createHash, createHmac } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScheduledTask } from "../contracts/entities/scheduledTasks.js";
import type { DeliveryRecord } from "../contracts/webhookDeliveries.js";
import { fireCommandId } from "../app/schedules/fire.js";
import { joinId } from "../core/ids.js";
import { SqliteWebhookDeliveries } from "../store/webhookDeliveries/sqliteWebhookDeliveries.js";
import { LoomHarness, script } from "../testkit/loomHarness.js";
import { ManualClock } from "../testkit/manualClock.js";

/**
 * Signed webhook deliveries are taken once (docs/schedules.md, "Signed
 * deliveries"): over real HTTP to the real server, a fresh delivery fires; the
 * same bytes again, before or after a restart, are refused as a replay
 * (typed, counted on the delivery's record, nothing fired); a timestamp
 * outside the window and a bad signature are refused and record nothing; a
 * GitHub delivery is known by its id and by its signed body. A manual clock.
 */

let h: LoomHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const START = "2026-03-02T08:00:00.000Z";
const SECRET = "a-webhook-secret-of-some-length";
const TOLERANCE_MS = 5 * 60_000;

interface Hook {
  readonly scheduledTaskId: string;
  readonly webhookUrl: string;
}

async function start(clock: ManualClock, logs: string[] = []): Promise<LoomHarness> {
  h = await LoomHarness.start({ clock: clock.now, schedulerTimers: clock.timers, config: { scheduler: { minIntervalMs: 1_000, timeZone: "UTC" } }, log: (line) => logs.push(line) });
  return h;
}

function signedHook(harness: LoomHarness, trigger: Record<string, unknown> = {}): Promise<Hook> {
  return harness.owner.ok<Hook>("schedule_task", { prompt: script({ say: "hooked" }), trigger: { type: "webhook", signature: { secret: SECRET }, ...trigger } });
}

const hmac = (text: string, secret = SECRET) => createHmac("sha256", secret).update(text).digest("hex");

/** A plain sender's headers: the timestamp (unix seconds) signed with the body. */
function plainHeaders(body: string, seconds: number, secret = SECRET): Record<string, string> {
  return { "x-loom-timestamp": String(seconds), "x-loom-signature": `sha256=${hmac(`${seconds}.${body}`, secret)}` };
}

function githubHeaders(body: string, deliveryId: string): Record<string, string> {
  return { "x-github-delivery": deliveryId, "x-hub-signature-256": `sha256=${hmac(body)}` };
}

function post(hook: Hook, body: string, headers: Record<string, string>): Promise<Response> {
  return fetch(hook.webhookUrl, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
}

async function answer(response: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function task(harness: LoomHarness, id: string): ScheduledTask {
  const found = harness.state.scheduledTasks.get(id);
  if (found === undefined) throw new Error(`no task ${id}`);
  return found;
}

/** The ledger's records of a task, read from the state dir's file as another process would. */
function records(harness: LoomHarness, scheduledTaskId: string): readonly DeliveryRecord[] {
  const ledger = SqliteWebhookDeliveries.open(join(harness.server.stateDir.root, "webhook-deliveries.db"));
  try {
    return ledger.list(scheduledTaskId);
  } finally {
    ledger.close();
  }
}

const seconds = (clock: ManualClock) => Math.floor(clock.now() / 1000);

describe("signed webhook deliveries are taken once", () => {
  it("a fresh delivery fires; the same bytes again are refused, counted and logged, fire nothing, and are refused after a restart too", async () => {
    const clock = new ManualClock(START);
    const logs: string[] = [];
    const harness = await start(clock, logs);
    const hook = await signedHook(harness);
    const body = JSON.stringify({ action: "opened", number: 7 });
    const headers = plainHeaders(body, seconds(clock));

    const fresh = await answer(await post(hook, body, headers));
    expect(fresh).toMatchObject({ status: 202, body: { status: "fired", outcome: "started" } });
    await harness.waitForEnd(fresh.body.runId as string);
    expect(harness.assistantTexts(fresh.body.threadId as string)).toEqual(["hooked"]);

    const before = harness.state.lastSequence;
    clock.advance(30_000);
    const replay = await answer(await post(hook, body, headers));
    expect(replay).toMatchObject({ status: 409, body: { error: { code: "replayed_delivery", message: expect.stringContaining("already received at 2026-03-02T08:00:00.000Z") } } });
    expect(harness.state.lastSequence).toBe(before);
    expect(task(harness, hook.scheduledTaskId).fireCount).toBe(1);
    expect(records(harness, hook.scheduledTaskId)).toMatchObject([{ key: expect.stringMatching(/^ts:\d+:[0-9a-f]{64}$/), replays: 1, lastReplayAt: clock.now(), forgetAt: Date.parse(START) + TOLERANCE_MS }]);
    expect(logs.some((line) => line.includes(`webhook of ${hook.scheduledTaskId} refused (replayed_delivery)`))).toBe(true);

    const restarted = await harness.restart();
    h = restarted;
    // The restarted server listens on another port: the task's URL is read again.
    const listed = await restarted.owner.ok<{ tasks: Hook[] }>("list_scheduled_tasks", {});
    const again = listed.tasks.find((one) => one.scheduledTaskId === hook.scheduledTaskId)!;
    const afterRestart = await answer(await post(again, body, headers));
    expect(afterRestart).toMatchObject({ status: 409, body: { error: { code: "replayed_delivery" } } });
    expect(task(restarted, hook.scheduledTaskId).fireCount).toBe(1);
    expect(records(restarted, hook.scheduledTaskId)).toMatchObject([{ replays: 2 }]);
  });

  it("a copy of a delivery whose fire never committed (the server stopped between taking it and firing) fires in its place", async () => {
    const clock = new ManualClock(START);
    const harness = await start(clock);
    const hook = await signedHook(harness);
    const body = JSON.stringify({ action: "opened" });
    const at = seconds(clock);
    // What a server that stopped right after taking the delivery leaves: the record, naming a fire command with no receipt.
    const key = `ts:${at}:${createHash("sha256").update(body).digest("hex")}`;
    const ledger = SqliteWebhookDeliveries.open(join(harness.server.stateDir.root, "webhook-deliveries.db"));
    ledger.claim({ scheduledTaskId: hook.scheduledTaskId, keys: [key], receivedAt: clock.now(), forgetAt: clock.now() + TOLERANCE_MS, fireCommandId: fireCommandId(hook.scheduledTaskId, joinId("hook", "delivery", key)) });
    ledger.close();
    const retried = await answer(await post(hook, body, plainHeaders(body, at)));
    expect(retried).toMatchObject({ status: 202, body: { status: "fired" } });
    expect(await answer(await post(hook, body, plainHeaders(body, at)))).toMatchObject({ status: 409, body: { error: { code: "replayed_delivery" } } });
    expect(task(harness, hook.scheduledTaskId).fireCount).toBe(1);
  });

  it("refuses a replay with a dedupeKey too, while a new delivery with a repeated dedupe value is still skipped as a duplicate", async () => {
    const clock = new ManualClock(START);
    const harness = await start(clock);
    const hook = await signedHook(harness, { dedupeKey: "body:number" });
    const first = JSON.stringify({ number: 7, note: "first" });
    const headers = plainHeaders(first, seconds(clock));
    expect(await answer(await post(hook, first, headers))).toMatchObject({ status: 202, body: { status: "fired" } });
    expect(await answer(await post(hook, first, headers))).toMatchObject({ status: 409, body: { error: { code: "replayed_delivery" } } });
    const second = JSON.stringify({ number: 7, note: "second" });
    expect(await answer(await post(hook, second, plainHeaders(second, seconds(clock))))).toMatchObject({ status: 202, body: { status: "skipped", reason: expect.stringContaining("duplicate") } });
    expect(task(harness, hook.scheduledTaskId).fireCount).toBe(1);
  });

  it("refuses a timestamp outside the window and a bad signature, recording nothing; forgets deliveries older than the window", async () => {
    const clock = new ManualClock(START);
    const harness = await start(clock);
    const hook = await signedHook(harness);
    const body = JSON.stringify({ action: "opened" });
    const now = seconds(clock);
    const before = harness.state.lastSequence;

    const stale = await answer(await post(hook, body, plainHeaders(body, now - 301)));
    expect(stale).toMatchObject({ status: 401, body: { error: { code: "stale_timestamp", message: expect.stringContaining("301 s from the server's clock") } } });
    expect(await answer(await post(hook, body, plainHeaders(body, now + 301)))).toMatchObject({ status: 401, body: { error: { code: "stale_timestamp" } } });
    const refusedSignatures: readonly [Record<string, string>, string][] = [
      [plainHeaders(body, now, "another-secret-entirely!!"), "does not match"],
      [{ "x-loom-timestamp": String(now), "x-loom-signature": `sha256=${hmac(body)}` }, "does not match"],
      [{ ...plainHeaders(body, now), "x-loom-timestamp": String(now + 1) }, "does not match"],
      [{ "x-loom-signature": plainHeaders(body, now)["x-loom-signature"]! }, "missing x-loom-timestamp"],
      [{ ...plainHeaders(body, now), "x-loom-timestamp": "2026-03-02T08:00:00Z" }, "unix seconds"],
      [{}, "missing x-loom-signature"],
    ];
    for (const [headers, message] of refusedSignatures) {
      expect(await answer(await post(hook, body, headers)), JSON.stringify(headers)).toMatchObject({ status: 401, body: { error: { code: "invalid_signature", message: expect.stringContaining(message) } } });
    }
    expect(harness.state.lastSequence).toBe(before);
    expect(records(harness, hook.scheduledTaskId)).toEqual([]);

    // Inside the window (either way) a delivery is taken; once the window has passed, its record goes with the next claim.
    const early = plainHeaders(body, now - 299);
    expect(await answer(await post(hook, body, early))).toMatchObject({ status: 202, body: { status: "fired" } });
    clock.advance(TOLERANCE_MS);
    const later = JSON.stringify({ action: "opened", again: true });
    expect(await answer(await post(hook, later, plainHeaders(later, seconds(clock))))).toMatchObject({ status: 202, body: { status: "fired" } });
    expect(records(harness, hook.scheduledTaskId).map((record) => record.receivedAt)).toEqual([clock.now()]);
    expect(await answer(await post(hook, body, early))).toMatchObject({ status: 401, body: { error: { code: "stale_timestamp" } } });
  });

  it("GitHub style: a delivery fires; its delivery id again, or its signed body under a new id, is refused; a delivery id is required", async () => {
    const clock = new ManualClock(START);
    const harness = await start(clock);
    const hook = await signedHook(harness, { filters: [{ path: "action", equals: "opened" }] });
    const body = JSON.stringify({ action: "opened", number: 7 });

    expect(await answer(await post(hook, body, { "x-hub-signature-256": `sha256=${hmac(body)}` }))).toMatchObject({ status: 401, body: { error: { code: "invalid_signature", message: expect.stringContaining("x-github-delivery") } } });
    expect(await answer(await post(hook, body, githubHeaders(body, "d1")))).toMatchObject({ status: 202, body: { status: "fired" } });
    const before = harness.state.lastSequence;
    // GitHub signs no timestamp: a day later the delivery is still known.
    clock.advance(24 * 60 * 60_000);
    expect(await answer(await post(hook, body, githubHeaders(body, "d1")))).toMatchObject({ status: 409, body: { error: { code: "replayed_delivery", message: expect.stringContaining("delivery d1") } } });
    expect(await answer(await post(hook, body, githubHeaders(body, "d2")))).toMatchObject({ status: 409, body: { error: { code: "replayed_delivery" } } });
    const other = JSON.stringify({ action: "opened", number: 8 });
    expect(await answer(await post(hook, other, githubHeaders(other, "d1")))).toMatchObject({ status: 409, body: { error: { code: "replayed_delivery" } } });
    expect(harness.state.lastSequence).toBe(before);
    // A delivery a filter skips is taken too: its copy is a replay, not a second chance.
    const closed = JSON.stringify({ action: "closed", number: 7 });
    expect(await answer(await post(hook, closed, githubHeaders(closed, "d3")))).toMatchObject({ status: 202, body: { status: "skipped" } });
    expect(await answer(await post(hook, closed, githubHeaders(closed, "d3")))).toMatchObject({ status: 409, body: { error: { code: "replayed_delivery" } } });
    expect(task(harness, hook.scheduledTaskId).fireCount).toBe(1);
    expect(records(harness, hook.scheduledTaskId).map((record) => [record.key.split(":")[0], record.forgetAt])).toEqual([
      ["github", null],
      ["body", null],
      ["github", null],
      ["body", null],
    ]);
  });
});
