import { setImmediate as nextTurn } from "node:timers/promises";
import type { Database, Statement } from "better-sqlite3";
import type { StateSnapshot } from "../eventStore.js";
import { assertSnapshotFits } from "../storeErrors.js";

interface SnapshotRow {
  readonly version: string;
  readonly sequence: number;
  readonly body: Buffer;
  readonly chunks: number;
}

/** A body larger than this is written a chunk of this size at a time. */
export const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;

/**
 * The state snapshot half of the SQLite store: one row naming the latest
 * snapshot, replaced in an IMMEDIATE transaction that also reads the log's
 * head, so a snapshot never names a position the log does not have and a
 * crash keeps the old one whole. A body up to SNAPSHOT_CHUNK_BYTES lives in
 * the row. A larger one is first written to state_snapshot_chunks a chunk
 * per short transaction, letting the event loop run between them (a 32 MB
 * body in one synchronous write stopped the server for about 0.4 s); the
 * row then names it. Chunks of a save cut short are named by no row, never
 * read, and removed by the next save.
 */
export class SqliteSnapshots {
  private readonly selectHead: Statement<[], number>;
  private readonly selectKept: Statement<[], SnapshotRow>;
  private readonly selectKeptPosition: Statement<[], Omit<SnapshotRow, "body" | "chunks">>;
  private readonly selectChunks: Statement<[number], Buffer>;
  private readonly insertChunk: Statement<[number, number, Buffer]>;
  private readonly deleteChunksOf: Statement<[number]>;
  private readonly upsert: Statement<[string, number, Buffer, number, string]>;
  private readonly nameTransaction: (snapshot: StateSnapshot, body: Buffer, chunks: number, savedAt: string) => boolean;
  private readonly replaceTransaction: (snapshot: StateSnapshot, staging: number, chunks: number, savedAt: string) => boolean;

  constructor(
    db: Database,
    /** Throws the store's typed closed error once the store is closed: checked before every chunk. */
    private readonly assertOpen: () => void,
  ) {
    this.selectHead = db.prepare<[], number>("SELECT COALESCE(MAX(sequence), 0) FROM events").pluck();
    this.selectKept = db.prepare<[], SnapshotRow>("SELECT version, sequence, body, chunks FROM state_snapshots WHERE id = 1");
    this.selectKeptPosition = db.prepare<[], Omit<SnapshotRow, "body" | "chunks">>("SELECT version, sequence FROM state_snapshots WHERE id = 1");
    this.selectChunks = db.prepare<[number], Buffer>("SELECT body FROM state_snapshot_chunks WHERE sequence = ? ORDER BY ordinal").pluck();
    this.insertChunk = db.prepare("INSERT INTO state_snapshot_chunks (sequence, ordinal, body) VALUES (?, ?, ?)");
    this.deleteChunksOf = db.prepare("DELETE FROM state_snapshot_chunks WHERE sequence = ?");
    const deleteUnnamed = db.prepare<[number]>("DELETE FROM state_snapshot_chunks WHERE sequence <> ?");
    const deleteAll = db.prepare("DELETE FROM state_snapshot_chunks");
    const renameChunks = db.prepare<[number, number]>("UPDATE state_snapshot_chunks SET sequence = ? WHERE sequence = ?");
    this.upsert = db.prepare(`
      INSERT INTO state_snapshots (id, version, sequence, body, chunks, saved_at) VALUES (1, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET version = excluded.version, sequence = excluded.sequence, body = excluded.body, chunks = excluded.chunks, saved_at = excluded.saved_at`);
    const name = db.transaction((snapshot: StateSnapshot, body: Buffer, chunks: number, savedAt: string): boolean => {
      assertSnapshotFits(snapshot, this.selectHead.get() ?? 0);
      // Version and position only: the kept body is not read just to be replaced.
      const kept = this.selectKeptPosition.get();
      if (kept !== undefined && kept.version === snapshot.version && kept.sequence > snapshot.sequence) return false;
      this.upsert.run(snapshot.version, snapshot.sequence, body, chunks, savedAt);
      // Whatever chunks the row no longer names: the replaced snapshot's and any save cut short.
      if (chunks > 0) deleteUnnamed.run(snapshot.sequence);
      else deleteAll.run();
      return true;
    });
    this.nameTransaction = (snapshot, body, chunks, savedAt) => name.immediate(snapshot, body, chunks, savedAt);
    // A second save of the position the kept snapshot names (another version): its staged chunks take the kept ones' key as the row names them.
    const replace = db.transaction((snapshot: StateSnapshot, staging: number, chunks: number, savedAt: string): boolean => {
      this.deleteChunksOf.run(snapshot.sequence);
      renameChunks.run(snapshot.sequence, staging);
      return name(snapshot, Buffer.alloc(0), chunks, savedAt);
    });
    this.replaceTransaction = (snapshot, staging, chunks, savedAt) => replace.immediate(snapshot, staging, chunks, savedAt);
  }

  async save(snapshot: StateSnapshot, savedAt: string): Promise<boolean> {
    const body = Buffer.from(snapshot.body.buffer, snapshot.body.byteOffset, snapshot.body.byteLength);
    if (body.byteLength <= SNAPSHOT_CHUNK_BYTES) return this.nameTransaction(snapshot, body, 0, savedAt);
    // Checked before any chunk is written, so a refused snapshot writes nothing.
    assertSnapshotFits(snapshot, this.selectHead.get() ?? 0);
    const kept = this.selectKeptPosition.get();
    if (kept !== undefined && kept.version === snapshot.version && kept.sequence > snapshot.sequence) return false;
    // A save of this position cut short earlier left chunks behind (the kept row names another sequence, or none).
    if (kept?.sequence !== snapshot.sequence) this.deleteChunksOf.run(snapshot.sequence);
    const chunks = Math.ceil(body.byteLength / SNAPSHOT_CHUNK_BYTES);
    // The kept row may name chunks of this same sequence: write the new ones beside them under another key first.
    const staging = kept?.sequence === snapshot.sequence ? -1 - snapshot.sequence : snapshot.sequence;
    this.deleteChunksOf.run(staging);
    for (let ordinal = 0; ordinal < chunks; ordinal += 1) {
      this.assertOpen();
      this.insertChunk.run(staging, ordinal, body.subarray(ordinal * SNAPSHOT_CHUNK_BYTES, (ordinal + 1) * SNAPSHOT_CHUNK_BYTES));
      await nextTurn();
    }
    this.assertOpen();
    if (staging !== snapshot.sequence) return this.replaceTransaction(snapshot, staging, chunks, savedAt);
    const named = this.nameTransaction(snapshot, Buffer.alloc(0), chunks, savedAt);
    if (!named) this.deleteChunksOf.run(snapshot.sequence);
    return named;
  }

  load(version: string): StateSnapshot | null {
    const kept = this.selectKept.get();
    if (kept === undefined || kept.version !== version) return null;
    if (kept.chunks === 0) return { version: kept.version, sequence: kept.sequence, body: new Uint8Array(kept.body.buffer, kept.body.byteOffset, kept.body.byteLength) };
    const chunks = this.selectChunks.all(kept.sequence);
    // A row names its chunks only after all of them were written: fewer means the file was damaged, and a snapshot is only a shortcut.
    if (chunks.length !== kept.chunks) return null;
    const body = Buffer.concat(chunks);
    return { version: kept.version, sequence: kept.sequence, body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) };
  }
}
