import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { Command } from "../src/contracts/commands.js";
import { Orchestrator } from "../src/engine/orchestrator.js";
import type { EventStore } from "../src/store/eventStore.js";
import { PostgresEventStore } from "../src/store/postgres/postgresEventStore.js";
import { SqliteEventStore } from "../src/store/sqlite/sqliteEventStore.js";
import { startPostgresCluster } from "../src/testkit/postgresCluster.js";
import { fmt, now, printTable, rate, seconds } from "./stats.js";

/**
 * Commands per second through Loom's real dispatcher on the PostgreSQL store,
 * against raw single-row inserts into the same PostgreSQL cluster (the
 * baseline) and against Loom on SQLite, all in one run. The cluster is a
 * private one with PostgreSQL's crash-safety defaults (fsync, synchronous
 * commit), as a deployment would run it.
 */

/** Commands in flight at once, as many concurrent clients would keep them. */
const IN_FLIGHT = 1_000;

function commandsFor(index: number): Command[] {
  const threadId = `thread:bench-${index}`;
  return [
    { type: "thread.create", commandId: `cmd:create:${index}`, data: { threadId, projectId: "bench", title: `Thread ${index}` } },
    { type: "thread.metadata.update", commandId: `cmd:title:${index}`, data: { threadId, title: `Renamed ${index}` } },
  ];
}

async function dispatchedPerSecond(store: EventStore, threads: number): Promise<{ perSecond: number; sampleEventBytes: number }> {
  const orchestrator = await Orchestrator.open({ store });
  const commands = Array.from({ length: threads }, (_, i) => commandsFor(i)).flat();
  const start = now();
  for (let i = 0; i < commands.length; i += IN_FLIGHT) {
    const receipts = await Promise.all(commands.slice(i, i + IN_FLIGHT).map((command) => orchestrator.dispatch(command)));
    if (receipts.some((receipt) => receipt.status !== "accepted")) throw new Error("benchmark command rejected");
  }
  const perSecond = rate(commands.length, seconds(start));
  const sample = (await store.readAll(0, 1))[0]!;
  await orchestrator.close();
  return { perSecond, sampleEventBytes: JSON.stringify(sample.data).length };
}

/** One autocommitted INSERT per call on one connection, a row the size of one event. */
async function rawInsertsPerSecond(url: string, count: number, payload: string): Promise<number> {
  const client = new pg.Client(url);
  await client.connect();
  await client.query("CREATE TABLE raw_rows (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, data text NOT NULL)");
  const insert = { name: "raw_insert", text: "INSERT INTO raw_rows (data) VALUES ($1)" };
  const start = now();
  for (let i = 0; i < count; i += 1) await client.query({ ...insert, values: [payload] });
  const perSecond = rate(count, seconds(start));
  await client.end();
  return perSecond;
}

/**
 * The same inserts with IN_FLIGHT at once over a pool: PostgreSQL then
 * flushes the WAL once for every commit that is waiting (group commit in the
 * server), the fairest raw figure for a batching writer.
 */
async function pooledInsertsPerSecond(url: string, count: number, payload: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await pool.query("CREATE TABLE pooled_rows (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, data text NOT NULL)");
  const insert = { name: "pooled_insert", text: "INSERT INTO pooled_rows (data) VALUES ($1)", values: [payload] };
  const start = now();
  for (let i = 0; i < count; i += IN_FLIGHT) {
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count - i) }, () => pool.query(insert)));
  }
  const perSecond = rate(count, seconds(start));
  await pool.end();
  return perSecond;
}

export async function runPostgresBench(options: { threads: number; rawInserts: number }): Promise<void> {
  const cluster = await startPostgresCluster({ durable: true });
  const scratch = mkdtempSync(join(tmpdir(), "loom-bench-"));
  try {
    const onPostgres = await dispatchedPerSecond(await PostgresEventStore.open(await cluster.createDatabase()), options.threads);
    const payload = "x".repeat(onPostgres.sampleEventBytes);
    const raw = await rawInsertsPerSecond(await cluster.createDatabase(), options.rawInserts, payload);
    const pooled = await pooledInsertsPerSecond(await cluster.createDatabase(), options.threads * 2, payload);
    const onSqlite = await dispatchedPerSecond(SqliteEventStore.open(join(scratch, "loom.db")), options.threads);
    const commands = fmt(options.threads * 2);
    printTable("PostgreSQL store: dispatcher throughput (thread.create + thread.metadata.update, fsync on)", [
      ["measure", "per second", "ratio"],
      [`raw single-row INSERTs into PostgreSQL, one connection (${fmt(options.rawInserts)} rows, baseline)`, fmt(raw), "1.00"],
      [`raw single-row INSERTs into PostgreSQL, ${fmt(IN_FLIGHT)} in flight over 10 connections (${commands} rows)`, fmt(pooled), (pooled / raw).toFixed(2)],
      [`commands through the dispatcher on PostgreSQL (${commands} commands)`, fmt(onPostgres.perSecond), (onPostgres.perSecond / raw).toFixed(2)],
      [`commands through the dispatcher on SQLite (${commands} commands)`, fmt(onSqlite.perSecond), (onSqlite.perSecond / raw).toFixed(2)],
    ]);
    console.log(`PostgreSQL / SQLite dispatcher throughput: ${(onPostgres.perSecond / onSqlite.perSecond).toFixed(2)}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    await cluster.stop();
  }
}
