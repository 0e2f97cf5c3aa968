import { afterEach, describe, expect, it, vi } from "vitest";
import type { StoredEvent } from "../contracts/envelopes.js";
import type { CommitResult } from "./eventStore.js";
import { accepted, commitMany, event, newCommandId, nextTick, range, type StoreHarness } from "./testSuiteFixtures.js";

/**
 * Subscription part of the EventStore contract: replay, then live, with no
 * gap and no duplicate at the switch, whatever commits race with the replay.
 */
export function describeSubscribeContract(harness: StoreHarness): void {
  describe("subscribe", () => {
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it("replays the log, then delivers each commit as it returns", async () => {
      const { store } = harness;
      await commitMany(store, 5, "thread:1", 2);
      const seen: number[] = [];
      const subscription = store.subscribe(0, (stored) => seen.push(stored.sequence));
      expect(seen).toEqual([]); // never called inside subscribe()
      expect(await subscription.caughtUp).toBe(5);
      expect(seen).toEqual(range(1, 5));

      await store.commit([accepted(newCommandId(), [event("thread:1"), event("thread:2")])]);
      expect(seen).toEqual(range(1, 7));
      await store.commit([accepted(newCommandId(), [event("thread:3")])]);
      expect(seen).toEqual(range(1, 8));
      subscription.close();
    });

    it("starts after the given sequence and resolves caughtUp with it when there is nothing to replay", async () => {
      const { store } = harness;
      await commitMany(store, 10, "thread:1", 10);
      const seen: StoredEvent[] = [];
      const fromSeven = store.subscribe(7, (stored) => seen.push(stored));
      expect(await fromSeven.caughtUp).toBe(10);
      expect(seen.map((stored) => stored.sequence)).toEqual([8, 9, 10]);
      expect(seen).toEqual(await store.readAll(7));

      const atEnd = store.subscribe(10, () => undefined);
      expect(await atEnd.caughtUp).toBe(10);
      fromSeven.close();
      atEnd.close();
    });

    it("has no gap or duplicate when commits race with the replay", async () => {
      const { store } = harness;
      const before = await commitMany(store, 1_000, "thread:bulk", 100);
      expect(before).toBe(1_000);

      const seen: number[] = [];
      const racing: Promise<readonly CommitResult[]>[] = [];
      let caughtUpAt: number | null = null;
      const subscription = store.subscribe(0, (stored) => {
        seen.push(stored.sequence);
        // Commit from inside the replay: these land while pages are still being read.
        if (caughtUpAt === null && stored.sequence % 100 === 50) {
          racing.push(store.commit([accepted(newCommandId("inside"), [event("thread:race", { from: stored.sequence })])]));
        }
      });
      const caughtUp = subscription.caughtUp.then((sequence) => {
        caughtUpAt = sequence;
        return sequence;
      });

      // Meanwhile commit from outside, yielding to the event loop between commits.
      for (let round = 0; round < 40; round += 1) {
        await store.commit([accepted(newCommandId("outside"), [event("thread:race"), event("thread:race")])]);
        await nextTick();
      }
      const replayedUpTo = await caughtUp;
      await Promise.all(racing);
      await store.commit([accepted(newCommandId("after"), [event("thread:race")])]);

      const last = await store.lastSequence();
      expect(racing.length).toBeGreaterThan(0);
      expect(last).toBe(1_000 + racing.length + 40 * 2 + 1);
      expect(replayedUpTo).toBeGreaterThanOrEqual(1_000);
      expect(replayedUpTo).toBeLessThanOrEqual(last);
      expect(seen).toEqual(range(1, last));
      subscription.close();
    });

    it("delivers an event committed by the listener while it receives the last replayed event", async () => {
      const { store } = harness;
      await commitMany(store, 10, "thread:1", 5);
      const seen: number[] = [];
      const followUps: Promise<readonly CommitResult[]>[] = [];
      const subscription = store.subscribe(0, (stored) => {
        seen.push(stored.sequence);
        // The replay has read its last page already; this event exists only in the live feed.
        if (stored.sequence === 10) followUps.push(store.commit([accepted(newCommandId(), [event("thread:1")])]));
      });
      expect(await subscription.caughtUp).toBe(10);
      await Promise.all(followUps);
      expect(followUps).toHaveLength(1);
      expect(seen).toEqual(range(1, 11));
      subscription.close();
    });

    it("stops delivering once closed", async () => {
      const { store } = harness;
      await commitMany(store, 3);
      const seen: number[] = [];
      const subscription = store.subscribe(0, (stored) => seen.push(stored.sequence));
      await subscription.caughtUp;
      await store.commit([accepted(newCommandId(), [event("thread:1")])]);
      subscription.close();
      subscription.close();
      await store.commit([accepted(newCommandId(), [event("thread:1")])]);
      await nextTick();
      expect(seen).toEqual([1, 2, 3, 4]);
    });

    it("stops mid-replay when closed from inside the listener", async () => {
      const { store } = harness;
      await commitMany(store, 300, "thread:1", 100);
      const seen: number[] = [];
      const subscription = store.subscribe(0, (stored) => {
        seen.push(stored.sequence);
        if (stored.sequence === 120) subscription.close();
      });
      expect(await subscription.caughtUp).toBe(120);
      await store.commit([accepted(newCommandId(), [event("thread:1")])]);
      await nextTick();
      expect(seen).toEqual(range(1, 120));
    });

    it("ends subscriptions when the store closes", async () => {
      const { store } = harness;
      await commitMany(store, 2);
      const seen: number[] = [];
      const subscription = store.subscribe(0, (stored) => seen.push(stored.sequence));
      await store.close();
      await expect(subscription.caughtUp).resolves.toBeLessThanOrEqual(2);
      await nextTick();
      expect(seen.length).toBeLessThanOrEqual(2);
      expect(() => store.subscribe(0, () => undefined)).toThrow();
    });

    it("isolates a throwing listener from the committer and from other listeners", async () => {
      const { store } = harness;
      const reported = vi.spyOn(console, "error").mockImplementation(() => undefined);
      const boom = new Error("listener bug");
      const calls: number[] = [];
      const healthy: number[] = [];
      const faulty = store.subscribe(0, (stored) => {
        calls.push(stored.sequence);
        if (stored.sequence === 2) throw boom;
      });
      const other = store.subscribe(0, (stored) => healthy.push(stored.sequence));
      await Promise.all([faulty.caughtUp, other.caughtUp]);

      const results = await store.commit([accepted(newCommandId(), [event("thread:1"), event("thread:1"), event("thread:1")])]);
      expect(results[0]!.events).toHaveLength(3);
      expect(healthy).toEqual([1, 2, 3]);
      expect(calls).toEqual([1, 2, 3]); // still subscribed after throwing
      expect(reported.mock.calls.some((call) => call.includes(boom))).toBe(true);
      faulty.close();
      other.close();
    });

    it("keeps every listener in order when a listener commits while being called", async () => {
      const { store } = harness;
      const first: number[] = [];
      const second: number[] = [];
      const followUps: Promise<readonly CommitResult[]>[] = [];
      const committer = store.subscribe(0, (stored) => {
        first.push(stored.sequence);
        if (stored.sequence <= 2) followUps.push(store.commit([accepted(newCommandId("follow-up"), [event("thread:1")])]));
      });
      const observer = store.subscribe(0, (stored) => second.push(stored.sequence));
      await Promise.all([committer.caughtUp, observer.caughtUp]);

      await store.commit([accepted(newCommandId(), [event("thread:1")])]);
      // A follow-up's own delivery may start the next one (on backends whose commits await I/O).
      let awaited = 0;
      while (awaited < followUps.length) {
        awaited = followUps.length;
        await Promise.all(followUps);
      }
      expect(await store.lastSequence()).toBe(3);
      expect(first).toEqual([1, 2, 3]);
      expect(second).toEqual([1, 2, 3]);
      committer.close();
      observer.close();
    });
  });
}
