import type { CommandReceipt, NewEvent, NewOutboxEffect, OutboxRow, StoredEvent } from "../contracts/envelopes.js";
import type { TurnItem } from "../contracts/turnItems.js";

/**
 * Page size of `readAll` when the caller gives no limit. `readAll` is a paged
 * read: to read everything, loop until a page comes back shorter than asked.
 */
export const DEFAULT_READ_LIMIT = 10_000;

/** Everything one command writes, committed in one transaction or not at all. */
export interface CommitEntry {
  readonly receipt: CommandReceiptDraft;
  readonly events: readonly NewEvent[];
  readonly outbox: readonly NewOutboxEffect[];
}

/**
 * A receipt before the store assigns sequences. For an accepted command the
 * store fills in `sequence` (its last event's sequence, or the log position
 * before it when it wrote no events) and `eventCount`. A rejected draft is
 * stored as is, with no events and no outbox rows even if the entry lists some.
 */
export type CommandReceiptDraft =
  | { readonly status: "accepted"; readonly commandId: string; readonly commandType: string; readonly acceptedAt: string }
  | {
      readonly status: "rejected";
      readonly commandId: string;
      readonly commandType: string;
      readonly rejection: { readonly code: string; readonly message: string };
      readonly rejectedAt: string;
    };

/** The outcome of one entry of a commit batch. */
export interface CommitResult {
  readonly receipt: CommandReceipt;
  /** The events written for this entry; empty when the commandId was already known. */
  readonly events: readonly StoredEvent[];
  /** True when the commandId already had a receipt: nothing was written. */
  readonly duplicate: boolean;
}

/** What a decision made under the log's write lock sees (EventStore.commitDecided). */
export interface LockedView {
  /** Events other writers committed after the caller's `after`, ascending: the caller folds them in before deciding. */
  readonly foreign: readonly StoredEvent[];
  /** The stored receipts of the commandIds the caller asked about. */
  readonly known: ReadonlyMap<string, CommandReceipt>;
  /** The head of the log: the sequence this commit's first event follows. */
  readonly head: number;
}

/** A commit whose entries are decided while the log's write lock is held. */
export interface DecidedCommit {
  /** The caller's log position: `foreign` holds every event after it. */
  readonly after: number;
  /** Commands whose stored receipts the decision needs (a duplicate from another writer). */
  readonly commandIds: readonly string[];
  /**
   * Decide under the lock, synchronously: fold in `foreign`, decide, return
   * the entries to write (possibly none). Throwing aborts the commit and
   * writes nothing.
   */
  readonly decide: (view: LockedView) => readonly CommitEntry[];
}

/**
 * A saved fold of the log: the engine's state snapshot (docs/architecture.md,
 * "Snapshots"). The store keeps the bytes as given and never looks inside.
 */
export interface StateSnapshot {
  /** The code's state shape and serializer version; a load asks for exactly one. */
  readonly version: string;
  /** The last log sequence folded into `body`: start-up replays only the events after it. */
  readonly sequence: number;
  readonly body: Uint8Array;
}

/**
 * Synchronous reads of the turn items' read model (turnItemRows.ts), for a
 * backend that answers without waiting on the network (memory, SQLite). The
 * engine reads finished threads' items through it on demand instead of
 * keeping them in memory (docs/architecture.md, "Turn items").
 */
export interface TurnItemReader {
  /** The thread's items, each at the index of its position (holes where a position has none); a fresh array. */
  threadItems(threadId: string): TurnItem[];
  /** The thread of the item with this id, or null when no thread has it. */
  threadOfItem(itemId: string): string | null;
  /**
   * A page of the log for a fold that reads items from here: the events with
   * sequence > `after`, ascending, at most `limit` of them counted with the
   * `turn-item.updated` events among them, which are left out (this read
   * model holds their items; their data is neither read nor decoded).
   * `through` is the last sequence the page covered (`after` when the log
   * has nothing more), `covered` how many events it covered.
   */
  readBesideItems(after: number, limit: number): LogPageBesideItems;
}

/** A page of the log without its turn item events (TurnItemReader.readBesideItems). */
export interface LogPageBesideItems {
  readonly events: readonly StoredEvent[];
  readonly through: number;
  readonly covered: number;
}

export interface OutboxClaim {
  readonly owner: string;
  /** Epoch milliseconds used as "now" for availability and lease expiry. */
  readonly now: number;
  readonly leaseMs: number;
  readonly limit: number;
  /** Only rows of these kinds; all kinds when omitted (an empty list claims nothing). */
  readonly kinds?: readonly string[];
  /**
   * Leave rows of these streams alone (threads whose agent process another
   * node holds: docs/postgres.md). Nothing is skipped when omitted.
   */
  readonly skipStreams?: readonly string[];
}

/**
 * Receives one event at a time. A listener that throws is reported (backend
 * option `onListenerError`, default console.error) and keeps its subscription;
 * the error never reaches the committer or other listeners. Events are shared
 * between listeners: do not mutate them.
 */
export type EventListener = (event: StoredEvent) => void;

export interface Subscription {
  /**
   * Resolves with the last replayed sequence (the subscription's `after` when
   * there was nothing to replay) once the replay has been delivered; also
   * resolves if the subscription or store is closed first. Rejects only when
   * reading the log failed, in which case the subscription is closed.
   */
  readonly caughtUp: Promise<number>;
  /** Stop delivery at once, also mid-replay and from inside the listener. Idempotent. */
  close(): void;
}

/**
 * The append-only event log with its receipts and outbox (DESIGN.md §2).
 * Every backend passes the shared contract suite in testSuite.ts.
 */
export interface EventStore {
  /**
   * Commit a batch of entries in ONE transaction: all of it or, when anything
   * throws (e.g. event data with no JSON form), none of it. Results are in
   * entry order. Each entry whose commandId already has a receipt (stored, or
   * earlier in the same batch) writes nothing and returns that receipt with
   * `duplicate: true`. Event data and outbox payloads are stored as JSON, so
   * what comes back is their JSON round trip. Live subscribers have received
   * the new events by the time the returned promise settles.
   */
  commit(entries: readonly CommitEntry[]): Promise<readonly CommitResult[]>;
  /**
   * Take the log's write lock, read what other writers committed after
   * `after` and the receipts of `commandIds`, let `decide` turn that into
   * entries, and commit them — all in ONE transaction, so a decision always
   * sees the latest log (several Loom nodes on one database). Results are
   * those of the entries `decide` returned, as for `commit`.
   */
  commitDecided(commit: DecidedCommit): Promise<readonly CommitResult[]>;
  /**
   * Optional hint, answered without I/O: a sequence the log is known to have
   * reached (this store's commits, other writers' as heard of). A writer
   * behind it reads and folds up to it before commitDecided, so the locked
   * transaction reads only what was committed since. Never a substitute for
   * `LockedView.foreign`.
   */
  knownHead?(): number;
  /** Events with sequence > `after`, ascending, at most `limit` (default DEFAULT_READ_LIMIT). */
  readAll(after: number, limit?: number): Promise<readonly StoredEvent[]>;
  /** One stream's events with sequence > `after`, ascending. */
  readStream(streamId: string, after?: number): Promise<readonly StoredEvent[]>;
  /** The last committed sequence, 0 for an empty log. */
  lastSequence(): Promise<number>;
  lookupReceipt(commandId: string): Promise<CommandReceipt | null>;
  /**
   * Lease up to `limit` claimable rows, oldest first: pending with
   * `availableAt <= now`, or leased with `leaseExpiresAt <= now` (a crashed
   * worker). Each gets status leased, the owner, `leaseExpiresAt = now +
   * leaseMs` and one more attempt, atomically.
   */
  claimOutbox(claim: OutboxClaim): Promise<readonly OutboxRow[]>;
  /**
   * Mark a leased row done. Returns false when `owner` does not hold the lease
   * (another owner re-claimed it after expiry, or it is not leased). An
   * expired lease nobody re-claimed still belongs to its owner.
   */
  completeOutbox(id: string, owner: string): Promise<boolean>;
  /**
   * Extend the lease the owner holds on a row to `now + leaseMs` (a heartbeat
   * for a long effect). Returns false when `owner` does not hold the row
   * (another owner re-claimed it after expiry, or it is no longer leased).
   */
  renewOutbox(id: string, owner: string, now: number, leaseMs: number): Promise<boolean>;
  /**
   * Record a failed attempt by the lease owner (false, and no change, otherwise).
   * With `retryAt` (epoch ms) the row returns to pending, claimable from that
   * time; with null it becomes failed for good. Either way the lease is cleared
   * and `error` is kept as `lastError`.
   */
  failOutbox(id: string, owner: string, error: string, retryAt: number | null): Promise<boolean>;
  /**
   * Fail a pending or leased row for good, whoever holds its lease. Only for
   * boot reconciliation, when the previous lease owner is known to be dead.
   * Returns false when the row is already done or failed.
   */
  abandonOutbox(id: string, error: string): Promise<boolean>;
  /** Rows in a given status, in creation order (for boot reconciliation and inspection). */
  listOutbox(status: OutboxRow["status"]): Promise<readonly OutboxRow[]>;
  /**
   * Replay events after `after`, then deliver live ones: no gap and no
   * duplicate at the switch. The listener sees every event once, in sequence
   * order, starting on a later tick (never inside this call). Events this
   * store commits are delivered as each commit returns (before its promise
   * settles), so a slow listener slows commits: hand heavy work off. On a
   * database other stores or processes write too (SQLite file, PostgreSQL),
   * their events are delivered in the same one ascending sequence, read from
   * the log after a short delay (the backend's poll interval or notification).
   */
  subscribe(after: number, listener: EventListener): Subscription;
  /**
   * Keep `snapshot` as the store's one snapshot, replacing the previous one in
   * the same transaction (a crash mid-save leaves the previous one whole).
   * Returns false, and keeps the stored one, when that has the same version
   * and a higher sequence (another writer saved a later fold). Throws
   * StoreError `store_bad_snapshot` when the version is empty or the sequence
   * is not a whole number from 0 to the log's head.
   */
  saveSnapshot(snapshot: StateSnapshot): Promise<boolean>;
  /** The stored snapshot if it has this version (its body byte for byte), else null. */
  loadSnapshot(version: string): Promise<StateSnapshot | null>;
  /**
   * The turn items' read model: the latest version of each of the thread's
   * items (the item of the last committed `turn-item.updated` event at each
   * position), ascending by position, as their JSON round trip. Every commit
   * keeps it in step with the log in the same transaction.
   */
  readTurnItems(threadId: string): Promise<readonly TurnItem[]>;
  /**
   * The same read model read synchronously, where the backend can (memory,
   * SQLite); null where every read waits on the network (PostgreSQL).
   */
  readonly turnItems: TurnItemReader | null;
  /** Close every subscription and release the backend. Idempotent; other calls fail afterwards. */
  close(): Promise<void>;
}
