import type { Pool, PoolClient } from "pg";
import { assertNoUnknownVersions, assertOrdered, type AppliedMigration, type Migration } from "../migrationPlan.js";
import { transactionLockSql, type StoreNamespace } from "./postgresLocks.js";

/**
 * Versioned schema migrations for the PostgreSQL event store. Append new
 * migrations at the end with the next version; never edit or reorder one that
 * has shipped, since databases record which versions they already applied.
 *
 * Why the columns look the way they do:
 * - `events.sequence` is assigned by the commit under the log lock
 *   (postgresCommit.ts), not by a PostgreSQL sequence: sequences burn values
 *   on rollback, and the log must be gap-free.
 * - Event data, outbox payloads and receipt bodies are `json`, not `jsonb`:
 *   json keeps the text exactly as written (key order, spacing), so a read
 *   returns what SQLite and the memory store return.
 * - Times that the outbox compares are epoch milliseconds (`bigint`);
 *   `occurred_at` and `created_at` are the ISO text the store stamped.
 * - `outbox.position` orders rows by creation; an identity may skip values
 *   after a rollback, which is harmless for ordering.
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "event log, receipts and outbox",
    sql: `
      CREATE TABLE events (
        sequence    bigint PRIMARY KEY,
        event_id    text NOT NULL UNIQUE,
        command_id  text NOT NULL,
        stream_id   text NOT NULL,
        type        text NOT NULL,
        data        json NOT NULL,
        occurred_at text NOT NULL
      );
      CREATE INDEX events_by_stream ON events (stream_id, sequence);

      CREATE TABLE receipts (
        command_id text PRIMARY KEY,
        status     text NOT NULL CHECK (status IN ('accepted', 'rejected')),
        body       json NOT NULL
      );

      CREATE TABLE outbox (
        position         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id               text NOT NULL UNIQUE,
        command_id       text NOT NULL,
        stream_id        text NOT NULL,
        kind             text NOT NULL,
        payload          json NOT NULL,
        replay_safe      boolean NOT NULL,
        status           text NOT NULL CHECK (status IN ('pending', 'leased', 'done', 'failed')),
        attempts         integer NOT NULL,
        lease_owner      text,
        lease_expires_at bigint,
        available_at     bigint NOT NULL,
        last_error       text,
        created_at       text NOT NULL
      );
      -- Claims scan only unfinished rows, in creation order; done and failed
      -- rows (the bulk of the table over time) are not in this index.
      CREATE INDEX outbox_open ON outbox (position) WHERE status IN ('pending', 'leased');
      CREATE INDEX outbox_by_status ON outbox (status, position);
    `,
  },
  {
    version: 2,
    name: "state snapshot",
    sql: `
      -- At most one row (id 1): the latest saved fold of the log.
      CREATE TABLE state_snapshots (
        id       integer PRIMARY KEY CHECK (id = 1),
        version  text NOT NULL,
        sequence bigint NOT NULL,
        body     bytea NOT NULL,
        saved_at text NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: "nodes, credential hashes and shared settings",
    // Several Loom nodes on one database (docs/postgres.md): a node's row is
    // its heartbeat; credentials hold SHA-256 hashes of tokens, never tokens.
    sql: `
      CREATE TABLE loom_settings (
        key   text PRIMARY KEY,
        value text NOT NULL
      );

      CREATE TABLE loom_nodes (
        node_id       text PRIMARY KEY,
        url           text NOT NULL,
        pid           integer NOT NULL,
        hostname      text NOT NULL,
        started_at    bigint NOT NULL,
        heartbeat_at  bigint NOT NULL,
        stopped_at    bigint,
        lost_at       bigint,
        taken_over_by text
      );

      CREATE TABLE loom_credentials (
        token_hash          text PRIMARY KEY,
        credential_id       text NOT NULL UNIQUE,
        kind                text NOT NULL CHECK (kind IN ('thread', 'owner')),
        node_id             text NOT NULL,
        thread_id           text,
        provider_session_id text,
        scope               json NOT NULL,
        expires_at          bigint,
        last_used_at        bigint NOT NULL,
        ended               text CHECK (ended IN ('expired', 'revoked')),
        ended_at            bigint
      );
      CREATE INDEX loom_credentials_by_session ON loom_credentials (provider_session_id) WHERE ended IS NULL;
      CREATE INDEX loom_credentials_by_node ON loom_credentials (node_id) WHERE ended IS NULL;
    `,
  },
  {
    version: 4,
    name: "turn items read model",
    // The latest version of each thread's turn items, upserted in the
    // transaction of the turn-item.updated event that carries it; data is
    // that event's data ({"item": ...}). Filled from the log once here.
    sql: `
      CREATE TABLE turn_items (
        thread_id text NOT NULL,
        position  integer NOT NULL,
        item_id   text NOT NULL,
        data      json NOT NULL,
        PRIMARY KEY (thread_id, position)
      );
      CREATE INDEX turn_items_by_id ON turn_items (item_id);
      INSERT INTO turn_items (thread_id, position, item_id, data)
        SELECT DISTINCT ON (data->'item'->>'threadId', (data->'item'->>'position')::integer)
               data->'item'->>'threadId', (data->'item'->>'position')::integer, data->'item'->>'id', data
        FROM events
        WHERE type = 'turn-item.updated' AND json_typeof(data->'item'->'threadId') = 'string'
          AND json_typeof(data->'item'->'position') = 'number' AND json_typeof(data->'item'->'id') = 'string'
        ORDER BY data->'item'->>'threadId', (data->'item'->>'position')::integer, sequence DESC;
    `,
  },
];

/**
 * Create the store's schema if needed, then apply, in version order, every
 * migration it has not recorded, each in its own transaction together with
 * its schema_migrations row (DDL is transactional in PostgreSQL, so a failure
 * leaves none of it). Each transaction holds the migration advisory lock, so
 * processes opening the same log at once migrate it once. The pool's
 * connections must have the schema as their search_path. Returns the versions
 * this call applied; throws StoreError `store_unknown_migration` when the
 * schema records a version this build does not know.
 */
export async function runPostgresMigrations(
  pool: Pool,
  namespace: StoreNamespace,
  migrations: readonly Migration[] = POSTGRES_MIGRATIONS,
  now: () => string = () => new Date().toISOString(),
): Promise<number[]> {
  assertOrdered(migrations);
  const applied: number[] = [];
  const client = await pool.connect();
  try {
    const recorded = await locked(client, namespace, async () => {
      // Under the lock: concurrent CREATE ... IF NOT EXISTS can still collide in the catalog.
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${namespace.schema}`);
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at text NOT NULL
      )`);
      const result = await client.query<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version");
      return result.rows.map((row) => row.version);
    });
    assertNoUnknownVersions(migrations, recorded);
    const done = new Set(recorded);
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      const didApply = await locked(client, namespace, async () => {
        // Checked again under the lock: another process may have migrated since the read above.
        const again = await client.query("SELECT 1 FROM schema_migrations WHERE version = $1", [migration.version]);
        if (again.rowCount !== 0) return false;
        await client.query(migration.sql);
        await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
          migration.version,
          migration.name,
          now(),
        ]);
        return true;
      });
      if (didApply) applied.push(migration.version);
    }
  } finally {
    client.release();
  }
  return applied;
}

export async function listAppliedPostgresMigrations(pool: Pool): Promise<AppliedMigration[]> {
  const result = await pool.query<AppliedMigration>(
    `SELECT version, name, applied_at AS "appliedAt" FROM schema_migrations ORDER BY version`,
  );
  return result.rows;
}

/** Run `work` in a transaction that holds the migration lock; roll back if it throws. */
async function locked<T>(client: PoolClient, namespace: StoreNamespace, work: () => Promise<T>): Promise<T> {
  await client.query(`BEGIN; ${transactionLockSql(namespace.migrationLock)}`);
  try {
    const result = await work();
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
