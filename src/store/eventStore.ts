import type { CommandReceipt, NewEvent, NewOutboxEffect, OutboxRow, StoredEvent } from "../contracts/envelopes.js";

/** Everything one command writes, committed in one transaction or not at all. */
export interface CommitEntry {
  readonly receipt: CommandReceiptDraft;
  readonly events: readonly NewEvent[];
  readonly outbox: readonly NewOutboxEffect[];
}

/**
 * A receipt before the store assigns sequences. For an accepted command the
 * store fills in `sequence` and `eventCount`.
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

export interface OutboxClaim {
  readonly owner: string;
  /** Epoch milliseconds used as "now" for availability and lease expiry. */
  readonly now: number;
  readonly leaseMs: number;
  readonly limit: number;
  /** Only rows of these kinds; all kinds when omitted. */
  readonly kinds?: readonly string[];
}

export type EventListener = (event: StoredEvent) => void;

export interface Subscription {
  /** Resolves with the last replayed sequence once the replay has been delivered. */
  readonly caughtUp: Promise<number>;
  close(): void;
}

/**
 * The append-only event log with its receipts and outbox (DESIGN.md §2).
 * Every backend passes the shared contract suite in testSuite.ts.
 */
export interface EventStore {
  /**
   * Commit a batch of entries in ONE transaction. Each entry whose commandId
   * already has a receipt (stored, or earlier in the same batch) writes
   * nothing and returns that receipt with `duplicate: true`.
   */
  commit(entries: readonly CommitEntry[]): Promise<readonly CommitResult[]>;
  /** Events with sequence > `after`, ascending, at most `limit`. */
  readAll(after: number, limit?: number): Promise<readonly StoredEvent[]>;
  /** One stream's events with sequence > `after`, ascending. */
  readStream(streamId: string, after?: number): Promise<readonly StoredEvent[]>;
  /** The last committed sequence, 0 for an empty log. */
  lastSequence(): Promise<number>;
  lookupReceipt(commandId: string): Promise<CommandReceipt | null>;
  /** Lease up to `limit` claimable rows: pending and available, or leased with an expired lease. */
  claimOutbox(claim: OutboxClaim): Promise<readonly OutboxRow[]>;
  /** Mark a leased row done. Returns false when `owner` no longer holds the lease. */
  completeOutbox(id: string, owner: string): Promise<boolean>;
  /**
   * Record a failed attempt. With `retryAt` the row returns to pending at that
   * time; without it the row becomes failed for good.
   */
  failOutbox(id: string, owner: string, error: string, retryAt: number | null): Promise<boolean>;
  /** Rows in a given status (for boot reconciliation and inspection). */
  listOutbox(status: OutboxRow["status"]): Promise<readonly OutboxRow[]>;
  /**
   * Replay events after `after`, then deliver live ones: no gap and no
   * duplicate at the switch. The listener sees every event once, in sequence order.
   */
  subscribe(after: number, listener: EventListener): Subscription;
  close(): Promise<void>;
}
