import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import type { Database, Statement } from "better-sqlite3";
import type { CommandReceipt, OutboxRow, StoredEvent } from "../../contracts/envelopes.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { acceptedReceipt, isoTime, rejectedReceipt, toJson } from "../commitRecords.js";
import {
  DEFAULT_READ_LIMIT,
  type CommitEntry,
  type CommitResult,
  type DecidedCommit,
  type EventListener,
  type EventStore,
  type OutboxClaim,
  type StateSnapshot,
  type Subscription,
  type TurnItemReader,
} from "../eventStore.js";
import { settle, StoreError, StoreErrorCode } from "../storeErrors.js";
import { timeOrderedUuid } from "../storeIds.js";
import { DEFAULT_REPLAY_PAGE_SIZE, SubscriptionHub, type SubscriptionOptions } from "../subscriptions.js";
import { runMigrations } from "./migrations.js";
import { DEFAULT_SQLITE_POLL_INTERVAL_MS, SqliteLogFeed } from "./sqliteLogFeed.js";
import { SqliteOutbox } from "./sqliteOutbox.js";
import { SqliteSnapshots } from "./sqliteSnapshots.js";
import { SqliteTurnItems } from "./sqliteTurnItems.js";
import { AUTOCHECKPOINT_PAGES, DEFAULT_CHECKPOINT_EVERY_COMMITS, WalCheckpointer } from "./walCheckpointer.js";
import { TURN_ITEM_EVENT } from "../turnItemRows.js";

export interface SqliteEventStoreOptions extends SubscriptionOptions {
  /** Epoch milliseconds; stamps occurredAt, createdAt and availableAt. Default Date.now. */
  readonly clock?: () => number;
  /**
   * Source of the uuid part of `event:<uuid>` and `outbox:<uuid>` ids. Default
   * a time-ordered UUIDv7 (storeIds.ts), which keeps SQLite's id indexes append-only.
   */
  readonly newId?: () => string;
  /** How long a statement waits for another connection's lock before failing. Default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /**
   * While anyone subscribes, how often to check (PRAGMA data_version) for
   * commits made by other connections to the file, such as another process.
   * Default 50 ms. This store's own commits are delivered as they return.
   */
  readonly pollIntervalMs?: number;
  /**
   * WAL checkpoints on a worker thread every `everyCommits` commits
   * (walCheckpointer.ts), so no commit stalls on one. Default on for a file,
   * every DEFAULT_CHECKPOINT_EVERY_COMMITS; `false` leaves them to SQLite,
   * inside the commit that crosses AUTOCHECKPOINT_PAGES of WAL.
   */
  readonly backgroundCheckpoints?: false | { readonly everyCommits: number };
  /** Where the store reports what it changed on its own (the background checkpoints stopping). */
  readonly log?: (line: string) => void;
}

/** The per-connection settings `open` applied, read back from SQLite. */
export interface SqliteConnectionSettings {
  readonly journalMode: string;
  /** 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA. */
  readonly synchronous: number;
  readonly foreignKeys: boolean;
  readonly busyTimeoutMs: number;
  /** SQLite's own checkpoint threshold on this connection: 0 while a background checkpointer runs. */
  readonly walAutocheckpointPages: number;
}

/** An events row in raw (array) mode, the cheapest shape better-sqlite3 returns. */
type EventTuple = [
  sequence: number,
  eventId: string,
  commandId: string,
  streamId: string,
  type: string,
  data: string,
  occurredAt: string,
];

const EVENT_COLUMNS = "sequence, event_id, command_id, stream_id, type, data, occurred_at";

/**
 * The EventStore on one better-sqlite3 connection. Every method runs
 * synchronously under its promise; commit is one IMMEDIATE transaction per
 * batch, so several connections (other stores on the file, other processes)
 * may write and each batch still gets the next sequences. Subscribers see
 * every writer's events (SqliteLogFeed).
 */
export class SqliteEventStore implements EventStore {
  private readonly clock: () => number;
  private readonly newId: () => string;
  private readonly hub: SubscriptionHub;
  private readonly feed: SqliteLogFeed;
  private readonly outbox: SqliteOutbox;
  private readonly snapshots: SqliteSnapshots;
  private readonly selectLastSequence: Statement<[], number>;
  private readonly insertEvent: Statement<[string, string, string, string, string, string]>;
  private readonly insertReceipt: Statement<[string, string, string]>;
  private readonly selectReceipt: Statement<[string], string>;
  private readonly insertOutbox: Statement<[string, string, string, string, string, number, number, string]>;
  private readonly selectAfter: Statement<[number, number], EventTuple>;
  private readonly selectAfterBesideItems: Statement<[number, number], EventTuple>;
  private readonly selectStream: Statement<[string, number], EventTuple>;
  private readonly items: SqliteTurnItems;
  private readonly commitBatch: (entries: readonly CommitEntry[]) => { results: CommitResult[]; written: StoredEvent[] };
  private readonly commitDecidedBatch: (commit: DecidedCommit) => { results: CommitResult[]; written: StoredEvent[] };
  private closed = false;

  /**
   * Open (creating the file and its parent directories) and migrate a store.
   * Synchronous: better-sqlite3 is. Pass ":memory:" for a throwaway database.
   */
  static open(filePath: string, options: SqliteEventStoreOptions = {}): SqliteEventStore {
    if (filePath !== ":memory:" && filePath !== "") mkdirSync(dirname(filePath), { recursive: true });
    const db = new BetterSqlite3(filePath);
    try {
      db.pragma("journal_mode = WAL");
      // WAL + NORMAL: a crash of the process loses nothing committed; a power
      // loss may drop the last transactions but never corrupts the log.
      db.pragma("synchronous = NORMAL");
      db.pragma("foreign_keys = ON");
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
      // Checkpoints are where WAL + NORMAL pays for fsync; checkpointing every
      // ~40 MB of WAL instead of every 4 MB cuts their number tenfold and lets
      // one checkpoint write a hot index page once instead of many times.
      // Only until the background checkpointer runs (walCheckpointer.ts).
      db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
      // 64 MB of page cache keeps the randomly-keyed receipt index resident.
      db.pragma("cache_size = -65536");
      runMigrations(db);
      const background = options.backgroundCheckpoints ?? { everyCommits: DEFAULT_CHECKPOINT_EVERY_COMMITS };
      const inMemory = filePath === ":memory:" || filePath === "" || db.memory;
      const checkpointer = background === false || inMemory ? null : new WalCheckpointer(db, db.name, Math.max(1, Math.floor(background.everyCommits)), options.log);
      return new SqliteEventStore(db, options, checkpointer);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private constructor(
    private readonly db: Database,
    options: SqliteEventStoreOptions,
    /** Null for a database in memory or with background checkpoints off. */
    readonly checkpointer: WalCheckpointer | null = null,
  ) {
    this.clock = options.clock ?? Date.now;
    this.newId = options.newId ?? (() => timeOrderedUuid(Date.now()));
    this.outbox = new SqliteOutbox(db);
    this.snapshots = new SqliteSnapshots(
      db,
      () => this.assertOpen(),
      () => this.checkpointer?.noteLargeWrite(),
    );
    this.items = new SqliteTurnItems(db);
    this.selectLastSequence = db.prepare<[], number>("SELECT COALESCE(MAX(sequence), 0) FROM events").pluck();
    this.insertEvent = db.prepare(
      "INSERT INTO events (event_id, command_id, stream_id, type, data, occurred_at) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.insertReceipt = db.prepare(
      "INSERT INTO receipts (command_id, status, body) VALUES (?, ?, ?) ON CONFLICT (command_id) DO NOTHING",
    );
    this.selectReceipt = db.prepare<[string], string>("SELECT body FROM receipts WHERE command_id = ?").pluck();
    this.insertOutbox = db.prepare(`
      INSERT INTO outbox (id, command_id, stream_id, kind, payload, replay_safe, status, attempts, available_at, created_at)
      VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)`);
    this.selectAfter = db
      .prepare<[number, number], EventTuple>(`SELECT ${EVENT_COLUMNS} FROM events WHERE sequence > ? ORDER BY sequence LIMIT ?`)
      .raw();
    // Turn item events come back as their sequence alone (data null), so a page still counts them.
    this.selectAfterBesideItems = db
      .prepare<[number, number], EventTuple>(
        `SELECT sequence, event_id, command_id, stream_id, type, CASE WHEN type = '${TURN_ITEM_EVENT}' THEN NULL ELSE data END, occurred_at
         FROM events WHERE sequence > ? ORDER BY sequence LIMIT ?`,
      )
      .raw();
    this.selectStream = db
      .prepare<[string, number], EventTuple>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = ? AND sequence > ? ORDER BY sequence`,
      )
      .raw();
    const transaction = db.transaction((entries: readonly CommitEntry[]) => this.writeBatch(entries));
    // IMMEDIATE takes the write lock up front, so the sequence read at the
    // start of the batch cannot be overtaken by another connection.
    this.commitBatch = (entries) => transaction.immediate(entries);
    const decided = db.transaction((commit: DecidedCommit) => {
      const head = this.selectLastSequence.get() ?? 0;
      const foreign: StoredEvent[] = [];
      while (commit.after + foreign.length < head) foreign.push(...this.readAllNow(commit.after + foreign.length, head - commit.after - foreign.length));
      const known = new Map<string, CommandReceipt>();
      for (const commandId of commit.commandIds) {
        const stored = this.selectReceipt.get(commandId);
        if (stored !== undefined) known.set(commandId, JSON.parse(stored) as CommandReceipt);
      }
      const entries = commit.decide({ foreign, known, head });
      // The decision only read: under the write lock the head is still `head`.
      return entries.length === 0 ? { results: [], written: [] } : this.writeBatch(entries, head);
    });
    this.commitDecidedBatch = (commit) => decided.immediate(commit);
    this.hub = new SubscriptionHub((after, limit) => this.readAllNow(after, limit), options);
    const dataVersion = db.prepare<[], number>("PRAGMA data_version").pluck();
    this.feed = new SqliteLogFeed(
      this.hub,
      {
        read: (after, limit) => this.readAllNow(after, limit),
        head: () => this.selectLastSequence.get() ?? 0,
        dataVersion: () => dataVersion.get() ?? 0,
      },
      Math.max(1, Math.floor(options.replayPageSize ?? DEFAULT_REPLAY_PAGE_SIZE)),
      Math.max(1, options.pollIntervalMs ?? DEFAULT_SQLITE_POLL_INTERVAL_MS),
    );
  }

  /**
   * One transaction for the whole batch (group commit). Published to live
   * subscribers right after the transaction returns, before the promise
   * settles, after any events other connections committed before it.
   */
  commit(entries: readonly CommitEntry[]): Promise<readonly CommitResult[]> {
    return settle(() => {
      this.assertOpen();
      if (entries.length === 0) return [];
      const { results, written } = this.commitBatch(entries);
      this.feed.afterCommit(written);
      this.checkpointer?.noteCommit();
      return results;
    });
  }

  /** BEGIN IMMEDIATE is the write lock across connections and processes; the decision runs inside it. */
  commitDecided(commit: DecidedCommit): Promise<readonly CommitResult[]> {
    return settle(() => {
      this.assertOpen();
      const { results, written } = this.commitDecidedBatch(commit);
      if (written.length > 0) {
        this.feed.afterCommit(written);
        this.checkpointer?.noteCommit();
      }
      return results;
    });
  }

  readAll(after: number, limit: number = DEFAULT_READ_LIMIT): Promise<readonly StoredEvent[]> {
    return settle(() => this.readAllNow(after, limit));
  }

  readStream(streamId: string, after = 0): Promise<readonly StoredEvent[]> {
    return settle(() => {
      this.assertOpen();
      return this.selectStream.all(streamId, after).map(toStoredEvent);
    });
  }

  lastSequence(): Promise<number> {
    return settle(() => {
      this.assertOpen();
      return this.selectLastSequence.get() ?? 0;
    });
  }

  lookupReceipt(commandId: string): Promise<CommandReceipt | null> {
    return settle(() => {
      this.assertOpen();
      const body = this.selectReceipt.get(commandId);
      return body === undefined ? null : (JSON.parse(body) as CommandReceipt);
    });
  }

  claimOutbox(claim: OutboxClaim): Promise<readonly OutboxRow[]> {
    return settle(() => {
      this.assertOpen();
      return this.outbox.claim(claim);
    });
  }

  completeOutbox(id: string, owner: string): Promise<boolean> {
    return settle(() => {
      this.assertOpen();
      return this.outbox.complete(id, owner);
    });
  }

  renewOutbox(id: string, owner: string, now: number, leaseMs: number): Promise<boolean> {
    return settle(() => {
      this.assertOpen();
      return this.outbox.renew(id, owner, now, leaseMs);
    });
  }

  abandonOutbox(id: string, error: string): Promise<boolean> {
    return settle(() => {
      this.assertOpen();
      return this.outbox.abandon(id, error);
    });
  }

  failOutbox(id: string, owner: string, error: string, retryAt: number | null): Promise<boolean> {
    return settle(() => {
      this.assertOpen();
      return this.outbox.fail(id, owner, error, retryAt);
    });
  }

  listOutbox(status: OutboxRow["status"]): Promise<readonly OutboxRow[]> {
    return settle(() => {
      this.assertOpen();
      return this.outbox.list(status);
    });
  }

  /** A large body goes a chunk per turn of the event loop (sqliteSnapshots.ts), so saving never stops the server for long. */
  async saveSnapshot(snapshot: StateSnapshot): Promise<boolean> {
    this.assertOpen();
    return this.snapshots.save(snapshot, isoTime(this.clock()));
  }

  loadSnapshot(version: string): Promise<StateSnapshot | null> {
    return settle(() => {
      this.assertOpen();
      return this.snapshots.load(version);
    });
  }

  readTurnItems(threadId: string): Promise<readonly TurnItem[]> {
    return settle(() => this.turnItems.threadItems(threadId).filter((item) => item !== undefined));
  }

  /** Synchronous on this connection: inside a decision (commitDecided) it reads the log as of that decision. */
  readonly turnItems: TurnItemReader = {
    threadItems: (threadId) => {
      this.assertOpen();
      return this.items.threadItems(threadId);
    },
    threadOfItem: (itemId) => {
      this.assertOpen();
      return this.items.threadOfItem(itemId);
    },
    readBesideItems: (after, limit) => {
      this.assertOpen();
      const rows = this.selectAfterBesideItems.all(after, Math.max(0, Math.floor(limit)));
      const events: StoredEvent[] = [];
      for (const row of rows) if (row[4] !== TURN_ITEM_EVENT) events.push(toStoredEvent(row));
      return { events, through: rows.length === 0 ? after : rows[rows.length - 1]![0], covered: rows.length };
    },
  };

  subscribe(after: number, listener: EventListener): Subscription {
    this.assertOpen();
    this.feed.beforeSubscribe();
    return this.hub.subscribe(after, listener);
  }

  /** What SQLite reports for the settings `open` applies (for diagnostics and tests). */
  connectionSettings(): SqliteConnectionSettings {
    this.assertOpen();
    return {
      journalMode: String(this.db.pragma("journal_mode", { simple: true })),
      synchronous: Number(this.db.pragma("synchronous", { simple: true })),
      foreignKeys: Number(this.db.pragma("foreign_keys", { simple: true })) === 1,
      busyTimeoutMs: Number(this.db.pragma("busy_timeout", { simple: true })),
      walAutocheckpointPages: Number(this.db.pragma("wal_autocheckpoint", { simple: true })),
    };
  }

  /** Ends every subscription, closes the database and stops the checkpoint worker (the last connection checkpoints the WAL). Idempotent. */
  async close(): Promise<void> {
    await settle(() => {
      if (this.closed) return;
      this.closed = true;
      this.feed.stop();
      this.hub.closeAll();
      this.db.close();
    });
    await this.checkpointer?.close();
  }

  /**
   * The body of the commit transaction. Each receipt is inserted first, with
   * ON CONFLICT DO NOTHING: zero changes means the commandId already has a
   * receipt (stored, or earlier in this batch), so the entry is a duplicate
   * and only then is the stored receipt read back. An accepted receipt needs
   * its last event's sequence before the events exist; under the write lock
   * the next sequences are exactly last + 1, last + 2, ..., and each insert
   * checks that SQLite agreed (a mismatch aborts the batch). `head`: the
   * last sequence, when the transaction already read it.
   */
  private writeBatch(entries: readonly CommitEntry[], head?: number): { results: CommitResult[]; written: StoredEvent[] } {
    const now = this.clock();
    const occurredAt = isoTime(now);
    let last = head ?? this.selectLastSequence.get() ?? 0;
    const results: CommitResult[] = [];
    const written: StoredEvent[] = [];

    for (const { receipt: draft, events, outbox } of entries) {
      const receipt =
        draft.status === "rejected" ? rejectedReceipt(draft) : acceptedReceipt(draft, last + events.length, events.length);
      if (this.insertReceipt.run(draft.commandId, receipt.status, JSON.stringify(receipt)).changes === 0) {
        results.push({ receipt: this.storedReceipt(draft.commandId), events: [], duplicate: true });
        continue;
      }
      if (receipt.status === "rejected") {
        results.push({ receipt, events: [], duplicate: false });
        continue;
      }
      const stored: StoredEvent[] = [];
      for (const event of events) {
        const json = toJson(event.data, `data of event ${event.type}`);
        const eventId = `event:${this.newId()}`;
        const info = this.insertEvent.run(eventId, draft.commandId, event.streamId, event.type, json, occurredAt);
        last += 1;
        if (info.lastInsertRowid !== last) {
          throw new StoreError(
            StoreErrorCode.sequenceMismatch,
            `expected sequence ${last}, SQLite assigned ${String(info.lastInsertRowid)}`,
          );
        }
        const storedEvent: StoredEvent = {
          sequence: last,
          eventId,
          commandId: draft.commandId,
          streamId: event.streamId,
          type: event.type,
          // Parsed back so callers and live subscribers see what a replay will.
          data: JSON.parse(json) as unknown,
          occurredAt,
        };
        stored.push(storedEvent);
        written.push(storedEvent);
        this.items.keep(event.type, storedEvent.data, json);
      }
      for (const effect of outbox) {
        const payload = toJson(effect.payload, `payload of outbox effect ${effect.kind}`);
        const id = `outbox:${this.newId()}`;
        const replaySafe = effect.replaySafe ? 1 : 0;
        this.insertOutbox.run(id, draft.commandId, effect.streamId, effect.kind, payload, replaySafe, now, occurredAt);
      }
      results.push({ receipt, events: stored, duplicate: false });
    }
    return { results, written };
  }

  private storedReceipt(commandId: string): CommandReceipt {
    const body = this.selectReceipt.get(commandId);
    if (body === undefined) throw new Error(`receipt ${commandId} conflicted but cannot be read`);
    return JSON.parse(body) as CommandReceipt;
  }

  /**
   * `.all()` rather than `.iterate()`: the statement is finished before any
   * listener runs, so a listener may commit on this same connection (an open
   * iterator would make the connection busy), and raw-mode pages measured
   * faster than iterating for a 1M-event fold.
   */
  private readAllNow(after: number, limit: number): StoredEvent[] {
    this.assertOpen();
    const rows = this.selectAfter.all(after, Math.max(0, Math.floor(limit)));
    const events = new Array<StoredEvent>(rows.length);
    for (let index = 0; index < rows.length; index += 1) events[index] = toStoredEvent(rows[index] as EventTuple);
    return events;
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError(StoreErrorCode.closed, "the SQLite event store is closed");
  }
}

function toStoredEvent(row: EventTuple): StoredEvent {
  return {
    sequence: row[0],
    eventId: row[1],
    commandId: row[2],
    streamId: row[3],
    type: row[4],
    data: JSON.parse(row[5]) as unknown,
    occurredAt: row[6],
  };
}
