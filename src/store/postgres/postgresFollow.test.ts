import pg from "pg";
import { describe, expect, it } from "vitest";
import { usePostgresDatabase } from "../../testkit/postgresTestCluster.js";
import { accepted, event, newCommandId, waitFor } from "../testSuiteFixtures.js";
import { PostgresEventStore } from "./postgresEventStore.js";
import { storeNamespace } from "./postgresLocks.js";

const database = usePostgresDatabase();
let logs = 0;

function freshSchema(): string {
  logs += 1;
  return `follow_${logs}`;
}

/** Far longer than any test: a subscriber that sees another store's commit did not get it from a poll. */
const NEVER_MS = 3_600_000;

/** The LISTEN connection of `schema`'s channel (other than `except`), once it is listening. */
async function listenerPid(admin: pg.Client, schema: string, except = 0): Promise<number> {
  const { channel } = storeNamespace(schema);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const result = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = $1 AND pid <> $2",
      [`LISTEN ${pg.escapeIdentifier(channel)}`, except],
    );
    if (result.rows[0] !== undefined) return result.rows[0].pid;
  }
  throw new Error(`no connection is listening on ${channel}`);
}

describe("following other writers on PostgreSQL", () => {
  it("hears of another store's commits through LISTEN/NOTIFY, with polling out of the way", async () => {
    const schema = freshSchema();
    const writer = await PostgresEventStore.open(database().url, { schema });
    const follower = await PostgresEventStore.open(database().url, { schema, pollIntervalMs: NEVER_MS });
    const seen: number[] = [];
    const subscription = follower.subscribe(0, (stored) => seen.push(stored.sequence));
    await subscription.caughtUp;
    const admin = new pg.Client(database().url);
    await admin.connect();
    await listenerPid(admin, schema);

    for (let round = 1; round <= 5; round += 1) {
      await writer.commit([accepted(newCommandId(), [event("thread:1"), event("thread:2")])]);
      await waitFor(() => seen.length === round * 2, `a notification for commit ${round}`);
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    subscription.close();
    await admin.end();
    await Promise.all([writer.close(), follower.close()]);
  });

  it("falls back to polling the log when notifications are off", async () => {
    const schema = freshSchema();
    const writer = await PostgresEventStore.open(database().url, { schema });
    const follower = await PostgresEventStore.open(database().url, { schema, listen: false, pollIntervalMs: 20 });
    const seen: number[] = [];
    const subscription = follower.subscribe(0, (stored) => seen.push(stored.sequence));
    await subscription.caughtUp;

    await writer.commit([accepted(newCommandId(), [event("thread:1"), event("thread:1"), event("thread:1")])]);
    await waitFor(() => seen.length === 3, "a poll to find the commit");
    await writer.commit([accepted(newCommandId(), [event("thread:1")])]);
    await waitFor(() => seen.length === 4, "a poll to find the second commit");
    expect(seen).toEqual([1, 2, 3, 4]);
    subscription.close();
    await Promise.all([writer.close(), follower.close()]);
  });

  it("reconnects a lost LISTEN connection, reports the loss and reads what it missed", async () => {
    const schema = freshSchema();
    const reported: unknown[] = [];
    const writer = await PostgresEventStore.open(database().url, { schema });
    const follower = await PostgresEventStore.open(database().url, {
      schema,
      pollIntervalMs: NEVER_MS,
      onListenerError: (error) => reported.push(error),
    });
    const seen: number[] = [];
    const subscription = follower.subscribe(0, (stored) => seen.push(stored.sequence));
    await subscription.caughtUp;
    const admin = new pg.Client(database().url);
    await admin.connect();

    const first = await listenerPid(admin, schema);
    await admin.query("SELECT pg_terminate_backend($1)", [first]);
    // Committed while nobody listens: only the read after reconnecting can deliver it.
    await writer.commit([accepted(newCommandId(), [event("thread:1"), event("thread:1")])]);
    await waitFor(() => seen.length === 2, "the follower to reconnect and read the missed commit");
    // A new connection listens in place of the terminated one.
    await expect(listenerPid(admin, schema, first)).resolves.toEqual(expect.any(Number));
    expect(reported.length).toBeGreaterThan(0);

    await writer.commit([accepted(newCommandId(), [event("thread:1")])]);
    await waitFor(() => seen.length === 3, "a notification on the new connection");
    expect(seen).toEqual([1, 2, 3]);
    subscription.close();
    await admin.end();
    await Promise.all([writer.close(), follower.close()]);
  });

  it("keeps following after every subscriber left and a new one came", async () => {
    const schema = freshSchema();
    const writer = await PostgresEventStore.open(database().url, { schema });
    const follower = await PostgresEventStore.open(database().url, { schema, pollIntervalMs: 50 });
    const first: number[] = [];
    const early = follower.subscribe(0, (stored) => first.push(stored.sequence));
    await early.caughtUp;
    await writer.commit([accepted(newCommandId(), [event("thread:1")])]);
    await waitFor(() => first.length === 1, "the first subscriber to see sequence 1");
    early.close();

    // Commits while nobody subscribes on the follower.
    await writer.commit([accepted(newCommandId(), [event("thread:1"), event("thread:1")])]);
    const later: number[] = [];
    const late = follower.subscribe(1, (stored) => later.push(stored.sequence));
    await late.caughtUp;
    await writer.commit([accepted(newCommandId(), [event("thread:1")])]);
    await waitFor(() => later.length === 3, "the second subscriber to reach sequence 4");
    expect(later).toEqual([2, 3, 4]);
    expect(first).toEqual([1]);
    late.close();
    await Promise.all([writer.close(), follower.close()]);
  });
});
