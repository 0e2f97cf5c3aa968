import type { Pool } from "pg";
import type { StateSnapshot } from "../eventStore.js";
import { assertSnapshotFits } from "../storeErrors.js";

/**
 * Replace the one snapshot row in a single statement (atomic on its own),
 * unless the kept row has the same version and a later sequence.
 */
const SAVE_SQL = `
  INSERT INTO state_snapshots (id, version, sequence, body, saved_at) VALUES (1, $1, $2, $3, $4)
  ON CONFLICT (id) DO UPDATE SET version = excluded.version, sequence = excluded.sequence, body = excluded.body, saved_at = excluded.saved_at
  WHERE NOT (state_snapshots.version = excluded.version AND state_snapshots.sequence > excluded.sequence)`;

/**
 * The state snapshot half of the PostgreSQL store. The log's head is read
 * before the write; it only grows, so a sequence that fits then still fits.
 */
export class PostgresSnapshots {
  constructor(private readonly pool: Pool) {}

  async save(snapshot: StateSnapshot, savedAt: string): Promise<boolean> {
    const head = await this.pool.query<{ last: number }>("SELECT COALESCE(max(sequence), 0) AS last FROM events");
    assertSnapshotFits(snapshot, head.rows[0]?.last ?? 0);
    const body = Buffer.from(snapshot.body.buffer, snapshot.body.byteOffset, snapshot.body.byteLength);
    const result = await this.pool.query(SAVE_SQL, [snapshot.version, snapshot.sequence, body, savedAt]);
    return result.rowCount === 1;
  }

  async load(version: string): Promise<StateSnapshot | null> {
    const result = await this.pool.query<{ sequence: number; body: Buffer }>("SELECT sequence, body FROM state_snapshots WHERE id = 1 AND version = $1", [version]);
    const row = result.rows[0];
    if (row === undefined) return null;
    return { version, sequence: row.sequence, body: new Uint8Array(row.body.buffer, row.body.byteOffset, row.body.byteLength) };
  }
}
