import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { accepted, event, newCommandId } from "../testSuiteFixtures.js";
import { SqliteEventStore } from "./sqliteEventStore.js";
import { AUTOCHECKPOINT_PAGES, WalCheckpointer } from "./walCheckpointer.js";

describe("background WAL checkpoints", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "loom-wal-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("a worker checkpoints every N commits; the committing connection's own autocheckpoint is off then", async () => {
    const store = SqliteEventStore.open(join(dir, "loom.db"), { backgroundCheckpoints: { everyCommits: 5 } });
    expect(store.connectionSettings().walAutocheckpointPages).toBe(AUTOCHECKPOINT_PAGES);
    const checkpointed = store.checkpointer!.nextCheckpoint();
    for (let i = 0; i < 5; i++) await store.commit([accepted(newCommandId(), [event(`thread:${i}`)])]);
    const result = await checkpointed;
    expect(result.walFrames).toBeGreaterThan(0);
    // PASSIVE copied every frame: nothing else was writing while it ran.
    expect(result.checkpointedFrames).toBe(result.walFrames);
    expect(store.checkpointer!.active).toBe(true);
    expect(store.connectionSettings().walAutocheckpointPages).toBe(0);

    // Later commits keep asking; the next checkpoint covers them.
    const next = store.checkpointer!.nextCheckpoint();
    for (let i = 5; i < 10; i++) await store.commit([accepted(newCommandId(), [event(`thread:${i}`)])]);
    expect((await next).checkpointedFrames).toBeGreaterThan(0);
    await store.close();
  });

  it("close stops the worker: its connection was the last, so the WAL is folded in and removed, and nothing is lost", async () => {
    const file = join(dir, "loom.db");
    const store = SqliteEventStore.open(file, { backgroundCheckpoints: { everyCommits: 3 } });
    const checkpointed = store.checkpointer!.nextCheckpoint();
    for (let i = 0; i < 20; i++) await store.commit([accepted(newCommandId(), [event(`thread:${i}`)])]);
    await checkpointed;
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);

    const reopened = SqliteEventStore.open(file);
    expect((await reopened.readAll(0)).map((e) => e.streamId)).toEqual(Array.from({ length: 20 }, (_, i) => `thread:${i}`));
    await reopened.close();
  });

  it("a store in memory, or with background checkpoints off, starts no worker and keeps SQLite's", async () => {
    const memory = SqliteEventStore.open(":memory:");
    expect(memory.checkpointer).toBeNull();
    await memory.close();
    const off = SqliteEventStore.open(join(dir, "off.db"), { backgroundCheckpoints: false });
    expect(off.checkpointer).toBeNull();
    for (let i = 0; i < 3; i++) await off.commit([accepted(newCommandId(), [event(`thread:${i}`)])]);
    expect(off.connectionSettings().walAutocheckpointPages).toBe(AUTOCHECKPOINT_PAGES);
    await off.close();
  });

  it("a worker that cannot open the database gives the connection its autocheckpoint back, and says so", async () => {
    const db = new BetterSqlite3(join(dir, "real.db"));
    db.pragma("journal_mode = WAL");
    db.pragma("wal_autocheckpoint = 0");
    const logged = new Promise<string>((resolve) => {
      const checkpointer = new WalCheckpointer(db, join(dir, "missing.db"), 1, resolve);
      checkpointer.noteCommit();
    });
    expect(await logged).toMatch(/background WAL checkpoints stopped; SQLite checkpoints on commit again/);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(AUTOCHECKPOINT_PAGES);
    db.close();
  });
});
