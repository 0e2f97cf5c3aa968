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
import { assertSnapshotFits, settle, StoreError, StoreErrorCode } from "../storeErrors.js";
import { timeOrderedUuid } from "../storeIds.js";
import { SubscriptionHub, type SubscriptionOptions } from "../subscriptions.js";
import { TURN_ITEM_EVENT, turnItemKey } from "../turnItemRows.js";
import { MemoryOutbox, type StagedOutboxRow } from "./memoryOutbox.js";

export interface MemoryEventStoreOptions extends SubscriptionOptions {
  /** Epoch milliseconds; stamps occurredAt, createdAt and availableAt. Default Date.now. */
  readonly clock?: () => number;
  /**
   * Source of the uuid part of `event:<uuid>` and `outbox:<uuid>` ids. Default
   * a time-ordered UUIDv7 (storeIds.ts), which keeps SQLite's id indexes append-only.
   */
  readonly newId?: () => string;
}

/**
 * The in-memory EventStore: same contract as SQLite (testSuite.ts), nothing
 * survives the process. Event data and outbox payloads are copied through
 * JSON on commit, so the log never aliases a caller's objects and holds
 * exactly what SQLite would hand back. Returned events are shared, not
 * copied: treat them as immutable.
 */
export class MemoryEventStore implements EventStore {
  private readonly clock: () => number;
  private readonly newId: () => string;
  /** events[i].sequence === i + 1: the log is gap-free by construction. */
  private readonly events: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  private readonly receipts = new Map<string, CommandReceipt>();
  private readonly outbox = new MemoryOutbox();
  private snapshot: StateSnapshot | null = null;
  /** The turn items' read model: each thread's latest items by position, and each item's thread. */
  private readonly items = new Map<string, TurnItem[]>();
  private readonly itemThreads = new Map<string, string>();
  private readonly hub: SubscriptionHub;
  private closed = false;

  constructor(options: MemoryEventStoreOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.newId = options.newId ?? (() => timeOrderedUuid(Date.now()));
    this.hub = new SubscriptionHub((after, limit) => this.readAllNow(after, limit), options);
  }

  /**
   * All-or-nothing: every entry is staged (serialized, sequenced, checked for
   * duplicates) before anything is applied, so a throw leaves the store as it was.
   */
  commit(entries: readonly CommitEntry[]): Promise<readonly CommitResult[]> {
    return settle(() => this.commitNow(entries));
  }

  /** One process is the only writer of a memory log: `foreign` holds what this store committed after `after`. */
  commitDecided(commit: DecidedCommit): Promise<readonly CommitResult[]> {
    return settle(() => {
      this.assertOpen();
      const known = new Map<string, CommandReceipt>();
      for (const commandId of commit.commandIds) {
        const receipt = this.receipts.get(commandId);
        if (receipt !== undefined) known.set(commandId, receipt);
      }
      const entries = commit.decide({ foreign: this.events.slice(commit.after), known, head: this.events.length });
      return entries.length === 0 ? [] : this.commitNow(entries);
    });
  }

  private commitNow(entries: readonly CommitEntry[]): CommitResult[] {
    this.assertOpen();
    const now = this.clock();
    const occurredAt = isoTime(now);
    let sequence = this.events.length;
    const batchReceipts = new Map<string, CommandReceipt>();
    const newEvents: StoredEvent[] = [];
    const newOutbox: StagedOutboxRow[] = [];
    const results: CommitResult[] = [];

    for (const { receipt: draft, events, outbox } of entries) {
      const known = batchReceipts.get(draft.commandId) ?? this.receipts.get(draft.commandId);
      if (known !== undefined) {
        results.push({ receipt: known, events: [], duplicate: true });
        continue;
      }
      if (draft.status === "rejected") {
        const receipt = rejectedReceipt(draft);
        batchReceipts.set(draft.commandId, receipt);
        results.push({ receipt, events: [], duplicate: false });
        continue;
      }
      const written: StoredEvent[] = [];
      for (const event of events) {
        sequence += 1;
        written.push({
          sequence,
          eventId: `event:${this.newId()}`,
          commandId: draft.commandId,
          streamId: event.streamId,
          type: event.type,
          data: JSON.parse(toJson(event.data, `data of event ${event.type}`)) as unknown,
          occurredAt,
        });
      }
      for (const effect of outbox) {
        const payload = JSON.parse(toJson(effect.payload, `payload of outbox effect ${effect.kind}`)) as unknown;
        newOutbox.push({ id: `outbox:${this.newId()}`, commandId: draft.commandId, effect, payload });
      }
      const receipt = acceptedReceipt(draft, sequence, written.length);
      batchReceipts.set(draft.commandId, receipt);
      for (const event of written) newEvents.push(event);
      results.push({ receipt, events: written, duplicate: false });
    }

    // Apply: nothing below can throw.
    for (const [commandId, receipt] of batchReceipts) this.receipts.set(commandId, receipt);
    for (const event of newEvents) {
      this.events.push(event);
      let stream = this.streams.get(event.streamId);
      if (stream === undefined) {
        stream = [];
        this.streams.set(event.streamId, stream);
      }
      stream.push(event);
      this.keepItem(event);
    }
    this.outbox.insert(newOutbox, now, occurredAt);
    this.hub.publish(newEvents);
    return results;
  }

  readAll(after: number, limit: number = DEFAULT_READ_LIMIT): Promise<readonly StoredEvent[]> {
    return this.run(() => this.readAllNow(after, limit));
  }

  readStream(streamId: string, after = 0): Promise<readonly StoredEvent[]> {
    return this.run(() => {
      const stream = this.streams.get(streamId);
      if (stream === undefined) return [];
      return stream.slice(firstAfter(stream, after));
    });
  }

  lastSequence(): Promise<number> {
    return this.run(() => this.events.length);
  }

  lookupReceipt(commandId: string): Promise<CommandReceipt | null> {
    return this.run(() => this.receipts.get(commandId) ?? null);
  }

  claimOutbox(claim: OutboxClaim): Promise<readonly OutboxRow[]> {
    return this.run(() => this.outbox.claim(claim));
  }

  completeOutbox(id: string, owner: string): Promise<boolean> {
    return this.run(() => this.outbox.complete(id, owner));
  }

  renewOutbox(id: string, owner: string, now: number, leaseMs: number): Promise<boolean> {
    return this.run(() => this.outbox.renew(id, owner, now, leaseMs));
  }

  abandonOutbox(id: string, error: string): Promise<boolean> {
    return this.run(() => this.outbox.abandon(id, error));
  }

  failOutbox(id: string, owner: string, error: string, retryAt: number | null): Promise<boolean> {
    return this.run(() => this.outbox.fail(id, owner, error, retryAt));
  }

  listOutbox(status: OutboxRow["status"]): Promise<readonly OutboxRow[]> {
    return this.run(() => this.outbox.list(status));
  }

  /** The body is copied in and out, as a database would: callers never share its bytes. */
  saveSnapshot(snapshot: StateSnapshot): Promise<boolean> {
    return this.run(() => {
      assertSnapshotFits(snapshot, this.events.length);
      const kept = this.snapshot;
      if (kept !== null && kept.version === snapshot.version && kept.sequence > snapshot.sequence) return false;
      this.snapshot = { version: snapshot.version, sequence: snapshot.sequence, body: Uint8Array.from(snapshot.body) };
      return true;
    });
  }

  loadSnapshot(version: string): Promise<StateSnapshot | null> {
    return this.run(() => {
      const kept = this.snapshot;
      if (kept === null || kept.version !== version) return null;
      return { version: kept.version, sequence: kept.sequence, body: Uint8Array.from(kept.body) };
    });
  }

  readTurnItems(threadId: string): Promise<readonly TurnItem[]> {
    return this.run(() => this.turnItems.threadItems(threadId).filter((item) => item !== undefined));
  }

  readonly turnItems: TurnItemReader = {
    threadItems: (threadId) => {
      this.assertOpen();
      return (this.items.get(threadId) ?? []).slice();
    },
    threadOfItem: (itemId) => {
      this.assertOpen();
      return this.itemThreads.get(itemId) ?? null;
    },
    readBesideItems: (after, limit) => {
      const page = this.readAllNow(after, limit);
      return {
        events: page.filter((event) => event.type !== TURN_ITEM_EVENT),
        through: page.length === 0 ? after : page[page.length - 1]!.sequence,
        covered: page.length,
      };
    },
  };

  subscribe(after: number, listener: EventListener): Subscription {
    this.assertOpen();
    return this.hub.subscribe(after, listener);
  }

  /** Ends every subscription; later calls reject with StoreError `store_closed`. Idempotent. */
  close(): Promise<void> {
    this.closed = true;
    this.hub.closeAll();
    return Promise.resolve();
  }

  private keepItem(event: StoredEvent): void {
    const key = turnItemKey(event.type, event.data);
    if (key === null) return;
    let items = this.items.get(key.threadId);
    if (items === undefined) {
      items = [];
      this.items.set(key.threadId, items);
    }
    items[key.position] = (event.data as { item: TurnItem }).item;
    this.itemThreads.set(key.itemId, key.threadId);
  }

  private readAllNow(after: number, limit: number): StoredEvent[] {
    this.assertOpen();
    const start = Math.max(0, Math.floor(after));
    return this.events.slice(start, start + Math.max(0, limit));
  }

  private run<T>(work: () => T): Promise<T> {
    return settle(() => {
      this.assertOpen();
      return work();
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError(StoreErrorCode.closed, "the memory event store is closed");
  }
}

/** Index of the first event with sequence > after (binary search; streams are sorted). */
function firstAfter(stream: readonly StoredEvent[], after: number): number {
  let low = 0;
  let high = stream.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((stream[mid] as StoredEvent).sequence <= after) low = mid + 1;
    else high = mid;
  }
  return low;
}
