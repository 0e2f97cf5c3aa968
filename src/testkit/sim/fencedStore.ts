import type { CommandReceipt, OutboxRow, StoredEvent } from "../../contracts/envelopes.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import type {
  CommitEntry,
  CommitResult,
  DecidedCommit,
  EventListener,
  EventStore,
  OutboxClaim,
  StateSnapshot,
  Subscription,
  TurnItemReader,
} from "../../store/eventStore.js";
import { isStoreClosed } from "../../store/storeErrors.js";

/** Where a store call stands when the simulator's crash fault fires. */
export type CrashPoint = "before" | "after";

/** What the world learns from, and decides about, every store call of one node. */
export interface StoreHooks {
  /** Called before each call; a crash point kills the node there (before: the call is not applied; after: it is, but nobody hears back). */
  crashPoint(operation: string): CrashPoint | null;
  /** The node is killed: called synchronously from inside the store call that crashed it. */
  crash(): void;
  /** A commit went through. */
  committed(entries: readonly CommitEntry[], results: readonly CommitResult[]): void;
  /** True while lease renewals are lost (the lease-expiry fault). */
  renewalsLost(): boolean;
  /** Effects a worker claimed. */
  claimed(rows: readonly OutboxRow[]): void;
  /** A synchronous turn item read of a killed node met its closed store (SQLite: the file was closed with the node). */
  closedStoreRead(): void;
}

/** A promise that never settles: code of a killed process never runs again. */
function never<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}

/**
 * One node's handle on the durable store. `kill()` models kill -9: from then
 * on no call reaches the store and no caller hears back (their promises
 * never settle), and every subscription stops. The durable store underneath
 * lives on for the next node.
 */
export class FencedStore implements EventStore {
  private dead = false;
  private readonly subscriptions = new Set<Subscription>();

  constructor(
    private readonly inner: EventStore,
    private readonly hooks: StoreHooks,
  ) {}

  get killed(): boolean {
    return this.dead;
  }

  kill(): void {
    if (this.dead) return;
    this.dead = true;
    for (const subscription of this.subscriptions) subscription.close();
    this.subscriptions.clear();
  }

  private call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    if (this.dead) return never();
    const point = this.hooks.crashPoint(operation);
    if (point === "before") {
      this.hooks.crash();
      return never();
    }
    const result = run();
    if (point === "after") {
      // The call was made (a commit is durable); the process dies before it hears back.
      result.catch(() => undefined);
      this.hooks.crash();
      return never();
    }
    // A call that was in flight when the node died answers nobody.
    return result.then(
      (value) => (this.dead ? never<T>() : value),
      (error: unknown) => (this.dead ? never<T>() : Promise.reject(error instanceof Error ? error : new Error(String(error)))),
    );
  }

  commit(entries: readonly CommitEntry[]): Promise<readonly CommitResult[]> {
    return this.call("commit", async () => {
      const results = await this.inner.commit(entries);
      this.hooks.committed(entries, results);
      return results;
    });
  }

  commitDecided(commit: DecidedCommit): Promise<readonly CommitResult[]> {
    return this.call("commit", async () => {
      let decided: readonly CommitEntry[] = [];
      const results = await this.inner.commitDecided({ ...commit, decide: (view) => (decided = commit.decide(view)) });
      this.hooks.committed(decided, results);
      return results;
    });
  }

  readAll(after: number, limit?: number): Promise<readonly StoredEvent[]> {
    return this.call("readAll", () => this.inner.readAll(after, limit));
  }

  readStream(streamId: string, after?: number): Promise<readonly StoredEvent[]> {
    return this.call("readStream", () => this.inner.readStream(streamId, after));
  }

  lastSequence(): Promise<number> {
    return this.call("lastSequence", () => this.inner.lastSequence());
  }

  lookupReceipt(commandId: string): Promise<CommandReceipt | null> {
    return this.call("lookupReceipt", () => this.inner.lookupReceipt(commandId));
  }

  claimOutbox(claim: OutboxClaim): Promise<readonly OutboxRow[]> {
    return this.call("claimOutbox", async () => {
      const rows = await this.inner.claimOutbox(claim);
      if (rows.length > 0) this.hooks.claimed(rows);
      return rows;
    });
  }

  completeOutbox(id: string, owner: string): Promise<boolean> {
    return this.call("completeOutbox", () => this.inner.completeOutbox(id, owner));
  }

  renewOutbox(id: string, owner: string, now: number, leaseMs: number): Promise<boolean> {
    // A lost heartbeat: the worker believes it renewed, the store never heard.
    if (!this.dead && this.hooks.renewalsLost()) return Promise.resolve(true);
    return this.call("renewOutbox", () => this.inner.renewOutbox(id, owner, now, leaseMs));
  }

  failOutbox(id: string, owner: string, error: string, retryAt: number | null): Promise<boolean> {
    return this.call("failOutbox", () => this.inner.failOutbox(id, owner, error, retryAt));
  }

  abandonOutbox(id: string, error: string): Promise<boolean> {
    return this.call("abandonOutbox", () => this.inner.abandonOutbox(id, error));
  }

  listOutbox(status: OutboxRow["status"]): Promise<readonly OutboxRow[]> {
    return this.call("listOutbox", () => this.inner.listOutbox(status));
  }

  /**
   * Snapshot calls skip the crash hooks: they would shift every seed's crash
   * points (each boot loads one), and a snapshot's crash safety is the
   * backends' one-transaction save, tested there.
   */
  saveSnapshot(snapshot: StateSnapshot): Promise<boolean> {
    return this.dead ? never() : this.inner.saveSnapshot(snapshot);
  }

  loadSnapshot(version: string): Promise<StateSnapshot | null> {
    return this.dead ? never() : this.inner.loadSnapshot(version);
  }

  /** Turn item reads skip the crash hooks too: they are reads of what commits wrote, and would shift every seed's crash points. */
  readTurnItems(threadId: string): Promise<readonly TurnItem[]> {
    return this.dead ? never() : this.inner.readTurnItems(threadId);
  }

  /**
   * The backend's synchronous reader, passed through: a killed node's code
   * that still runs (a wait's check, a callback) reads its closed store and
   * gets the backend's own store_closed error, which the world counts.
   */
  get turnItems(): TurnItemReader | null {
    const inner = this.inner.turnItems;
    if (inner === null) return null;
    this.reader ??= {
      threadItems: (threadId) => this.read(() => inner.threadItems(threadId)),
      threadOfItem: (itemId) => this.read(() => inner.threadOfItem(itemId)),
      readBesideItems: (after, limit) => this.read(() => inner.readBesideItems(after, limit)),
    };
    return this.reader;
  }

  private reader: TurnItemReader | null = null;

  private read<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (isStoreClosed(error)) this.hooks.closedStoreRead();
      throw error;
    }
  }

  subscribe(after: number, listener: EventListener): Subscription {
    if (this.dead) return { caughtUp: never(), close: () => undefined };
    const inner = this.inner.subscribe(after, (event) => {
      if (!this.dead) listener(event);
    });
    const subscription: Subscription = {
      caughtUp: inner.caughtUp,
      close: () => {
        inner.close();
        this.subscriptions.delete(subscription);
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** A node never closes the durable store: the world does, at the end. */
  close(): Promise<void> {
    this.kill();
    return Promise.resolve();
  }
}
