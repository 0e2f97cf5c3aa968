import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../contracts/envelopes.js";
import { runStoreWriters } from "../../testkit/storeWriterProcess.js";
import { StoreError, StoreErrorCode } from "../storeErrors.js";
import { eventStoreContract } from "../testSuite.js";
import { accepted, effect, event, newCommandId, range, sequencesOf, waitFor } from "../testSuiteFixtures.js";
import type { Migration } from "../migrationPlan.js";
import { listAppliedMigrations, MIGRATIONS, runMigrations } from "./migrations.js";
import { SqliteEventStore } from "./sqliteEventStore.js";
import { SELECT_CLAIMABLE_SQL } from "./sqliteOutbox.js";

// A small replay page makes the contract's replay/live races span many pages.
eventStoreContract("sqlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "loom-store-"));
  const file = join(dir, "state", "loom.db");
  const options = { replayPageSize: 64 };
  return Promise.resolve({
    store: SqliteEventStore.open(file, options),
    reopen: () => Promise.resolve(SqliteEventStore.open(file, options)),
    openPeer: () => Promise.resolve(SqliteEventStore.open(file, options)),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  });
}, { durable: true, peers: true });

describe("SqliteEventStore", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "loom-sqlite-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates parent directories and runs in WAL mode with the documented pragmas", async () => {
    const file = join(dir, "a", "b", "loom.db");
    const store = SqliteEventStore.open(file, { busyTimeoutMs: 1234 });
    expect(existsSync(file)).toBe(true);
    expect(store.connectionSettings()).toEqual({ journalMode: "wal", synchronous: 1, foreignKeys: true, busyTimeoutMs: 1234, walAutocheckpointPages: 10_000 });
    await store.commit([accepted(newCommandId(), [event("thread:1")])]);
    expect(existsSync(`${file}-wal`)).toBe(true);
    await store.close();

    const db = new BetterSqlite3(file);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal"); // persistent in the file
    db.close();
  });

  it("records each migration once, in version order, and applies nothing on reopen", async () => {
    const file = join(dir, "loom.db");
    await SqliteEventStore.open(file).close();
    const before = readMigrations(file);
    expect(before.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
    expect(before.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));

    const reopened = SqliteEventStore.open(file);
    await reopened.commit([accepted(newCommandId(), [event("thread:1")])]);
    await reopened.close();
    await SqliteEventStore.open(file).close();
    expect(readMigrations(file)).toEqual(before); // same rows, same applied_at
  });

  it("applies only new migrations, each in its own transaction", () => {
    const db = new BetterSqlite3(join(dir, "migrate.db"));
    const first: Migration = { version: 1, name: "one", sql: "CREATE TABLE one (x INTEGER)" };
    const second: Migration = { version: 2, name: "two", sql: "CREATE TABLE two (x INTEGER)" };
    const broken: Migration = { version: 3, name: "broken", sql: "CREATE TABLE three (x INTEGER); INSERT INTO missing VALUES (1)" };

    expect(runMigrations(db, [first])).toEqual([1]);
    expect(runMigrations(db, [first])).toEqual([]);
    expect(runMigrations(db, [first, second])).toEqual([2]);
    expect(() => runMigrations(db, [first, second, broken])).toThrow(/missing/);
    expect(listAppliedMigrations(db).map((row) => row.version)).toEqual([1, 2]);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'three'").get()).toBeUndefined();
    expect(() => runMigrations(db, [second, first])).toThrow(/increasing/);
    db.close();
  });

  it("fills the turn items read model from the log of a database written before it existed", async () => {
    const file = join(dir, "older.db");
    const db = new BetterSqlite3(file);
    runMigrations(db, MIGRATIONS.filter((migration) => migration.version < 3));
    const insert = db.prepare("INSERT INTO events (event_id, command_id, stream_id, type, data, occurred_at) VALUES (?, 'cmd:old', ?, ?, ?, '2025-01-01T00:00:00.000Z')");
    const item = (position: number, text: string) => JSON.stringify({ item: { id: `item:${position}`, threadId: "thread:old", position, type: "assistant_message", text } });
    insert.run("event:1", "thread:old", "turn-item.updated", item(0, "first"));
    insert.run("event:2", "thread:old", "turn-item.updated", item(1, "draft"));
    insert.run("event:3", "thread:old", "test.happened", JSON.stringify({ item: { id: "item:x", threadId: "thread:old", position: 2 } }));
    insert.run("event:4", "thread:old", "turn-item.updated", item(1, "final"));
    db.close();

    const store = SqliteEventStore.open(file);
    expect((await store.readTurnItems("thread:old")).map((value) => (value as unknown as { text: string }).text)).toEqual(["first", "final"]);
    expect(store.turnItems.threadOfItem("item:1")).toBe("thread:old");
    await store.close();
  });

  it("refuses a database migrated by a newer build", () => {
    const file = join(dir, "newer.db");
    const db = new BetterSqlite3(file);
    runMigrations(db, [...MIGRATIONS, { version: 999, name: "from the future", sql: "SELECT 1" }]);
    db.close();

    let thrown: unknown;
    try {
      SqliteEventStore.open(file);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StoreError);
    expect((thrown as StoreError).code).toBe(StoreErrorCode.unknownMigration);
  });

  it("claims through the (status, available_at) index instead of scanning finished rows", async () => {
    const file = join(dir, "plan.db");
    const store = SqliteEventStore.open(file);
    await store.commit([accepted(newCommandId(), [], [effect("run.start")])]);
    await store.close();
    const db = new BetterSqlite3(file);
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN ${SELECT_CLAIMABLE_SQL}`)
      .all({ now: 1, kinds: null, skip: null, limit: 10 }) as { detail: string }[];
    db.close();
    const details = plan.map((row) => row.detail).join("\n");
    expect(details).toContain("outbox_claimable");
    expect(details).not.toMatch(/SCAN outbox\b/);
  });

  it("delivers one gap-free sequence to a subscriber while other processes write the file", async () => {
    const file = join(dir, "shared.db");
    const store = SqliteEventStore.open(file, { pollIntervalMs: 10 });
    const seen: StoredEvent[] = [];
    const subscription = store.subscribe(0, (stored) => seen.push(stored));
    await subscription.caughtUp;

    const writing = runStoreWriters(["p1", "p2"].map((label) => ({ backend: "sqlite", file, commits: 80, eventsPerCommit: 2, label })));
    // This process writes too, meanwhile, yielding so the poll timer runs between commits.
    for (let round = 0; round < 40; round += 1) {
      await store.commit([accepted(newCommandId("local"), [event("thread:local")])]);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await writing;

    const last = await store.lastSequence();
    expect(last).toBe(2 * 80 * 2 + 40);
    await waitFor(() => seen.length >= last, `the subscriber to reach sequence ${last}`);
    expect(sequencesOf(seen)).toEqual(range(1, last));
    expect(seen).toEqual(await store.readAll(0));
    subscription.close();
    await store.close();
  });

  it("stamps events and outbox rows with the injected clock and id source", async () => {
    let ids = 0;
    const store = SqliteEventStore.open(join(dir, "clock.db"), {
      clock: () => Date.UTC(2030, 0, 2, 3, 4, 5),
      newId: () => `00000000-0000-4000-8000-00000000000${++ids}`,
    });
    const [result] = await store.commit([accepted(newCommandId(), [event("thread:1")], [effect("run.start")])]);
    expect(result!.events[0]).toMatchObject({ eventId: "event:00000000-0000-4000-8000-000000000001", occurredAt: "2030-01-02T03:04:05.000Z" });
    expect(await store.listOutbox("pending")).toEqual([
      expect.objectContaining({ id: "outbox:00000000-0000-4000-8000-000000000002", availableAt: Date.UTC(2030, 0, 2, 3, 4, 5) }),
    ]);
    await store.close();
  });
});

function readMigrations(file: string): { version: number; name: string; applied_at: string }[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db.prepare("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").all() as {
      version: number;
      name: string;
      applied_at: string;
    }[];
  } finally {
    db.close();
  }
}
