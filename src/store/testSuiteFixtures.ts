import { afterEach, beforeEach } from "vitest";
import type { NewEvent, NewOutboxEffect, StoredEvent } from "../contracts/envelopes.js";
import type { CommitEntry, EventStore } from "./eventStore.js";

/**
 * Shared pieces of the EventStore contract suite (testSuite.ts): the harness
 * that opens a fresh store per test, and builders for commit entries.
 */

/** What a backend's test file hands the contract suite for every test. */
export interface StoreFixture {
  readonly store: EventStore;
  /** Open the same storage again (after `store.close()`); only durable backends have it. */
  readonly reopen?: () => Promise<EventStore>;
  /**
   * Open a second store on the same database while the first stays open, as
   * another process would; only backends shared between processes have it.
   */
  readonly openPeer?: () => Promise<EventStore>;
  /** Remove whatever the fixture created (temp directories); stores are closed before. */
  readonly cleanup: () => Promise<void>;
}

export type OpenStore = () => Promise<StoreFixture>;

export interface StoreHarness {
  /** The store of the running test (the latest one after a reopen). */
  readonly store: EventStore;
  readonly canReopen: boolean;
  /** Close the current store and open the same storage again. */
  reopen(): Promise<EventStore>;
  /** Another store on the same database, closed with the test's stores. */
  openPeer(): Promise<EventStore>;
}

/** Open a fresh store before each test; close every store it opened and clean up after. */
export function useStoreHarness(open: OpenStore): StoreHarness {
  let fixture: StoreFixture | null = null;
  let current: EventStore | null = null;
  const opened: EventStore[] = [];

  beforeEach(async () => {
    fixture = await open();
    current = fixture.store;
    opened.push(current);
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await fixture?.cleanup();
    fixture = null;
    current = null;
  });

  return {
    get store(): EventStore {
      if (current === null) throw new Error("no store: the harness opens one per test");
      return current;
    },
    get canReopen(): boolean {
      return fixture?.reopen !== undefined;
    },
    async reopen(): Promise<EventStore> {
      if (fixture?.reopen === undefined || current === null) throw new Error("this backend cannot reopen");
      await current.close();
      current = await fixture.reopen();
      opened.push(current);
      return current;
    },
    async openPeer(): Promise<EventStore> {
      if (fixture?.openPeer === undefined) throw new Error("this backend cannot open a second store on its database");
      const peer = await fixture.openPeer();
      opened.push(peer);
      return peer;
    },
  };
}

let commandCounter = 0;

/** A commandId unique within the test run. */
export function newCommandId(label = "cmd"): string {
  commandCounter += 1;
  return `${label}:${commandCounter}`;
}

export function event(streamId: string, data: unknown = { n: 0 }, type = "test.happened"): NewEvent {
  return { type, streamId, data };
}

export function effect(kind: string, payload: unknown = {}, streamId = "thread:a", replaySafe = true): NewOutboxEffect {
  return { kind, streamId, payload, replaySafe };
}

export function accepted(
  commandId: string,
  events: readonly NewEvent[] = [],
  outbox: readonly NewOutboxEffect[] = [],
): CommitEntry {
  return {
    receipt: { status: "accepted", commandId, commandType: "test.command", acceptedAt: "2025-01-01T00:00:00.000Z" },
    events,
    outbox,
  };
}

export function rejected(
  commandId: string,
  code = "test_refused",
  events: readonly NewEvent[] = [],
  outbox: readonly NewOutboxEffect[] = [],
): CommitEntry {
  return {
    receipt: {
      status: "rejected",
      commandId,
      commandType: "test.command",
      rejection: { code, message: `refused: ${code}` },
      rejectedAt: "2025-01-01T00:00:00.000Z",
    },
    events,
    outbox,
  };
}

/** Commit `count` events, one command each, in batches of `batchSize`. Returns the last sequence. */
export async function commitMany(store: EventStore, count: number, streamId = "thread:bulk", batchSize = 100): Promise<number> {
  let last = 0;
  for (let start = 0; start < count; start += batchSize) {
    const entries: CommitEntry[] = [];
    for (let index = start; index < Math.min(count, start + batchSize); index += 1) {
      entries.push(accepted(newCommandId("bulk"), [event(streamId, { index })]));
    }
    const results = await store.commit(entries);
    for (const result of results) if (result.receipt.status === "accepted") last = result.receipt.sequence;
  }
  return last;
}

export function sequencesOf(events: readonly StoredEvent[]): number[] {
  return events.map((stored) => stored.sequence);
}

/** [from, from + 1, ..., to] */
export function range(from: number, to: number): number[] {
  const result: number[] = [];
  for (let value = from; value <= to; value += 1) result.push(value);
  return result;
}

/**
 * Resolve once `done()` holds, checking every few milliseconds; fail after a
 * deadline generous enough that only a stuck (not a slow) store reaches it.
 */
export async function waitFor(done: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Let setImmediate callbacks (such as replay pages) run. */
export function nextTick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
