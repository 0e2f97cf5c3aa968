import type { Pool } from "pg";
import type { CommandReceipt, StoredEvent } from "../../contracts/envelopes.js";
import { acceptedReceipt, isoTime, rejectedReceipt, toJson } from "../commitRecords.js";
import { turnItemKey } from "../turnItemRows.js";
import type { CommitEntry, CommitResult, LockedView } from "../eventStore.js";
import { transactionLockSql, type StoreNamespace } from "./postgresLocks.js";
import { EVENT_COLUMNS, type EventTuple, toStoredEvent } from "./postgresRows.js";

/** The clock reading and id source one commit stamps its rows with. */
export interface CommitStamp {
  /** Epoch milliseconds. */
  readonly now: number;
  readonly newId: () => string;
}

/** Everything one batch writes, as column arrays for one `unnest` insert per table. */
export interface CommitPlan {
  readonly results: CommitResult[];
  /** The new events, ascending and contiguous. */
  readonly written: StoredEvent[];
  /** Parameters of WRITE_SQL, in order, all but the last (the channel). */
  readonly parameters: unknown[];
}

/**
 * The head of the log and the receipts the batch's commandIds already have.
 * Run after the log lock is taken, as its own statement: in READ COMMITTED
 * each statement takes its snapshot when it starts, so only a statement that
 * starts after the lock is granted sees the commit that released it.
 */
const HEAD_SQL = `
  SELECT (SELECT COALESCE(max(sequence), 0) FROM events) AS last,
         (SELECT COALESCE(json_agg(body), '[]') FROM receipts WHERE command_id = ANY($1::text[])) AS known`;

/**
 * One statement writes receipts, events and outbox rows, and queues the
 * notification that PostgreSQL delivers to listeners when the transaction
 * commits (none when the batch wrote no events).
 */
const WRITE_SQL = `
  WITH receipts_written AS (
    INSERT INTO receipts (command_id, status, body)
    SELECT * FROM unnest($1::text[], $2::text[], $3::json[])
  ), events_written AS (
    INSERT INTO events (sequence, event_id, command_id, stream_id, type, data, occurred_at)
    SELECT e.sequence, e.event_id, e.command_id, e.stream_id, e.type, e.data, $10
    FROM unnest($4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::json[])
      AS e (sequence, event_id, command_id, stream_id, type, data)
  ), outbox_written AS (
    INSERT INTO outbox (id, command_id, stream_id, kind, payload, replay_safe, status, attempts, available_at, created_at)
    SELECT o.id, o.command_id, o.stream_id, o.kind, o.payload, o.replay_safe, 'pending', 0, $17, $10
    FROM unnest($11::text[], $12::text[], $13::text[], $14::text[], $15::json[], $16::boolean[]) WITH ORDINALITY
      AS o (id, command_id, stream_id, kind, payload, replay_safe, n)
    ORDER BY o.n
  ), items_written AS (
    INSERT INTO turn_items (thread_id, position, item_id, data)
    SELECT * FROM unnest($19::text[], $20::integer[], $21::text[], $22::json[])
    ON CONFLICT (thread_id, position) DO UPDATE SET item_id = excluded.item_id, data = excluded.data
  )
  SELECT pg_notify($23, $18::text) WHERE $18::text IS NOT NULL`;

/**
 * Commit a batch in one transaction: BEGIN and the transaction-scoped log
 * lock, read the head and known receipts, write everything, COMMIT. The lock
 * serializes every writer of the database, so the next sequences are exactly
 * head + 1, head + 2, ... and a commit is visible before the next writer reads
 * the head: commit order is sequence order for anyone tailing the log. The
 * primary key on `events.sequence` would reject a writer that skipped the lock.
 */
export function commitInTransaction(pool: Pool, namespace: StoreNamespace, entries: readonly CommitEntry[], stamp: CommitStamp): Promise<CommitPlan> {
  return decideInTransaction(pool, namespace, { after: null, commandIds: entries.map((entry) => entry.receipt.commandId), decide: () => entries }, stamp);
}

/**
 * HEAD_SQL plus the events after `$2` (other writers' commits since the
 * caller's state), in the same statement and snapshot: one round trip less
 * while the log lock is held.
 */
const HEAD_AND_FOREIGN_SQL = `${HEAD_SQL},
         (SELECT COALESCE(json_agg(json_build_array(${EVENT_COLUMNS}) ORDER BY sequence), '[]') FROM events WHERE sequence > $2) AS foreign`;

/**
 * Like commitInTransaction, but the entries are decided under the log lock:
 * `decide` sees the events other writers committed after `after` and the
 * stored receipts of `commandIds` (EventStore.commitDecided). With `after`
 * null no events are read and `decide` gets none.
 */
export async function decideInTransaction(
  pool: Pool,
  namespace: StoreNamespace,
  commit: { readonly after: number | null; readonly commandIds: readonly string[]; readonly decide: (view: LockedView) => readonly CommitEntry[] },
  stamp: CommitStamp,
): Promise<CommitPlan> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(`BEGIN; ${transactionLockSql(namespace.logLock)}`);
    try {
      const head = await client.query<{ last: number; known: CommandReceipt[]; foreign?: EventTuple[] }>(
        commit.after === null
          ? { name: "loom_commit_head", text: HEAD_SQL, values: [[...commit.commandIds]] }
          : { name: "loom_commit_head_foreign", text: HEAD_AND_FOREIGN_SQL, values: [[...commit.commandIds], commit.after] },
      );
      const { last, known, foreign: tuples } = head.rows[0] as { last: number; known: CommandReceipt[]; foreign?: EventTuple[] };
      const receipts = new Map(known.map((receipt) => [receipt.commandId, receipt]));
      const foreign: StoredEvent[] = (tuples ?? []).map(toStoredEvent);
      const entries = commit.decide({ foreign, known: receipts, head: Number(last) });
      if (entries.length === 0) {
        await client.query("COMMIT");
        return { results: [], written: [], parameters: [] };
      }
      const plan = planCommit(entries, last, receipts, stamp);
      await client.query({ name: "loom_commit_write", text: WRITE_SQL, values: [...plan.parameters, namespace.channel] });
      await client.query("COMMIT");
      return plan;
    } catch (error) {
      // A connection that cannot even roll back is dropped instead of reused.
      await client.query("ROLLBACK").catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    }
  } finally {
    client.release(broken);
  }
}

/**
 * Decide what a batch writes, given the head of the log and the stored
 * receipts of its commandIds. Pure, and it throws (aborting the transaction)
 * before anything is written when data has no JSON form. An entry whose
 * commandId has a receipt, stored or earlier in the batch, writes nothing.
 */
export function planCommit(
  entries: readonly CommitEntry[],
  head: number,
  known: ReadonlyMap<string, CommandReceipt>,
  stamp: CommitStamp,
): CommitPlan {
  const occurredAt = isoTime(stamp.now);
  const receipts = { commandId: [] as string[], status: [] as string[], body: [] as string[] };
  const events = { sequence: [] as number[], eventId: [] as string[], commandId: [] as string[], streamId: [] as string[], type: [] as string[], data: [] as string[] };
  const outbox = { id: [] as string[], commandId: [] as string[], streamId: [] as string[], kind: [] as string[], payload: [] as string[], replaySafe: [] as boolean[] };
  // One row per thread and position: an upsert may not touch a row twice, so the batch's last version wins.
  const items = new Map<string, { threadId: string; position: number; itemId: string; data: string }>();
  const inBatch = new Map<string, CommandReceipt>();
  const results: CommitResult[] = [];
  const written: StoredEvent[] = [];
  let last = head;

  for (const { receipt: draft, events: newEvents, outbox: effects } of entries) {
    const prior = inBatch.get(draft.commandId) ?? known.get(draft.commandId);
    if (prior !== undefined) {
      results.push({ receipt: prior, events: [], duplicate: true });
      continue;
    }
    let receipt: CommandReceipt;
    const stored: StoredEvent[] = [];
    if (draft.status === "rejected") {
      receipt = rejectedReceipt(draft);
    } else {
      for (const event of newEvents) {
        const json = toJson(event.data, `data of event ${event.type}`);
        last += 1;
        const storedEvent: StoredEvent = {
          sequence: last,
          eventId: `event:${stamp.newId()}`,
          commandId: draft.commandId,
          streamId: event.streamId,
          type: event.type,
          // Parsed back so callers and live subscribers see what a replay will.
          data: JSON.parse(json) as unknown,
          occurredAt,
        };
        events.sequence.push(last);
        events.eventId.push(storedEvent.eventId);
        events.commandId.push(draft.commandId);
        events.streamId.push(event.streamId);
        events.type.push(event.type);
        events.data.push(json);
        stored.push(storedEvent);
        const key = turnItemKey(event.type, storedEvent.data);
        if (key !== null) {
          const at = `${key.position} ${key.threadId}`;
          items.delete(at);
          items.set(at, { ...key, data: json });
        }
      }
      for (const effect of effects) {
        outbox.payload.push(toJson(effect.payload, `payload of outbox effect ${effect.kind}`));
        outbox.id.push(`outbox:${stamp.newId()}`);
        outbox.commandId.push(draft.commandId);
        outbox.streamId.push(effect.streamId);
        outbox.kind.push(effect.kind);
        outbox.replaySafe.push(effect.replaySafe);
      }
      receipt = acceptedReceipt(draft, last, stored.length);
    }
    inBatch.set(draft.commandId, receipt);
    receipts.commandId.push(draft.commandId);
    receipts.status.push(receipt.status);
    receipts.body.push(JSON.stringify(receipt));
    for (const storedEvent of stored) written.push(storedEvent);
    results.push({ receipt, events: stored, duplicate: false });
  }

  const parameters: unknown[] = [
    receipts.commandId, receipts.status, receipts.body,
    events.sequence, events.eventId, events.commandId, events.streamId, events.type, events.data,
    occurredAt,
    outbox.id, outbox.commandId, outbox.streamId, outbox.kind, outbox.payload, outbox.replaySafe,
    stamp.now,
    written.length > 0 ? String(last) : null,
    [...items.values()].map((row) => row.threadId),
    [...items.values()].map((row) => row.position),
    [...items.values()].map((row) => row.itemId),
    [...items.values()].map((row) => row.data),
  ];
  return { results, written, parameters };
}
