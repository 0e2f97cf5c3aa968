import pg from "pg";
import { describe, expect, it } from "vitest";
import { usePostgresDatabase } from "../../testkit/postgresTestCluster.js";
import { StoreError, StoreErrorCode } from "../storeErrors.js";
import { eventStoreContract } from "../testSuite.js";
import { accepted, effect, event, newCommandId, rejected } from "../testSuiteFixtures.js";
import { listAppliedPostgresMigrations, POSTGRES_MIGRATIONS, runPostgresMigrations } from "./migrations.js";
import { PostgresEventStore, type PostgresEventStoreOptions } from "./postgresEventStore.js";
import { storeNamespace } from "./postgresLocks.js";

const database = usePostgresDatabase();
let logs = 0;

/** A schema name no other test of this file uses: a fresh, empty log. */
function freshSchema(label = "log"): string {
  logs += 1;
  return `${label}_${logs}`;
}

// A fresh log (schema) per test. A small replay page makes the contract's
// replay/live races span many pages; a short poll keeps peer cases quick
// should a notification be late.
eventStoreContract(
  "postgres",
  async () => {
    const { url } = database();
    const options: PostgresEventStoreOptions = { schema: freshSchema("contract"), replayPageSize: 64, pollIntervalMs: 200 };
    return {
      store: await PostgresEventStore.open(url, options),
      reopen: () => PostgresEventStore.open(url, options),
      openPeer: () => PostgresEventStore.open(url, options),
      // The schema goes with the file's database.
      cleanup: () => Promise.resolve(),
    };
  },
  { durable: true, peers: true },
);

/** Run `work` with a plain connection to the file's database, its search_path set to `schema`. */
async function withClient<T>(schema: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: database().url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A pool on the file's database with `schema` as its search_path, ended after `work`. */
async function withPool<T>(schema: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: database().url, options: `-c search_path=${schema}`, max: 2 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

describe("PostgresEventStore", () => {
  it("creates its schema and tables, and stores JSON as written", async () => {
    const schema = freshSchema();
    const store = await PostgresEventStore.open(database().url, { schema });
    const data = { zebra: 1, apple: [2, { nested: "é ✓" }], nothing: null };
    await store.commit([accepted(newCommandId(), [event("thread:1", data)], [effect("run.start", { b: 1, a: 2 })])]);
    await store.close();

    const tables = await withClient(schema, async (client) => {
      const result = await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
        [schema],
      );
      return result.rows.map((row) => row.table_name);
    });
    expect(tables).toEqual(["events", "loom_credentials", "loom_nodes", "loom_settings", "outbox", "receipts", "schema_migrations", "state_snapshots", "turn_items"]);
    // json (not jsonb) keeps key order, so a read hands back what SQLite would.
    const stored = await withClient(schema, async (client) => {
      const result = await client.query<{ data: string; payload: string }>(
        "SELECT events.data::text AS data, outbox.payload::text AS payload FROM events, outbox",
      );
      return result.rows[0];
    });
    expect(stored).toEqual({ data: JSON.stringify(data), payload: '{"b":1,"a":2}' });
  });

  it("keeps logs in different schemas of one database apart", async () => {
    const [first, second] = await Promise.all([
      PostgresEventStore.open(database().url, { schema: freshSchema() }),
      PostgresEventStore.open(database().url, { schema: freshSchema() }),
    ]);
    const commandId = newCommandId();
    await first.commit([accepted(commandId, [event("thread:1"), event("thread:1")])]);
    const [elsewhere] = await second.commit([accepted(commandId, [event("thread:2")])]);
    expect(elsewhere).toMatchObject({ duplicate: false, receipt: { sequence: 1 } });
    expect(await first.lastSequence()).toBe(2);
    expect(await second.lastSequence()).toBe(1);
    await Promise.all([first.close(), second.close()]);
  });

  it("refuses a schema name that is not a plain identifier, before connecting", async () => {
    for (const schema of ["Bad", "x; DROP TABLE events", "", "a".repeat(49)]) {
      const opening = PostgresEventStore.open("postgres://nobody@127.0.0.1:1/none", { schema });
      await expect(opening).rejects.toBeInstanceOf(StoreError);
      await expect(opening).rejects.toMatchObject({ code: StoreErrorCode.badConfiguration });
    }
  });

  it("fails to open, leaving nothing behind, when the server cannot be reached", async () => {
    const url = new URL(database().url);
    url.port = "1";
    await expect(PostgresEventStore.open(url.toString(), { schema: freshSchema() })).rejects.toThrow(/ECONNREFUSED|connect/);
  });

  it("answers many receipt lookups made at once, each with its own receipt", async () => {
    const store = await PostgresEventStore.open(database().url, { schema: freshSchema() });
    const ids = Array.from({ length: 1_500 }, (_, index) => newCommandId(`lookup-${index}`));
    const entries = ids.map((commandId, index) => (index % 3 === 0 ? rejected(commandId) : accepted(commandId, [event("thread:1")])));
    const results = await store.commit(entries);
    const asked = [...ids, ...ids.slice(0, 10), "cmd:never-seen", "cmd:never-seen"];
    const answers = await Promise.all(asked.map((commandId) => store.lookupReceipt(commandId)));
    expect(answers.slice(0, ids.length)).toEqual(results.map((result) => result.receipt));
    expect(answers.slice(ids.length, ids.length + 10)).toEqual(results.slice(0, 10).map((result) => result.receipt));
    expect(answers.slice(-2)).toEqual([null, null]);
    await store.close();
  });
});

describe("PostgreSQL migrations", () => {
  it("records each migration once and applies nothing on reopen", async () => {
    const schema = freshSchema();
    await (await PostgresEventStore.open(database().url, { schema })).close();
    const before = await withPool(schema, (pool) => listAppliedPostgresMigrations(pool));
    expect(before.map((row) => [row.version, row.name])).toEqual(POSTGRES_MIGRATIONS.map((migration) => [migration.version, migration.name]));
    await (await PostgresEventStore.open(database().url, { schema })).close();
    expect(await withPool(schema, (pool) => listAppliedPostgresMigrations(pool))).toEqual(before);
  });

  it("migrates once when several processes open a new log at the same time", async () => {
    const schema = freshSchema();
    const stores = await Promise.all(Array.from({ length: 4 }, () => PostgresEventStore.open(database().url, { schema })));
    const applied = await withPool(schema, (pool) => listAppliedPostgresMigrations(pool));
    expect(applied.map((row) => row.version)).toEqual(POSTGRES_MIGRATIONS.map((migration) => migration.version));
    await Promise.all(stores.map((store) => store.close()));
  });

  it("applies only new migrations, each in its own transaction", async () => {
    const schema = freshSchema();
    const namespace = storeNamespace(schema);
    const first = { version: 1, name: "one", sql: "CREATE TABLE one (x integer)" };
    const second = { version: 2, name: "two", sql: "CREATE TABLE two (x integer)" };
    const broken = { version: 3, name: "broken", sql: "CREATE TABLE three (x integer); INSERT INTO missing VALUES (1)" };
    await withPool(schema, async (pool) => {
      expect(await runPostgresMigrations(pool, namespace, [first])).toEqual([1]);
      expect(await runPostgresMigrations(pool, namespace, [first])).toEqual([]);
      expect(await runPostgresMigrations(pool, namespace, [first, second])).toEqual([2]);
      await expect(runPostgresMigrations(pool, namespace, [first, second, broken])).rejects.toThrow(/missing/);
      expect((await listAppliedPostgresMigrations(pool)).map((row) => row.version)).toEqual([1, 2]);
      const three = await pool.query("SELECT to_regclass('three') AS found");
      expect(three.rows[0]).toEqual({ found: null });
      await expect(runPostgresMigrations(pool, namespace, [second, first])).rejects.toThrow(/increasing/);
    });
  });

  it("refuses a log migrated by a newer build", async () => {
    const schema = freshSchema();
    await withPool(schema, (pool) =>
      runPostgresMigrations(pool, storeNamespace(schema), [...POSTGRES_MIGRATIONS, { version: 999, name: "from the future", sql: "SELECT 1" }]),
    );
    const opening = PostgresEventStore.open(database().url, { schema });
    await expect(opening).rejects.toBeInstanceOf(StoreError);
    await expect(opening).rejects.toMatchObject({ code: StoreErrorCode.unknownMigration });
  });
});
