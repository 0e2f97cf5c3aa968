import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../contracts/envelopes.js";
import { SubscriptionHub } from "./subscriptions.js";
import { nextTick, range } from "./testSuiteFixtures.js";

/** A log the hub replays from, with an append that publishes like a backend does. */
function makeLog(initial: number): { log: StoredEvent[]; append: (hub: SubscriptionHub, count: number) => void } {
  const log: StoredEvent[] = [];
  const push = (): StoredEvent => {
    const stored: StoredEvent = {
      sequence: log.length + 1,
      eventId: `event:${log.length + 1}`,
      commandId: "cmd",
      streamId: "",
      type: "test.happened",
      data: null,
      occurredAt: "2025-01-01T00:00:00.000Z",
    };
    log.push(stored);
    return stored;
  };
  for (let index = 0; index < initial; index += 1) push();
  return {
    log,
    append: (hub, count) => {
      const fresh: StoredEvent[] = [];
      for (let index = 0; index < count; index += 1) fresh.push(push());
      hub.publish(fresh);
    },
  };
}

describe("SubscriptionHub", () => {
  it("reports listener errors to onListenerError with the event, and keeps delivering", async () => {
    const { log, append } = makeLog(2);
    const reported: [unknown, number | null][] = [];
    const hub = new SubscriptionHub((after, limit) => log.slice(after, after + limit), {
      onListenerError: (error, stored) => reported.push([error, stored?.sequence ?? null]),
    });
    const seen: number[] = [];
    const subscription = hub.subscribe(0, (stored) => {
      seen.push(stored.sequence);
      if (stored.sequence % 2 === 0) throw new Error(`bad ${stored.sequence}`);
    });
    await subscription.caughtUp;
    append(hub, 2);
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(reported.map(([error, sequence]) => [(error as Error).message, sequence])).toEqual([
      ["bad 2", 2],
      ["bad 4", 4],
    ]);
  });

  it("replays page by page, deduplicating events both read and buffered", async () => {
    const { log, append } = makeLog(10);
    const reads: [number, number][] = [];
    const hub = new SubscriptionHub(
      (after, limit) => {
        reads.push([after, limit]);
        return log.slice(after, after + limit);
      },
      { replayPageSize: 4 },
    );
    const seen: number[] = [];
    const subscription = hub.subscribe(0, (stored) => seen.push(stored.sequence));
    await nextTick();
    append(hub, 3); // published while the replay is between pages: read again AND buffered
    expect(await subscription.caughtUp).toBe(13);
    expect(reads[0]).toEqual([0, 4]);
    expect(reads.length).toBeGreaterThan(3);
    expect(seen).toEqual(range(1, 13));
    expect(hub.size).toBe(1);
    subscription.close();
    expect(hub.size).toBe(0);
  });

  it("rejects caughtUp, reports, and closes when a replay read fails", async () => {
    const failure = new Error("disk gone");
    const reported: [unknown, StoredEvent | null][] = [];
    const hub = new SubscriptionHub(
      () => {
        throw failure;
      },
      { onListenerError: (error, stored) => reported.push([error, stored]) },
    );
    const subscription = hub.subscribe(0, () => undefined);
    await expect(subscription.caughtUp).rejects.toBe(failure);
    expect(reported).toEqual([[failure, null]]);
    expect(hub.size).toBe(0);
  });

  it("resolves pending caughtUp promises when everything closes", async () => {
    const { log } = makeLog(3);
    const hub = new SubscriptionHub((after, limit) => log.slice(after, after + limit));
    const seen: number[] = [];
    const subscription = hub.subscribe(1, (stored) => seen.push(stored.sequence));
    hub.closeAll();
    expect(await subscription.caughtUp).toBe(1);
    expect(seen).toEqual([]);
  });
});
