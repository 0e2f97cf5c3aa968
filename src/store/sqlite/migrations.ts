import type { Database } from "better-sqlite3";
import { assertNoUnknownVersions, assertOrdered, type AppliedMigration, type Migration } from "../migrationPlan.js";

/**
 * Versioned schema migrations for the SQLite event store. Append new
 * migrations at the end with the next version; never edit or reorder one that
 * has shipped, since databases record which versions they already applied.
 */

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "event log, receipts and outbox",
    sql: `
      CREATE TABLE events (
        sequence    INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id    TEXT NOT NULL UNIQUE,
        command_id  TEXT NOT NULL,
        stream_id   TEXT NOT NULL,
        type        TEXT NOT NULL,
        data        TEXT NOT NULL,
        occurred_at TEXT NOT NULL
      );
      CREATE INDEX events_by_stream ON events (stream_id, sequence);

      -- body is the JSON of the full CommandReceipt. A rowid table on purpose:
      -- commandIds arrive in random order, and random inserts into the small
      -- primary-key index dirty fewer pages than into a WITHOUT ROWID table
      -- that carries the whole body.
      CREATE TABLE receipts (
        command_id TEXT PRIMARY KEY,
        status     TEXT NOT NULL,
        body       TEXT NOT NULL
      );

      -- Creation order is rowid order (rows are only ever appended).
      CREATE TABLE outbox (
        id               TEXT PRIMARY KEY,
        command_id       TEXT NOT NULL,
        stream_id        TEXT NOT NULL,
        kind             TEXT NOT NULL,
        payload          TEXT NOT NULL,
        replay_safe      INTEGER NOT NULL,
        status           TEXT NOT NULL,
        attempts         INTEGER NOT NULL,
        lease_owner      TEXT,
        lease_expires_at INTEGER,
        available_at     INTEGER NOT NULL,
        last_error       TEXT,
        created_at       TEXT NOT NULL
      );
      CREATE INDEX outbox_claimable ON outbox (status, available_at);
    `,
  },
  {
    version: 2,
    name: "state snapshot",
    sql: `
      -- At most one row (id 1): the latest saved fold of the log.
      CREATE TABLE state_snapshots (
        id       INTEGER PRIMARY KEY CHECK (id = 1),
        version  TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        body     BLOB NOT NULL,
        saved_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: "turn items read model",
    sql: `
      -- The latest version of each thread's turn items, upserted in the
      -- transaction of the turn-item.updated event that carries it; data is
      -- that event's data ({"item": ...}). Filled from the log once here.
      CREATE TABLE turn_items (
        thread_id TEXT NOT NULL,
        position  INTEGER NOT NULL,
        item_id   TEXT NOT NULL,
        data      TEXT NOT NULL,
        PRIMARY KEY (thread_id, position)
      );
      CREATE INDEX turn_items_by_id ON turn_items (item_id);
      INSERT INTO turn_items (thread_id, position, item_id, data)
        SELECT json_extract(data, '$.item.threadId'), json_extract(data, '$.item.position'), json_extract(data, '$.item.id'), data
        FROM events
        WHERE type = 'turn-item.updated' AND json_type(data, '$.item.threadId') = 'text'
          AND json_type(data, '$.item.position') = 'integer' AND json_type(data, '$.item.id') = 'text'
        ORDER BY sequence
        ON CONFLICT (thread_id, position) DO UPDATE SET item_id = excluded.item_id, data = excluded.data;
    `,
  },
  {
    version: 4,
    name: "state snapshot in chunks",
    sql: `
      -- A large snapshot is written a chunk at a time, each chunk in its own
      -- short transaction, so the server never stops for the whole body;
      -- state_snapshots then names it (chunks > 0, body empty) in one small
      -- transaction. Chunks no row names are a save cut short: never read,
      -- and removed by the next save.
      ALTER TABLE state_snapshots ADD COLUMN chunks INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE state_snapshot_chunks (
        sequence INTEGER NOT NULL,
        ordinal  INTEGER NOT NULL,
        body     BLOB NOT NULL,
        PRIMARY KEY (sequence, ordinal)
      );
    `,
  },
];

/**
 * Apply, in version order, every migration the database has not recorded,
 * each in its own transaction together with its schema_migrations row, so a
 * crash leaves either the whole migration or none of it. Returns the versions
 * applied by this call (empty when the schema is current). Throws when the
 * database records a version this build does not know (written by a newer
 * build) rather than running against a schema it does not understand.
 */
export function runMigrations(
  db: Database,
  migrations: readonly Migration[] = MIGRATIONS,
  now: () => string = () => new Date().toISOString(),
): number[] {
  assertOrdered(migrations);
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`);
  const recorded = db.prepare("SELECT version FROM schema_migrations ORDER BY version").pluck().all() as number[];
  assertNoUnknownVersions(migrations, recorded);
  const done = new Set(recorded);
  const isRecorded = db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").pluck();
  const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  const applyOnce = db.transaction((migration: Migration): boolean => {
    // Checked again under the write lock: another process may have migrated since the read above.
    if (isRecorded.get(migration.version) !== undefined) return false;
    db.exec(migration.sql);
    record.run(migration.version, migration.name, now());
    return true;
  });
  const applied: number[] = [];
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    if (applyOnce.immediate(migration)) applied.push(migration.version);
  }
  return applied;
}

export function listAppliedMigrations(db: Database): AppliedMigration[] {
  return db
    .prepare("SELECT version, name, applied_at AS appliedAt FROM schema_migrations ORDER BY version")
    .all() as AppliedMigration[];
}
