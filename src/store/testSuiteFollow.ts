import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../contracts/envelopes.js";
import type { EventStore } from "./eventStore.js";
import {
  accepted,
  commitMany,
  event,
  newCommandId,
  nextTick,
  range,
  rejected,
  sequencesOf,
  waitFor,
  type StoreHarness,
} from "./testSuiteFixtures.js";

/**
 * Following the committed log by sequence, the way reactors and waiters (and
 * other Loom processes) do: resume from a stored position, start at the head,
 * and, for backends shared between processes (`peers`), see what another
 * store on the same database commits, in order and exactly once.
 */
export function describeFollowContract(harness: StoreHarness, features: { readonly peers: boolean }): void {
  describe("following the log from a position", () => {
    it("resumes from a stored position: catches up, then follows live commits", async () => {
      const { store } = harness;
      await commitMany(store, 30, "thread:1", 7);
      // A consumer handled everything up to 18, recorded that, and stopped.
      const handled: number[] = [];
      const earlier = store.subscribe(0, (stored) => {
        handled.push(stored.sequence);
        if (stored.sequence === 18) earlier.close();
      });
      expect(await earlier.caughtUp).toBe(18);
      const position = handled[handled.length - 1]!;
      await commitMany(store, 5, "thread:2", 5);

      const seen: StoredEvent[] = [];
      const resumed = store.subscribe(position, (stored) => seen.push(stored));
      expect(await resumed.caughtUp).toBe(35);
      expect(seen).toEqual(await store.readAll(18));
      await store.commit([accepted(newCommandId(), [event("thread:3"), event("thread:3")])]);
      expect(sequencesOf(seen)).toEqual(range(19, 37));
      expect(handled).toEqual(range(1, 18));
      resumed.close();
    });

    it("started at the head, receives only commits made after it", async () => {
      const { store } = harness;
      await commitMany(store, 12, "thread:1", 5);
      const head = await store.lastSequence();
      const seen: number[] = [];
      const subscription = store.subscribe(head, (stored) => seen.push(stored.sequence));
      expect(await subscription.caughtUp).toBe(head);
      expect(seen).toEqual([]);

      const [result] = await store.commit([accepted(newCommandId(), [event("thread:1"), event("thread:2"), event("thread:1")])]);
      expect(sequencesOf(result!.events)).toEqual([13, 14, 15]);
      expect(seen).toEqual([13, 14, 15]);
      subscription.close();
    });

    it("delivers one gap-free ascending sequence while many committers race", async () => {
      const { store } = harness;
      const writers: EventStore[] = features.peers ? [store, await harness.openPeer(), await harness.openPeer()] : [store];
      await commitMany(store, 20, "thread:before", 6);
      const seen: StoredEvent[] = [];
      const subscription = store.subscribe(5, (stored) => seen.push(stored));
      expect(await subscription.caughtUp).toBe(20);

      const committers = 8;
      const rounds = 15;
      await Promise.all(
        range(0, committers - 1).map(async (committer) => {
          const writer = writers[committer % writers.length]!;
          for (let round = 0; round < rounds; round += 1) {
            const events = range(0, round % 3).map(() => event(`thread:c${committer}`, { committer, round }));
            await writer.commit([accepted(newCommandId(`c${committer}`), events)]);
          }
        }),
      );
      const last = await store.lastSequence();
      expect(last).toBe(20 + committers * (rounds / 3) * (1 + 2 + 3));
      await waitFor(() => seen.length >= last - 5, `the subscriber to reach sequence ${last}`);
      expect(sequencesOf(seen)).toEqual(range(6, last));
      expect(seen).toEqual(await store.readAll(5, last));
      subscription.close();
    });

    it("stops delivering when the subscription is closed during catch-up", async () => {
      const { store } = harness;
      await commitMany(store, 600, "thread:1", 200);
      const seen: number[] = [];
      const subscription = store.subscribe(0, (stored) => seen.push(stored.sequence));
      while (seen.length === 0) await nextTick();
      subscription.close();
      const stoppedAt = await subscription.caughtUp;
      expect(stoppedAt).toBeLessThan(600);
      expect(seen).toEqual(range(1, stoppedAt));

      // This store delivers its own commits before commit() settles: had the
      // subscription survived, this event would be in `seen` by now.
      await store.commit([accepted(newCommandId(), [event("thread:1")])]);
      expect(seen).toEqual(range(1, stoppedAt));
    });

    it("stops delivering when the store is closed during catch-up", async () => {
      const { store } = harness;
      await commitMany(store, 600, "thread:1", 200);
      const seen: number[] = [];
      const subscription = store.subscribe(0, (stored) => seen.push(stored.sequence));
      while (seen.length === 0) await nextTick();
      await store.close();
      const stoppedAt = await subscription.caughtUp;
      expect(stoppedAt).toBeLessThan(600);
      expect(seen).toEqual(range(1, stoppedAt));
    });

    if (features.peers) describePeerCases(harness);
  });
}

/** Two stores on one database, as two processes (or Loom nodes) would have. */
function describePeerCases(harness: StoreHarness): void {
  it("a second store on the same database observes the first's commits in order, exactly once", async () => {
    const { store } = harness;
    await commitMany(store, 40, "thread:1", 9);
    const peer = await harness.openPeer();
    const seen: StoredEvent[] = [];
    const subscription = peer.subscribe(0, (stored) => seen.push(stored));
    expect(await subscription.caughtUp).toBe(40);

    for (let batch = 0; batch < 10; batch += 1) {
      await store.commit([
        accepted(newCommandId(), [event("thread:a", { batch }), event("thread:b", { batch })]),
        rejected(newCommandId()),
        accepted(newCommandId()),
      ]);
    }
    const last = await store.lastSequence();
    expect(last).toBe(60);
    await waitFor(() => seen.length >= last, "the peer to see every commit of the first store");
    expect(seen).toEqual(await store.readAll(0));

    // The peer continues the same log, and its subscriber gets that too.
    const [own] = await peer.commit([accepted(newCommandId(), [event("thread:peer")])]);
    expect(sequencesOf(own!.events)).toEqual([61]);
    expect(sequencesOf(seen)).toEqual(range(1, 61));
    subscription.close();
  });

  it("delivers another store's earlier commits before this store's own, by the time its commit returns", async () => {
    const { store } = harness;
    const peer = await harness.openPeer();
    const seen: number[] = [];
    const subscription = store.subscribe(0, (stored) => seen.push(stored.sequence));
    expect(await subscription.caughtUp).toBe(0);

    await peer.commit([accepted(newCommandId(), [event("thread:peer"), event("thread:peer")])]);
    await peer.commit([accepted(newCommandId(), [event("thread:peer")])]);
    const [own] = await store.commit([accepted(newCommandId(), [event("thread:own")])]);
    expect(sequencesOf(own!.events)).toEqual([4]);
    expect(seen).toEqual([1, 2, 3, 4]);
    subscription.close();
  });

  it("a subscriber on another store started at the head receives only later commits", async () => {
    const { store } = harness;
    await commitMany(store, 10, "thread:1", 4);
    const peer = await harness.openPeer();
    const head = await peer.lastSequence();
    expect(head).toBe(10);
    const seen: number[] = [];
    const subscription = peer.subscribe(head, (stored) => seen.push(stored.sequence));
    expect(await subscription.caughtUp).toBe(10);

    await store.commit([accepted(newCommandId(), [event("thread:1"), event("thread:2"), event("thread:3")])]);
    await waitFor(() => seen.length >= 3, "the peer to see sequences 11 to 13");
    await store.commit([accepted(newCommandId(), [event("thread:1")])]);
    await waitFor(() => seen.length >= 4, "the peer to see sequence 14");
    expect(seen).toEqual([11, 12, 13, 14]);
    subscription.close();
  });
}
