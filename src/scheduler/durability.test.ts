import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ScheduledFire } from "../contracts/entities/scheduledTasks.js";
import { LoomMcpClient } from "../client/loomMcpClient.js";
import { type LoomServer, startLoomServer } from "../server/loomServer.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import { TEST_PROVIDERS, script } from "../testkit/loomHarness.js";
import { ManualClock } from "../testkit/manualClock.js";

/**
 * No instant fires twice: across a restart between due times, and with two
 * Loom nodes (two orchestrators and two schedulers) on one SQLite file firing
 * the same instant. Real servers, real SQLite, a manual clock.
 */

const dirs: string[] = [];
const servers: LoomServer[] = [];
const clients: LoomMcpClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function stateDir(): { dir: string; stateDir: string; configPath: string } {
  const dir = mkdtempSync(join(tmpdir(), "loom-sched-"));
  dirs.push(dir);
  const state = join(dir, ".loom");
  mkdirSync(state);
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify({ providers: TEST_PROVIDERS, scheduler: { minIntervalMs: 1_000, timeZone: "UTC" } }));
  return { dir, stateDir: state, configPath };
}

async function serve(paths: ReturnType<typeof stateDir>, clock: ManualClock): Promise<{ server: LoomServer; owner: LoomMcpClient }> {
  const server = await startLoomServer({ stateDir: paths.stateDir, cwd: paths.dir, configPath: paths.configPath, clock: clock.now, schedulerTimers: clock.timers });
  servers.push(server);
  const owner = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(paths.stateDir, "owner-token"), "utf8").trim(), "owner");
  clients.push(owner);
  return { server, owner };
}

async function until<T>(probe: () => T | null | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== null && value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Every fire the log holds for a task, in order. */
async function firesInLog(databasePath: string, scheduledTaskId: string): Promise<ScheduledFire[]> {
  const store = SqliteEventStore.open(databasePath);
  try {
    const events = await store.readAll(0, 1_000_000);
    return events.flatMap((event) => {
      const data = event.data as { task?: { id: string }; fire?: ScheduledFire | null };
      return event.type === "scheduled-task.updated" && data.task?.id === scheduledTaskId && data.fire != null ? [data.fire] : [];
    });
  } finally {
    await store.close();
  }
}

describe("durable fires", () => {
  it("due times missed while the server was down fire once on start-up, saying how many they stand for", async () => {
    const paths = stateDir();
    const clock = new ManualClock("2026-03-02T08:00:00.000Z");
    const first = await serve(paths, clock);
    const { scheduledTaskId } = await first.owner.ok<{ scheduledTaskId: string }>("schedule_task", { prompt: script({ say: "caught up" }), trigger: { type: "interval", everyMs: 1_000 } });
    await clients.splice(0)[0]!.close();
    await servers.splice(0)[0]!.close();
    clock.advance(5_500); // due at :01 .. :05 while down
    const second = await serve(paths, clock);
    const task = await until(() => {
      const found = second.server.orchestrator.state.scheduledTasks.get(scheduledTaskId);
      return found?.lastFire?.runId != null ? found : null;
    }, "the catch-up fire");
    expect(task.lastFire).toMatchObject({ cause: "catch_up", instants: 5, dueAt: "2026-03-02T08:00:01.000Z", outcome: "started" });
    expect(task.nextFireAt).toBe("2026-03-02T08:00:06.000Z");
    const runId = task.lastFire!.runId!;
    const threadId = task.lastFire!.threadId!;
    await until(() => second.server.orchestrator.state.runs.get(runId)?.status === "completed", "the catch-up run to complete");
    const message = (second.server.orchestrator.state.turnItems.get(threadId) ?? []).find((item) => item?.type === "user_message");
    expect(message?.type === "user_message" ? message.text : "").toContain("5 due times passed while the server was down; this one run stands for all of them.");
    // One fire for the whole downtime, and a restart does not fire it again.
    await clients.splice(0)[0]!.close();
    await servers.splice(0)[0]!.close();
    const third = await serve(paths, clock);
    await third.owner.ok("update_scheduled_task", { scheduledTaskId, enabled: false });
    await servers.splice(0)[0]!.close();
    expect((await firesInLog(join(paths.stateDir, "loom.db"), scheduledTaskId)).map((fire) => fire.dueAt)).toEqual(["2026-03-02T08:00:01.000Z"]);
  });

  it("two nodes on one SQLite file firing the same instants make one fire and one run per instant", async () => {
    const paths = stateDir();
    const clock = new ManualClock("2026-03-02T08:00:00.000Z");
    const a = await serve(paths, clock);
    const b = await serve(paths, clock);
    const { scheduledTaskId } = await a.owner.ok<{ scheduledTaskId: string }>("schedule_task", { prompt: script({ say: "once" }), trigger: { type: "interval", everyMs: 1_000 } });
    // Both nodes know the task (b folds a's commit from the shared log) and have armed their timers.
    await until(() => b.server.orchestrator.state.scheduledTasks.has(scheduledTaskId) && clock.armed >= 2, "both schedulers to arm");
    for (let n = 1; n <= 3; n++) {
      clock.advance(1_000);
      await until(() => (a.server.orchestrator.state.scheduledTasks.get(scheduledTaskId)?.fireCount ?? 0) >= n && (b.server.orchestrator.state.scheduledTasks.get(scheduledTaskId)?.fireCount ?? 0) >= n, `fire ${n} on both nodes`);
      // Each fire's run finishes before the next instant, so overlap (skip) never turns an instant into a skipped fire.
      const runId = a.server.orchestrator.state.scheduledTasks.get(scheduledTaskId)?.lastFire?.runId;
      expect(runId).toBeTruthy();
      await until(() => a.server.orchestrator.state.runs.get(runId!)?.status === "completed", `the run of fire ${n} to complete`);
      await until(() => clock.armed >= 2, "both schedulers to re-arm");
    }
    await a.owner.ok("update_scheduled_task", { scheduledTaskId, enabled: false });
    const fires = await firesInLog(join(paths.stateDir, "loom.db"), scheduledTaskId);
    expect(fires.map((fire) => fire.dueAt)).toEqual(["2026-03-02T08:00:01.000Z", "2026-03-02T08:00:02.000Z", "2026-03-02T08:00:03.000Z"]);
    const runIds = fires.map((fire) => fire.runId);
    expect(new Set(runIds).size).toBe(3);
    const state = a.server.orchestrator.state;
    expect([...state.runs.values()].filter((run) => run.kind === "scheduled_task")).toHaveLength(3);
  });
});
