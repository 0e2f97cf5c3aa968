import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Command } from "../src/contracts/commands.js";
import { Orchestrator, replay } from "../src/engine/orchestrator.js";
import { SqliteEventStore } from "../src/store/sqlite/sqliteEventStore.js";
import type { CommitEntry } from "../src/store/eventStore.js";
import type { AppThread } from "../src/contracts/thread.js";
import { fmt, now, printTable, rate, seconds } from "./stats.js";

/** Commands in flight at once, as many concurrent clients would keep them. */
const IN_FLIGHT = 1_000;

function scratch(): { dir: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "loom-bench-"));
  return { dir, done: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Raw better-sqlite3: one autocommitted single-row insert per call, same pragmas and row size. */
function rawInsertsPerSecond(count: number, payload: string): number {
  const { dir, done } = scratch();
  const db = new Database(join(dir, "raw.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE rows (id INTEGER PRIMARY KEY AUTOINCREMENT, data TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO rows (data) VALUES (?)");
  const start = now();
  for (let i = 0; i < count; i++) insert.run(payload);
  const perSecond = rate(count, seconds(start));
  db.close();
  done();
  return perSecond;
}

function commandsFor(index: number): Command[] {
  const threadId = `thread:bench-${index}`;
  return [
    { type: "thread.create", commandId: `cmd:create:${index}`, data: { threadId, projectId: "bench", title: `Thread ${index}` } },
    { type: "thread.metadata.update", commandId: `cmd:title:${index}`, data: { threadId, title: `Renamed ${index}` } },
  ];
}

async function dispatchedCommandsPerSecond(threads: number): Promise<{ perSecond: number; sampleEventBytes: number }> {
  const { dir, done } = scratch();
  const store = SqliteEventStore.open(join(dir, "loom.db"));
  const orchestrator = await Orchestrator.open({ store });
  const commands = Array.from({ length: threads }, (_, i) => commandsFor(i)).flat();
  const start = now();
  for (let i = 0; i < commands.length; i += IN_FLIGHT) {
    const receipts = await Promise.all(commands.slice(i, i + IN_FLIGHT).map((c) => orchestrator.dispatch(c)));
    if (receipts.some((r) => r.status !== "accepted")) throw new Error("benchmark command rejected");
  }
  const perSecond = rate(commands.length, seconds(start));
  const sample = (await store.readAll(0, 1))[0]!;
  await orchestrator.close();
  done();
  return { perSecond, sampleEventBytes: JSON.stringify(sample.data).length };
}

function threadRecord(id: string, title: string): AppThread {
  const at = "2026-01-01T00:00:00.000Z";
  return {
    id, projectId: "bench", title, titleRegenerating: false, providerInstanceId: null, modelSelection: null,
    runtimeMode: "full-access", interactionMode: "default", worktreePath: null, branch: null, pullRequests: [],
    lineage: { rootThreadId: id, parentThreadId: null, parentNodeId: null, relation: "root" }, queuedRuns: [],
    createdBy: "user", creationSource: "api", createdAt: at, updatedAt: at, archivedAt: null, deletedAt: null,
    settledAt: null, autoSettle: true, snoozedUntil: null, snoozedAt: null, pinnedRank: null, activeRank: null,
    lastVisitedAt: null, markedUnreadAt: null, pendingBackgroundTasks: [],
  };
}

/** Fill a log with `count` thread events (10,000 threads, the rest title updates). */
async function fillLog(store: SqliteEventStore, count: number): Promise<void> {
  const batch = 10_000;
  for (let i = 0; i < count; i += batch) {
    const entries: CommitEntry[] = [];
    for (let j = i; j < Math.min(count, i + batch); j++) {
      const threadId = `thread:replay-${j % 10_000}`;
      const type = j < 10_000 ? "thread.created" : "thread.metadata-updated";
      entries.push({
        receipt: { status: "accepted", commandId: `cmd:${j}`, commandType: "thread.metadata.update", acceptedAt: "2026-01-01T00:00:00.000Z" },
        events: [{ type, streamId: threadId, data: { thread: threadRecord(threadId, `Title ${j}`) } }],
        outbox: [],
      });
    }
    await store.commit(entries);
  }
}

async function replayFigures(count: number): Promise<{ foldPerSecond: number; rawPerSecond: number }> {
  const { dir, done } = scratch();
  const path = join(dir, "loom.db");
  const store = SqliteEventStore.open(path);
  await fillLog(store, count);

  const db = new Database(path, { readonly: true });
  const select = db.prepare("SELECT sequence, event_id, command_id, stream_id, type, data, occurred_at FROM events ORDER BY sequence");
  let start = now();
  let parsed = 0;
  for (const row of select.iterate() as Iterable<{ data: string }>) {
    if (JSON.parse(row.data) !== null) parsed += 1;
  }
  const rawPerSecond = rate(parsed, seconds(start));
  db.close();

  start = now();
  const state = await replay(store);
  const foldPerSecond = rate(state.lastSequence, seconds(start));
  if (state.lastSequence !== count || state.threads.size !== 10_000) throw new Error("replay folded the wrong log");
  await store.close();
  done();
  return { foldPerSecond, rawPerSecond };
}

export async function runCoreBench(options: { threads: number; replayEvents: number }): Promise<void> {
  const dispatched = await dispatchedCommandsPerSecond(options.threads);
  const rawInserts = rawInsertsPerSecond(options.threads * 2, "x".repeat(dispatched.sampleEventBytes));
  printTable("Dispatcher throughput (thread.create + thread.metadata.update, SQLite WAL)", [
    ["measure", "per second", "ratio"],
    ["raw better-sqlite3 single-row inserts (baseline)", fmt(rawInserts), "1.00"],
    [`commands through the dispatcher (${fmt(options.threads * 2)} commands)`, fmt(dispatched.perSecond), (dispatched.perSecond / rawInserts).toFixed(2)],
  ]);
  const replayed = await replayFigures(options.replayEvents);
  printTable(`Replay (${fmt(options.replayEvents)} events)`, [
    ["measure", "events per second", "ratio"],
    ["raw SELECT + JSON.parse (baseline)", fmt(replayed.rawPerSecond), "1.00"],
    ["replay into projections", fmt(replayed.foldPerSecond), (replayed.foldPerSecond / replayed.rawPerSecond).toFixed(2)],
  ]);
}
