import type { Database, Statement } from "better-sqlite3";
import type { StateSnapshot } from "../eventStore.js";
import { assertSnapshotFits } from "../storeErrors.js";

interface SnapshotRow {
  readonly version: string;
  readonly sequence: number;
  readonly body: Buffer;
}

/**
 * The state snapshot half of the SQLite store: one row, replaced in an
 * IMMEDIATE transaction that also reads the log's head, so a snapshot never
 * names a position the log does not have and a crash keeps the old row whole.
 */
export class SqliteSnapshots {
  private readonly selectHead: Statement<[], number>;
  private readonly selectKept: Statement<[], SnapshotRow>;
  private readonly selectKeptPosition: Statement<[], Omit<SnapshotRow, "body">>;
  private readonly upsert: Statement<[string, number, Buffer, string]>;
  private readonly saveTransaction: (snapshot: StateSnapshot, savedAt: string) => boolean;

  constructor(db: Database) {
    this.selectHead = db.prepare<[], number>("SELECT COALESCE(MAX(sequence), 0) FROM events").pluck();
    this.selectKept = db.prepare<[], SnapshotRow>("SELECT version, sequence, body FROM state_snapshots WHERE id = 1");
    this.selectKeptPosition = db.prepare<[], Omit<SnapshotRow, "body">>("SELECT version, sequence FROM state_snapshots WHERE id = 1");
    this.upsert = db.prepare(`
      INSERT INTO state_snapshots (id, version, sequence, body, saved_at) VALUES (1, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET version = excluded.version, sequence = excluded.sequence, body = excluded.body, saved_at = excluded.saved_at`);
    const save = db.transaction((snapshot: StateSnapshot, savedAt: string): boolean => {
      assertSnapshotFits(snapshot, this.selectHead.get() ?? 0);
      // Version and position only: the kept body is not read just to be replaced.
      const kept = this.selectKeptPosition.get();
      if (kept !== undefined && kept.version === snapshot.version && kept.sequence > snapshot.sequence) return false;
      this.upsert.run(snapshot.version, snapshot.sequence, Buffer.from(snapshot.body.buffer, snapshot.body.byteOffset, snapshot.body.byteLength), savedAt);
      return true;
    });
    this.saveTransaction = (snapshot, savedAt) => save.immediate(snapshot, savedAt);
  }

  save(snapshot: StateSnapshot, savedAt: string): boolean {
    return this.saveTransaction(snapshot, savedAt);
  }

  load(version: string): StateSnapshot | null {
    const kept = this.selectKept.get();
    if (kept === undefined || kept.version !== version) return null;
    return { version: kept.version, sequence: kept.sequence, body: new Uint8Array(kept.body.buffer, kept.body.byteOffset, kept.body.byteLength) };
  }
}
