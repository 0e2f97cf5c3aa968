import pg from "pg";
import type { Pool, PoolConfig } from "pg";
import type { CommandReceipt, OutboxRow, StoredEvent } from "../../contracts/envelopes.js";
import type { TurnItem } from "../../contracts/turnItems.js";
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
} from "../eventStore.js";
import { isoTime } from "../commitRecords.js";
import { StoreError, StoreErrorCode, isStoreClosed } from "../storeErrors.js";
import { timeOrderedUuid } from "../storeIds.js";
import { DEFAULT_REPLAY_PAGE_SIZE, SubscriptionHub, type SubscriptionOptions } from "../subscriptions.js";
import { runPostgresMigrations } from "./migrations.js";
import { commitInTransaction, decideInTransaction } from "./postgresCommit.js";
import { DEFAULT_POSTGRES_POLL_INTERVAL_MS, PostgresLogFeed } from "./postgresLogFeed.js";
import { storeNamespace, type StoreNamespace } from "./postgresLocks.js";
import { PostgresNotifications } from "./postgresNotifications.js";
import { PostgresOutbox } from "./postgresOutbox.js";
import { PostgresSnapshots } from "./postgresSnapshots.js";
import { ReceiptLoader } from "./receiptLoader.js";
import { EVENT_COLUMNS, type EventTuple, toStoredEvent } from "./postgresRows.js";

export interface PostgresEventStoreOptions extends SubscriptionOptions {
  /** Epoch milliseconds; stamps occurredAt, createdAt and availableAt. Default Date.now. */
  readonly clock?: () => number;
  /** Source of the uuid part of `event:<uuid>` and `outbox:<uuid>` ids. Default a time-ordered UUIDv7 (storeIds.ts). */
  readonly newId?: () => string;
  /** Most pooled connections (the LISTEN connection comes on top). Default 10. */
  readonly poolSize?: number;
  /**
   * While anyone subscribes, how often to read the log for commits of other
   * stores and processes, behind LISTEN/NOTIFY (or alone, with `listen: false`).
   * Default 1000 ms.
   */
  readonly pollIntervalMs?: number;
  /** Hear of other writers' commits at once through LISTEN/NOTIFY. Default true. */
  readonly listen?: boolean;
  /**
   * The schema holding the log's tables, created if missing. Each schema is
   * a separate log with its own lock and channel. A lower-case identifier;
   * default "public".
   */
  readonly schema?: string;
}


/**
 * bigint (int8) columns (sequences, epoch milliseconds) parse to numbers:
 * both stay far below 2^53. node-postgres would return strings.
 */
function storeTypes(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  types.setTypeParser(20, (value: string) => Number(value));
  return types;
}

/**
 * The EventStore on PostgreSQL (node-postgres pool). Several stores (Loom
 * processes) may share one database: commits serialize on a transaction-scoped
 * advisory lock, so the log stays gap-free and commit order is sequence
 * order, and every subscriber sees every writer's events (PostgresLogFeed).
 * See docs/postgres.md.
 */
export class PostgresEventStore implements EventStore {
  private readonly clock: () => number;
  private readonly newId: () => string;
  private readonly hub: SubscriptionHub;
  private readonly feed: PostgresLogFeed;
  private readonly outbox: PostgresOutbox;
  private readonly snapshots: PostgresSnapshots;
  private readonly receipts: ReceiptLoader;
  private closing: Promise<void> | null = null;
  /** The calls made and not yet answered: close waits for them before it ends the pool. */
  private readonly calls = new Set<Promise<unknown>>();

  /**
   * Connect (a connection string `postgres://user:password@host:port/database`
   * or a node-postgres pool config) and migrate. The database must exist.
   */
  static async open(connection: string | PoolConfig, options: PostgresEventStoreOptions = {}): Promise<PostgresEventStore> {
    const namespace = storeNamespace(options.schema);
    const config: PoolConfig = typeof connection === "string" ? { connectionString: connection } : { ...connection };
    config.types = storeTypes();
    const pool = new pg.Pool({
      ...config,
      max: options.poolSize ?? config.max ?? 10,
      // Every new connection resolves the store's unqualified table names in its schema
      // before it is handed out (a startup option could be overridden by the URL's own).
      verify: (client, done) => {
        client.query(`SET search_path TO ${namespace.schema}`).then(
          () => (config.verify === undefined ? done() : config.verify(client, done)),
          (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
        );
      },
    });
    // An idle pooled connection that drops emits "error"; unhandled, it would kill the process.
    let report: (error: unknown) => void = () => undefined;
    pool.on("error", (error) => report(error));
    try {
      await runPostgresMigrations(pool, namespace);
      const head = await pool.query<{ last: number }>("SELECT COALESCE(max(sequence), 0) AS last FROM events");
      const store = new PostgresEventStore(pool, config, namespace, head.rows[0]?.last ?? 0, options);
      report = (error) => store.hub.report(error);
      return store;
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  private constructor(
    private readonly pool: Pool,
    config: PoolConfig,
    private readonly namespace: StoreNamespace,
    head: number,
    options: PostgresEventStoreOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.newId = options.newId ?? (() => timeOrderedUuid(Date.now()));
    this.outbox = new PostgresOutbox(pool);
    this.snapshots = new PostgresSnapshots(pool);
    this.receipts = new ReceiptLoader(pool);
    this.hub = new SubscriptionHub((after, limit) => this.readAll(after, limit), options);
    const notifications =
      options.listen === false
        ? null
        : new PostgresNotifications(config, namespace.channel, {
            onNotify: (payload) => this.feed.notified(payload),
            onListening: () => this.feed.requestPull(),
            onError: (error) => this.hub.report(error),
          });
    this.feed = new PostgresLogFeed(
      this.hub,
      (after, limit) => this.readAll(after, limit),
      notifications,
      head,
      Math.max(1, Math.floor(options.replayPageSize ?? DEFAULT_REPLAY_PAGE_SIZE)),
      Math.max(1, options.pollIntervalMs ?? DEFAULT_POSTGRES_POLL_INTERVAL_MS),
    );
  }

  /** The store's pool (search_path set to its schema), for the node and credential tables beside the log. */
  get connectionPool(): Pool {
    return this.pool;
  }

  /** One transaction per batch (postgresCommit.ts); settles after live subscribers have the events. */
  commit(entries: readonly CommitEntry[]): Promise<readonly CommitResult[]> {
    return this.guarded(async () => {
      if (entries.length === 0) return [];
      const plan = await commitInTransaction(this.pool, this.namespace, entries, { now: this.clock(), newId: this.newId });
      await this.feed.afterCommit(plan.written);
      return plan.results;
    });
  }

  /** The advisory log lock serializes every node's decisions: each decides on the latest log. */
  commitDecided(commit: DecidedCommit): Promise<readonly CommitResult[]> {
    return this.guarded(async () => {
      const plan = await decideInTransaction(this.pool, this.namespace, commit, { now: this.clock(), newId: this.newId });
      if (plan.written.length > 0) await this.feed.afterCommit(plan.written);
      return plan.results;
    });
  }

  /** The highest sequence this store committed or heard of through NOTIFY (EventStore.knownHead); no round trip. */
  knownHead(): number {
    return this.feed.knownHead;
  }

  readAll(after: number, limit: number = DEFAULT_READ_LIMIT): Promise<readonly StoredEvent[]> {
    return this.guarded(async () => {
      const result = await this.pool.query<EventTuple>({
        name: "loom_read_all",
        text: `SELECT ${EVENT_COLUMNS} FROM events WHERE sequence > $1 ORDER BY sequence LIMIT $2`,
        values: [after, Math.max(0, Math.floor(limit))],
        rowMode: "array",
      });
      return result.rows.map(toStoredEvent);
    });
  }

  readStream(streamId: string, after = 0): Promise<readonly StoredEvent[]> {
    return this.guarded(async () => {
      const result = await this.pool.query<EventTuple>({
        name: "loom_read_stream",
        text: `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = $1 AND sequence > $2 ORDER BY sequence`,
        values: [streamId, after],
        rowMode: "array",
      });
      return result.rows.map(toStoredEvent);
    });
  }

  lastSequence(): Promise<number> {
    return this.guarded(async () => {
      const result = await this.pool.query<{ last: number }>({
        name: "loom_last_sequence",
        text: "SELECT COALESCE(max(sequence), 0) AS last FROM events",
      });
      return result.rows[0]?.last ?? 0;
    });
  }

  lookupReceipt(commandId: string): Promise<CommandReceipt | null> {
    return this.guarded(() => this.receipts.load(commandId));
  }

  claimOutbox(claim: OutboxClaim): Promise<readonly OutboxRow[]> {
    return this.guarded(() => this.outbox.claim(claim));
  }

  completeOutbox(id: string, owner: string): Promise<boolean> {
    return this.guarded(() => this.outbox.complete(id, owner));
  }

  /**
   * Extend the lease `owner` holds on a row to `now + leaseMs` (a heartbeat
   * for a long effect); false when `owner` does not hold it. Matches
   * EventStore.renewOutbox as the interface is growing it.
   */
  renewOutbox(id: string, owner: string, now: number, leaseMs: number): Promise<boolean> {
    return this.guarded(() => this.outbox.renew(id, owner, now, leaseMs));
  }

  failOutbox(id: string, owner: string, error: string, retryAt: number | null): Promise<boolean> {
    return this.guarded(() => this.outbox.fail(id, owner, error, retryAt));
  }

  abandonOutbox(id: string, error: string): Promise<boolean> {
    return this.guarded(() => this.outbox.abandon(id, error));
  }

  listOutbox(status: OutboxRow["status"]): Promise<readonly OutboxRow[]> {
    return this.guarded(() => this.outbox.list(status));
  }

  saveSnapshot(snapshot: StateSnapshot): Promise<boolean> {
    return this.guarded(() => this.snapshots.save(snapshot, isoTime(this.clock())));
  }

  loadSnapshot(version: string): Promise<StateSnapshot | null> {
    return this.guarded(() => this.snapshots.load(version));
  }

  readTurnItems(threadId: string): Promise<readonly TurnItem[]> {
    return this.guarded(async () => {
      const result = await this.pool.query<{ data: { item: TurnItem } }>({
        name: "loom_turn_items",
        text: "SELECT data FROM turn_items WHERE thread_id = $1 ORDER BY position",
        values: [threadId],
      });
      return result.rows.map((row) => row.data.item);
    });
  }

  /** Every read waits on the network: the engine keeps PostgreSQL logs' turn items in memory. */
  readonly turnItems = null;

  subscribe(after: number, listener: EventListener): Subscription {
    this.assertOpen();
    this.feed.beforeSubscribe();
    return this.hub.subscribe(after, listener);
  }

  /**
   * Ends every subscription, stops listening and closes the pool once the
   * calls already made have answered. They must answer first: a query still
   * waiting for a pool connection when the pool ends is never run nor
   * failed by pg-pool, so its caller would wait forever. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.hub.closeAll();
      await Promise.allSettled([...this.calls]);
      await this.feed.stop();
      await this.pool.end();
    })();
    return this.closing;
  }

  private assertOpen(): void {
    if (this.closing !== null) throw new StoreError(StoreErrorCode.closed, "the PostgreSQL event store is closed");
  }

  /**
   * A call on the pool: refused once close began, and a call that close cut
   * short (the pool ended under a query, a receipt lookup queued for the
   * next tick) fails with store_closed too, not with the driver's error, so
   * every caller can tell a shutdown from a fault.
   */
  private async guarded<T>(work: () => Promise<T>): Promise<T> {
    this.assertOpen();
    const call = work();
    this.calls.add(call);
    try {
      return await call;
    } catch (error) {
      if (this.closing === null || isStoreClosed(error)) throw error;
      throw new StoreError(StoreErrorCode.closed, "the PostgreSQL event store closed under this call", { cause: error });
    } finally {
      this.calls.delete(call);
    }
  }
}

