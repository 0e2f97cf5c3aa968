import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreErrorCode } from "../storeErrors.js";
import { commitMany } from "../testSuiteFixtures.js";
import { SqliteEventStore } from "./sqliteEventStore.js";
import { SNAPSHOT_CHUNK_BYTES } from "./sqliteSnapshots.js";

/** A body of `chunks` full chunks and a bit, every byte `fill`. */
const body = (chunks: number, fill: number) => new Uint8Array(chunks * SNAPSHOT_CHUNK_BYTES + 100).fill(fill);

describe("SQLite snapshots written in chunks", () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "loom-snapshot-chunks-"));
    file = join(dir, "loom.db");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function chunkRows(): { sequence: number; count: number }[] {
    const db = new BetterSqlite3(file, { readonly: true });
    try {
      return db.prepare("SELECT sequence, COUNT(*) AS count FROM state_snapshot_chunks GROUP BY sequence ORDER BY sequence").all() as { sequence: number; count: number }[];
    } finally {
      db.close();
    }
  }

  it("lets the event loop run between chunks, and keeps only the named snapshot's chunks", async () => {
    const store = SqliteEventStore.open(file);
    await commitMany(store, 10);
    // Counts turns of the event loop: one tick per turn while the save runs.
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      if (!ticking) return;
      turns += 1;
      setImmediate(tick);
    };
    setImmediate(tick);
    try {
      expect(await store.saveSnapshot({ version: "v1", sequence: 4, body: body(3, 1) })).toBe(true);
    } finally {
      ticking = false;
    }
    // Four chunks, one per turn: other work ran between them.
    expect(turns).toBeGreaterThanOrEqual(3);
    expect(chunkRows()).toEqual([{ sequence: 4, count: 4 }]);
    expect(await store.saveSnapshot({ version: "v1", sequence: 10, body: body(2, 2) })).toBe(true);
    expect(chunkRows()).toEqual([{ sequence: 10, count: 3 }]);
    expect(await store.saveSnapshot({ version: "v1", sequence: 10, body: new Uint8Array([7]) })).toBe(true);
    expect(chunkRows()).toEqual([]);
    await store.close();
  });

  it("a save cut short by the store closing answers store_closed, keeps the last snapshot, and its chunks go with the next save", async () => {
    const store = SqliteEventStore.open(file);
    await commitMany(store, 10);
    await store.saveSnapshot({ version: "v1", sequence: 4, body: body(2, 1) });
    const cut = store.saveSnapshot({ version: "v1", sequence: 10, body: body(5, 2) });
    // The first chunk is written synchronously; closing now cuts the save after it (and waits for the checkpointer the chunk started).
    const refused = expect(cut).rejects.toMatchObject({ code: StoreErrorCode.closed });
    await store.close();
    await refused;
    expect(chunkRows()).toEqual([
      { sequence: 4, count: 3 },
      { sequence: 10, count: 1 },
    ]);

    const reopened = SqliteEventStore.open(file);
    const kept = await reopened.loadSnapshot("v1");
    expect(kept?.sequence).toBe(4);
    expect(Buffer.from(kept!.body).equals(Buffer.from(body(2, 1)))).toBe(true);
    expect(await reopened.saveSnapshot({ version: "v1", sequence: 10, body: body(1, 3) })).toBe(true);
    expect(chunkRows()).toEqual([{ sequence: 10, count: 2 }]);
    expect(Buffer.from((await reopened.loadSnapshot("v1"))!.body).equals(Buffer.from(body(1, 3)))).toBe(true);
    await reopened.close();
  });

  it("a chunked save starts the background checkpointer before any commit asked for it, so SQLite's own checkpoint stays off", async () => {
    const store = SqliteEventStore.open(file);
    await commitMany(store, 3);
    expect(store.connectionSettings().walAutocheckpointPages).toBeGreaterThan(0);
    const checkpointed = store.checkpointer!.nextCheckpoint();
    expect(await store.saveSnapshot({ version: "v1", sequence: 3, body: body(3, 1) })).toBe(true);
    expect((await checkpointed).walFrames).toBeGreaterThan(0);
    expect(store.checkpointer!.active).toBe(true);
    expect(store.connectionSettings().walAutocheckpointPages).toBe(0);
    await store.close();
  });

  it("refuses a snapshot past the log's head before writing any chunk", async () => {
    const store = SqliteEventStore.open(file);
    await commitMany(store, 3);
    await expect(store.saveSnapshot({ version: "v1", sequence: 4, body: body(2, 1) })).rejects.toMatchObject({ code: StoreErrorCode.badSnapshot });
    expect(chunkRows()).toEqual([]);
    expect(await store.loadSnapshot("v1")).toBeNull();
    await store.close();
  });
});
