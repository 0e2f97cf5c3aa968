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

/** A body larger than this is written a chunk of this size at a time (a write of this size takes about a millisecond). */
export const SNAPSHOT_CHUNK_BYTES = 256 * 1024;

/**
 * The state snapshot half of the SQLite store: one row naming the latest
 * snapshot, replaced in an IMMEDIATE transaction that also reads the log's
 * head, so a snapshot never names a position the log does not have and a
 * crash keeps the old one whole. A body up to SNAPSHOT_CHUNK_BYTES lives in
 * the row. A larger one is first written to state_snapshot_chunks a chunk
 * per short transaction, letting the event loop run between them (a 32 MB
 * body in one synchronous write stopped the server for about 0.4 s); the
 * row then names it in a transaction that writes the row alone. The chunks
 * no row names (the replaced snapshot's, a save cut short) are never read;
 * they are deleted after the naming, one chunk per statement with a turn of
 * the event loop between, and whatever a crash left of them goes with the
 * next save.
 */
export class SqliteSnapshots {
  private readonly selectHead: Statement<[], number>;
  private readonly selectKept: Statement<[], SnapshotRow>;
  private readonly selectKeptPosition: Statement<[], Omit<SnapshotRow, "body" | "chunks">>;
  private readonly selectChunks: Statement<[number], Buffer>;
  private readonly insertChunk: Statement<[number, number, Buffer]>;
  private readonly deleteChunksOf: Statement<[number]>;
  private readonly deleteOneUnnamed: Statement<[number | null]>;
  private readonly upsert: Statement<[string, number, Buffer, number, string]>;
  private readonly nameTransaction: (snapshot: StateSnapshot, body: Buffer, chunks: number, savedAt: string) => boolean;
  private readonly replaceTransaction: (snapshot: StateSnapshot, staging: number, chunks: number, savedAt: string) => boolean;

  constructor(
    db: Database,
    /** Throws the store's typed closed error once the store is closed: checked before every chunk. */
    private readonly assertOpen: () => void,
    /** Called after each chunk written or deleted: the WAL grows by a chunk, for the background checkpointer (walCheckpointer.ts). */
    private readonly wroteChunk: () => void = () => undefined,
  ) {
    this.selectHead = db.prepare<[], number>("SELECT COALESCE(MAX(sequence), 0) FROM events").pluck();
    this.selectKept = db.prepare<[], SnapshotRow>("SELECT version, sequence, body, chunks FROM state_snapshots WHERE id = 1");
    this.selectKeptPosition = db.prepare<[], Omit<SnapshotRow, "body" | "chunks">>("SELECT version, sequence FROM state_snapshots WHERE id = 1");
    this.selectChunks = db.prepare<[number], Buffer>("SELECT body FROM state_snapshot_chunks WHERE sequence = ? ORDER BY ordinal").pluck();
    this.insertChunk = db.prepare("INSERT INTO state_snapshot_chunks (sequence, ordinal, body) VALUES (?, ?, ?)");
    this.deleteChunksOf = db.prepare("DELETE FROM state_snapshot_chunks WHERE sequence = ?");
    // One chunk that the row does not name (null: the row names none).
    this.deleteOneUnnamed = db.prepare<[number | null]>(
      "DELETE FROM state_snapshot_chunks WHERE (sequence, ordinal) = (SELECT sequence, ordinal FROM state_snapshot_chunks WHERE sequence IS NOT ? LIMIT 1)",
    );
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
    const named = await this.write(snapshot, savedAt);
    if (named) await this.removeUnnamed(snapshot.body.byteLength <= SNAPSHOT_CHUNK_BYTES ? null : snapshot.sequence);
    return named;
  }

  /** Delete the chunks the row does not name, one per turn of the event loop; stops quietly when the store closes (the next save finishes it). */
  private async removeUnnamed(named: number | null): Promise<void> {
    for (;;) {
      try {
        this.assertOpen();
      } catch {
        return;
      }
      if (this.deleteOneUnnamed.run(named).changes === 0) return;
      this.wroteChunk();
      await nextTurn();
    }
  }

  private async write(snapshot: StateSnapshot, savedAt: string): Promise<boolean> {
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
      this.wroteChunk();
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
