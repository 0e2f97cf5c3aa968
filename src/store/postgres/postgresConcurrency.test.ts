import pg from "pg";
import { describe, expect, it } from "vitest";
import { usePostgresDatabase } from "../../testkit/postgresTestCluster.js";
import { runStoreWriters } from "../../testkit/storeWriterProcess.js";
import type { StoredEvent } from "../../contracts/envelopes.js";
import { accepted, effect, event, newCommandId, range, sequencesOf, waitFor } from "../testSuiteFixtures.js";
import { PostgresEventStore } from "./postgresEventStore.js";
import { storeNamespace } from "./postgresLocks.js";
import { CLAIM_SQL } from "./postgresOutbox.js";

const database = usePostgresDatabase();
let logs = 0;

function freshSchema(): string {
  logs += 1;
  return `concurrency_${logs}`;
}

async function connect(schema: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: database().url, options: `-c search_path=${schema}` });
  await client.connect();
  return client;
}

describe("PostgreSQL writers", () => {
  it("takes the log's advisory lock before assigning sequences: a commit waits for whoever holds it", async () => {
    const schema = freshSchema();
    const store = await PostgresEventStore.open(database().url, { schema });
    const { logLock } = storeNamespace(schema);
    const holder = await connect(schema);
    const observer = await connect(schema);
    await holder.query("BEGIN");
    await holder.query("SELECT pg_advisory_xact_lock($1, $2)", [logLock.classId, logLock.objectId]);

    let settled = false;
    const committing = store.commit([accepted(newCommandId(), [event("thread:1")])]).finally(() => {
      settled = true;
    });
    // Wait until the commit's connection is queued behind the holder on exactly this lock.
    let waiting = false;
    const deadline = Date.now() + 10_000;
    while (!waiting && Date.now() < deadline) {
      const result = await observer.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $1 AND objid = $2 AND objsubid = 2",
        [logLock.classId >>> 0, logLock.objectId >>> 0],
      );
      waiting = result.rows[0]!.n === 1;
    }
    expect(waiting).toBe(true);
    expect(settled).toBe(false);

    await holder.query("COMMIT");
    const [result] = await committing;
    expect(sequencesOf(result!.events)).toEqual([1]);
    await Promise.all([holder.end(), observer.end(), store.close()]);
  });

  it("makes commits visible in sequence order: a raw tailer never sees a gap while stores race", async () => {
    const schema = freshSchema();
    const stores = await Promise.all(Array.from({ length: 3 }, () => PostgresEventStore.open(database().url, { schema, poolSize: 4 })));
    const tailer = await connect(schema);
    let writing = true;
    const writers = Promise.all(
      range(0, 11).map(async (writer) => {
        const store = stores[writer % stores.length]!;
        for (let round = 0; round < 20; round += 1) {
          await store.commit([accepted(newCommandId(`w${writer}`), range(0, writer % 3).map(() => event(`thread:${writer}`)))]);
        }
      }),
    ).finally(() => {
      writing = false;
    });

    // Poll as fast as possible; every read must continue exactly where the last one ended.
    let last = 0;
    let reads = 0;
    const gaps: string[] = [];
    while (writing || last < (await stores[0]!.lastSequence())) {
      const page = await tailer.query<{ sequence: string }>("SELECT sequence FROM events WHERE sequence > $1 ORDER BY sequence", [last]);
      reads += 1;
      for (const row of page.rows) {
        const sequence = Number(row.sequence);
        if (sequence !== last + 1) gaps.push(`${last} -> ${sequence}`);
        last = sequence;
      }
    }
    await writers;
    expect(gaps).toEqual([]);
    expect(reads).toBeGreaterThan(1);
    expect(last).toBe(20 * (4 * 1 + 4 * 2 + 4 * 3));
    await tailer.end();
    await Promise.all(stores.map((store) => store.close()));
  });

  it("delivers one gap-free sequence to a subscriber while other processes write", async () => {
    const schema = freshSchema();
    const store = await PostgresEventStore.open(database().url, { schema, pollIntervalMs: 100 });
    const seen: StoredEvent[] = [];
    const subscription = store.subscribe(0, (stored) => seen.push(stored));
    await subscription.caughtUp;

    const writing = runStoreWriters(
      ["p1", "p2", "p3"].map((label) => ({ backend: "postgres", url: database().url, schema, commits: 60, eventsPerCommit: 2, label })),
    );
    // This process writes too, meanwhile.
    for (let round = 0; round < 30; round += 1) await store.commit([accepted(newCommandId("local"), [event("thread:local")])]);
    await writing;

    const last = await store.lastSequence();
    expect(last).toBe(3 * 60 * 2 + 30);
    await waitFor(() => seen.length >= last, `the subscriber to reach sequence ${last}`);
    expect(sequencesOf(seen)).toEqual(range(1, last));
    expect(seen).toEqual(await store.readAll(0));
    // Each writer's own commands kept their order in the log.
    for (const label of ["p1", "p2", "p3"]) {
      const indexes = seen.filter((stored) => stored.streamId === `thread:${label}`).map((stored) => (stored.data as { index: number }).index);
      expect(indexes).toEqual(range(0, 59).flatMap((index) => [index, index]));
    }
    subscription.close();
    await store.close();
  });
});

describe("PostgreSQL outbox claims", () => {
  it("never leases one row to two claimers racing from several stores", async () => {
    const schema = freshSchema();
    const stores = await Promise.all(Array.from({ length: 3 }, () => PostgresEventStore.open(database().url, { schema })));
    await stores[0]!.commit([accepted(newCommandId(), [], range(1, 60).map((n) => effect(`kind-${n % 3}`, { n })))]);
    const now = (await stores[0]!.listOutbox("pending"))[0]!.availableAt;

    const claims = await Promise.all(
      range(0, 11).map((claimer) => stores[claimer % 3]!.claimOutbox({ owner: `claimer-${claimer}`, now, leaseMs: 60_000, limit: 7 })),
    );
    const ids = claims.flat().map((row) => row.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(60);
    for (const [claimer, rows] of claims.entries()) {
      expect(rows.every((row) => row.leaseOwner === `claimer-${claimer}` && row.attempts === 1)).toBe(true);
    }
    expect(await stores[1]!.listOutbox("pending")).toEqual([]);
    await Promise.all(stores.map((store) => store.close()));
  });

  it("skips a row another transaction has locked instead of waiting for it", async () => {
    const schema = freshSchema();
    const store = await PostgresEventStore.open(database().url, { schema });
    await store.commit([accepted(newCommandId(), [], [effect("a"), effect("b"), effect("c")])]);
    const pending = await store.listOutbox("pending");
    const locker = await connect(schema);
    await locker.query("BEGIN");
    await locker.query("SELECT id FROM outbox WHERE id = $1 FOR UPDATE", [pending[0]!.id]);

    const claimed = await store.claimOutbox({ owner: "w", now: pending[0]!.availableAt, leaseMs: 1_000, limit: 10 });
    expect(claimed.map((row) => row.id)).toEqual([pending[1]!.id, pending[2]!.id]);

    await locker.query("ROLLBACK");
    const rest = await store.claimOutbox({ owner: "w", now: pending[0]!.availableAt, leaseMs: 1_000, limit: 10 });
    expect(rest.map((row) => row.id)).toEqual([pending[0]!.id]);
    await locker.end();
    await store.close();
  });

  it("renews a lease only for its owner, so a heartbeat keeps a long effect from being claimed twice", async () => {
    const store = await PostgresEventStore.open(database().url, { schema: freshSchema() });
    await store.commit([accepted(newCommandId(), [], [effect("long")])]);
    const [row] = await store.listOutbox("pending");
    const t0 = row!.availableAt;
    await store.claimOutbox({ owner: "worker", now: t0, leaseMs: 100, limit: 1 });

    expect(await store.renewOutbox(row!.id, "worker", t0 + 90, 100)).toBe(true);
    expect(await store.claimOutbox({ owner: "other", now: t0 + 150, leaseMs: 100, limit: 1 })).toEqual([]);
    expect(await store.renewOutbox(row!.id, "other", t0 + 150, 100)).toBe(false);
    expect(await store.listOutbox("leased")).toEqual([expect.objectContaining({ id: row!.id, leaseOwner: "worker", leaseExpiresAt: t0 + 190 })]);

    expect(await store.claimOutbox({ owner: "other", now: t0 + 190, leaseMs: 100, limit: 1 })).toHaveLength(1);
    expect(await store.renewOutbox(row!.id, "worker", t0 + 195, 100)).toBe(false);
    await store.close();
  });

  it("claims through the partial index of unfinished rows", async () => {
    const schema = freshSchema();
    const store = await PostgresEventStore.open(database().url, { schema });
    await store.commit([accepted(newCommandId(), [], [effect("run.start")])]);
    await store.close();
    const client = await connect(schema);
    // The table is tiny, so forbid sequential scans: the question is whether the index is usable at all.
    await client.query("SET enable_seqscan = off");
    const plan = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${CLAIM_SQL}`, [1, null, 10, "w", 2, null]);
    await client.end();
    const text = plan.rows.map((row) => row["QUERY PLAN"]).join("\n");
    expect(text).toContain("outbox_open");
    expect(text).not.toMatch(/Seq Scan on outbox/);
  });
});
