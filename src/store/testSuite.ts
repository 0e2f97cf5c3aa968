import { describe, expect, it } from "vitest";
import { DEFAULT_READ_LIMIT } from "./eventStore.js";
import { describeDecidedContract } from "./testSuiteDecided.js";
import { describeFollowContract } from "./testSuiteFollow.js";
import { describeOutboxContract } from "./testSuiteOutbox.js";
import { describeSnapshotContract } from "./testSuiteSnapshots.js";
import { describeSubscribeContract } from "./testSuiteSubscribe.js";
import { describeTurnItemsContract } from "./testSuiteTurnItems.js";
import {
  accepted,
  commitMany,
  effect,
  event,
  newCommandId,
  range,
  rejected,
  sequencesOf,
  useStoreHarness,
  type OpenStore,
  type StoreHarness,
} from "./testSuiteFixtures.js";

export type { OpenStore, StoreFixture } from "./testSuiteFixtures.js";

/** What a backend can do beyond the common contract, and so which extra cases it runs. */
export interface BackendFeatures {
  /** The storage outlives the store: the fixture has `reopen`. */
  readonly durable: boolean;
  /** Several stores (processes) can share the database: the fixture has `openPeer`. */
  readonly peers: boolean;
}

/**
 * THE contract every EventStore backend passes (STYLE.md rule 3). A backend's
 * test file calls this with a function that opens a fresh, empty store per
 * test; `features` adds the durability and shared-database cases.
 */
export function eventStoreContract(name: string, open: OpenStore, features: BackendFeatures): void {
  describe(`EventStore contract: ${name}`, () => {
    const harness = useStoreHarness(open);
    describeCommitContract(harness);
    describeReadContract(harness);
    describeOutboxContract(harness);
    describeSubscribeContract(harness);
    describeFollowContract(harness, features);
    describeDecidedContract(harness, features);
    describeSnapshotContract(harness, features);
    describeTurnItemsContract(harness, features);
    if (features.durable) describeDurabilityContract(harness);
  });
}

/** Values with no JSON form; each must abort its whole batch. */
function unserializableValues(): [string, unknown][] {
  const circular: Record<string, unknown> = { name: "loop" };
  circular.self = circular;
  return [
    ["a BigInt", { big: 10n }],
    ["a circular object", circular],
    ["undefined", undefined],
  ];
}

function describeCommitContract(harness: StoreHarness): void {
  describe("commit", () => {
    it("assigns gap-free increasing sequences across entries and batches", async () => {
      const { store } = harness;
      const [a, b, c, d] = ["a", "b", "c", "d"].map((label) => newCommandId(label)) as [string, string, string, string];
      const first = await store.commit([
        accepted(a, [event("thread:1", { n: 1 }), event("thread:2", { n: 2 })]),
        accepted(b),
        accepted(c, [event("thread:1", { n: 3 })]),
      ]);
      const second = await store.commit([accepted(d, [event("", { n: 4 }), event("thread:2", { n: 5 }), event("thread:1", { n: 6 })])]);

      expect(first.map((result) => sequencesOf(result.events))).toEqual([[1, 2], [], [3]]);
      expect(sequencesOf(second[0]!.events)).toEqual([4, 5, 6]);
      expect([...first, ...second].map((result) => result.duplicate)).toEqual([false, false, false, false]);
      expect(first.map((result) => result.receipt)).toMatchObject([
        { status: "accepted", commandId: a, sequence: 2, eventCount: 2 },
        { status: "accepted", commandId: b, sequence: 2, eventCount: 0 },
        { status: "accepted", commandId: c, sequence: 3, eventCount: 1 },
      ]);
      expect(second[0]!.receipt).toMatchObject({ commandId: d, sequence: 6, eventCount: 3 });
      expect(await store.lastSequence()).toBe(6);

      const log = await store.readAll(0);
      expect(sequencesOf(log)).toEqual(range(1, 6));
      expect(log.map((stored) => stored.commandId)).toEqual([a, a, c, d, d, d]);
      expect(log.map((stored) => stored.streamId)).toEqual(["thread:1", "thread:2", "thread:1", "", "thread:2", "thread:1"]);
      expect(log.map((stored) => stored.data)).toEqual([1, 2, 3, 4, 5, 6].map((n) => ({ n })));
      expect(new Set(log.map((stored) => stored.eventId)).size).toBe(6);
      for (const stored of log) {
        expect(stored.eventId).toMatch(/^event:[0-9a-f-]{36}$/);
        expect(stored.type).toBe("test.happened");
        expect(Number.isNaN(Date.parse(stored.occurredAt))).toBe(false);
      }
      expect([...first, ...second].flatMap((result) => result.events)).toEqual(log);
    });

    it("gives an accepted command without events the log position before it", async () => {
      const { store } = harness;
      const [empty] = await store.commit([accepted(newCommandId())]);
      expect(empty!.receipt).toMatchObject({ status: "accepted", sequence: 0, eventCount: 0 });
      expect(await store.lastSequence()).toBe(0);
    });

    it("stores receipts for lookup by commandId", async () => {
      const { store } = harness;
      const commandId = newCommandId();
      const [result] = await store.commit([accepted(commandId, [event("thread:1")])]);
      expect(await store.lookupReceipt(commandId)).toEqual(result!.receipt);
      expect(await store.lookupReceipt(commandId)).toEqual({
        status: "accepted",
        commandId,
        commandType: "test.command",
        sequence: 1,
        eventCount: 1,
        acceptedAt: "2025-01-01T00:00:00.000Z",
      });
      expect(await store.lookupReceipt("cmd:never-seen")).toBeNull();
    });

    it("answers a repeated commandId with the stored receipt and writes nothing", async () => {
      const { store } = harness;
      const commandId = newCommandId();
      const [original] = await store.commit([accepted(commandId, [event("thread:1")], [effect("run.start")])]);
      const [again, retriedAsRejection] = await store.commit([
        accepted(commandId, [event("thread:1", { other: true }), event("thread:2")], [effect("run.start"), effect("run.stop")]),
        rejected(commandId),
      ]);

      for (const repeat of [again!, retriedAsRejection!]) {
        expect(repeat.duplicate).toBe(true);
        expect(repeat.events).toEqual([]);
        expect(repeat.receipt).toEqual(original!.receipt);
      }
      expect(await store.lastSequence()).toBe(1);
      expect(await store.readAll(0)).toEqual(original!.events);
      expect(await store.listOutbox("pending")).toHaveLength(1);
    });

    it("treats a commandId repeated within one batch as a duplicate of the earlier entry", async () => {
      const { store } = harness;
      const repeated = newCommandId("repeated");
      const results = await store.commit([
        accepted(repeated, [event("thread:1", { first: true })], [effect("run.start")]),
        accepted(repeated, [event("thread:1", { second: true }), event("thread:1")], [effect("run.start")]),
        accepted(newCommandId(), [event("thread:2")]),
      ]);

      expect(results.map((result) => result.duplicate)).toEqual([false, true, false]);
      expect(results[1]!.receipt).toEqual(results[0]!.receipt);
      expect(results[1]!.events).toEqual([]);
      expect(sequencesOf(results[2]!.events)).toEqual([2]);
      expect((await store.readAll(0)).map((stored) => stored.data)).toEqual([{ first: true }, { n: 0 }]);
      expect(await store.listOutbox("pending")).toHaveLength(1);
      expect(await store.lookupReceipt(repeated)).toEqual(results[0]!.receipt);
    });

    it("stores a rejection, writes no events or effects for it, and returns it on retry", async () => {
      const { store } = harness;
      const commandId = newCommandId();
      const [refused] = await store.commit([rejected(commandId, "thread_missing", [event("thread:1")], [effect("run.start")])]);
      expect(refused).toEqual({
        receipt: {
          status: "rejected",
          commandId,
          commandType: "test.command",
          rejection: { code: "thread_missing", message: "refused: thread_missing" },
          rejectedAt: "2025-01-01T00:00:00.000Z",
        },
        events: [],
        duplicate: false,
      });
      expect(await store.lookupReceipt(commandId)).toEqual(refused!.receipt);

      const [retry] = await store.commit([accepted(commandId, [event("thread:1")], [effect("run.start")])]);
      expect(retry).toEqual({ receipt: refused!.receipt, events: [], duplicate: true });
      expect(await store.lastSequence()).toBe(0);
      expect(await store.readAll(0)).toEqual([]);
      expect(await store.listOutbox("pending")).toEqual([]);
    });

    it("commits an empty batch as a no-op", async () => {
      const { store } = harness;
      expect(await store.commit([])).toEqual([]);
      expect(await store.lastSequence()).toBe(0);
    });

    describe("a batch is atomic", () => {
      for (const [label, bad] of unserializableValues()) {
        it(`writes nothing from the batch when an event's data is ${label}`, async () => {
          const { store } = harness;
          await store.commit([accepted(newCommandId(), [event("thread:1")], [effect("kept")])]);
          const good = newCommandId("good");
          const poisoned = newCommandId("poisoned");

          await expect(
            store.commit([
              accepted(good, [event("thread:1", { ok: true })], [effect("lost")]),
              // Built literally: event()'s default would replace an undefined data.
              accepted(poisoned, [event("thread:1", { fine: 1 }), { type: "test.happened", streamId: "thread:1", data: bad }]),
            ]),
          ).rejects.toThrow();

          expect(await store.lastSequence()).toBe(1);
          expect(await store.readAll(0)).toHaveLength(1);
          expect(await store.lookupReceipt(good)).toBeNull();
          expect(await store.lookupReceipt(poisoned)).toBeNull();
          expect((await store.listOutbox("pending")).map((row) => row.kind)).toEqual(["kept"]);

          // Nothing was burnt: the retried command is new and the log stays gap-free.
          const [retried] = await store.commit([accepted(good, [event("thread:1", { ok: true })])]);
          expect(retried!.duplicate).toBe(false);
          expect(sequencesOf(retried!.events)).toEqual([2]);
          expect(sequencesOf(await store.readAll(0))).toEqual([1, 2]);
        });
      }

      it("writes nothing from the batch when an outbox payload cannot be serialized", async () => {
        const { store } = harness;
        const good = newCommandId("good");
        await expect(
          store.commit([accepted(good, [event("thread:1")]), accepted(newCommandId(), [event("thread:1")], [effect("bad", { big: 1n })])]),
        ).rejects.toThrow();
        expect(await store.lastSequence()).toBe(0);
        expect(await store.lookupReceipt(good)).toBeNull();
        expect(await store.listOutbox("pending")).toEqual([]);
      });
    });
  });
}

function describeReadContract(harness: StoreHarness): void {
  describe("reads", () => {
    it("readAll pages by after and limit", async () => {
      const { store } = harness;
      await commitMany(store, 25, "thread:1", 7);
      expect(sequencesOf(await store.readAll(0, 10))).toEqual(range(1, 10));
      expect(sequencesOf(await store.readAll(10, 10))).toEqual(range(11, 20));
      expect(sequencesOf(await store.readAll(20, 10))).toEqual(range(21, 25));
      expect(sequencesOf(await store.readAll(3))).toEqual(range(4, 25));
      expect(await store.readAll(25)).toEqual([]);
      expect(await store.readAll(0, 0)).toEqual([]);
    });

    it("readAll returns at most DEFAULT_READ_LIMIT events when no limit is given", async () => {
      const { store } = harness;
      await commitMany(store, DEFAULT_READ_LIMIT + 3, "thread:1", 2_000);
      const page = await store.readAll(0);
      expect(page).toHaveLength(DEFAULT_READ_LIMIT);
      expect(page[DEFAULT_READ_LIMIT - 1]!.sequence).toBe(DEFAULT_READ_LIMIT);
      expect(sequencesOf(await store.readAll(DEFAULT_READ_LIMIT))).toEqual(range(DEFAULT_READ_LIMIT + 1, DEFAULT_READ_LIMIT + 3));
    });

    it("readStream returns one stream's events in order, after a sequence", async () => {
      const { store } = harness;
      await store.commit([
        accepted(newCommandId(), [event("thread:a"), event("thread:b"), event("")]),
        accepted(newCommandId(), [event("thread:a"), event("thread:a")]),
        accepted(newCommandId(), [event("thread:b"), event("thread:a")]),
      ]);
      expect(sequencesOf(await store.readStream("thread:a"))).toEqual([1, 4, 5, 7]);
      expect(sequencesOf(await store.readStream("thread:a", 4))).toEqual([5, 7]);
      expect(sequencesOf(await store.readStream("thread:b"))).toEqual([2, 6]);
      expect(sequencesOf(await store.readStream(""))).toEqual([3]);
      expect(await store.readStream("thread:none")).toEqual([]);
      expect((await store.readStream("thread:a")).every((stored) => stored.streamId === "thread:a")).toBe(true);
    });

    it("returns event data as its JSON round trip, detached from the caller's object", async () => {
      const { store } = harness;
      const data = { text: "héllo ✓", list: [1, "two", null, { deep: [true] }], nothing: null, dropped: undefined };
      const [result] = await store.commit([accepted(newCommandId(), [event("thread:1", data)])]);
      data.list.push("mutated after commit");
      const expected = { text: "héllo ✓", list: [1, "two", null, { deep: [true] }], nothing: null };
      expect(result!.events[0]!.data).toEqual(expected);
      expect(result!.events[0]!.data).not.toHaveProperty("dropped");
      expect((await store.readAll(0))[0]!.data).toEqual(expected);
      expect((await store.readStream("thread:1"))[0]!.data).toEqual(expected);
    });

    it("answers every call once closed with store_closed, the synchronous reads included, and closing twice is harmless", async () => {
      const { store } = harness;
      const commandId = newCommandId();
      await store.commit([accepted(commandId, [event("thread:1")])]);
      // Started as close begins: each may still answer, or fail as closed (a lookup batched for the next tick), never otherwise.
      const inFlight = [store.lookupReceipt(commandId), store.readAll(0), store.lastSequence(), store.readTurnItems("thread:1")];
      await store.close();
      await store.close();
      const closed = { name: "StoreError", code: "store_closed" };
      for (const call of inFlight) {
        const error: unknown = await call.then(
          () => null,
          (failure: unknown) => failure,
        );
        if (error !== null) expect(error).toMatchObject(closed);
      }
      const calls: readonly [string, () => Promise<unknown>][] = [
        ["commit", () => store.commit([accepted(newCommandId(), [event("thread:1")])])],
        ["commitDecided", () => store.commitDecided({ after: 0, commandIds: [], decide: () => [] })],
        ["readAll", () => store.readAll(0)],
        ["readStream", () => store.readStream("thread:1")],
        ["lastSequence", () => store.lastSequence()],
        ["lookupReceipt", () => store.lookupReceipt(commandId)],
        ["claimOutbox", () => store.claimOutbox({ owner: "w", now: 0, leaseMs: 1_000, limit: 1 })],
        ["completeOutbox", () => store.completeOutbox("outbox:x", "w")],
        ["renewOutbox", () => store.renewOutbox("outbox:x", "w", 0, 1_000)],
        ["failOutbox", () => store.failOutbox("outbox:x", "w", "e", null)],
        ["abandonOutbox", () => store.abandonOutbox("outbox:x", "e")],
        ["listOutbox", () => store.listOutbox("pending")],
        ["saveSnapshot", () => store.saveSnapshot({ version: "v", sequence: 0, body: new Uint8Array() })],
        ["loadSnapshot", () => store.loadSnapshot("v")],
        ["readTurnItems", () => store.readTurnItems("thread:1")],
      ];
      for (const [name, call] of calls) await expect(call(), name).rejects.toMatchObject(closed);
      expect(() => store.subscribe(0, () => undefined)).toThrow(expect.objectContaining(closed));
      const reader = store.turnItems;
      if (reader !== null) {
        expect(() => reader.threadItems("thread:1")).toThrow(expect.objectContaining(closed));
        expect(() => reader.threadOfItem("turn-item:x")).toThrow(expect.objectContaining(closed));
        expect(() => reader.readBesideItems(0, 10)).toThrow(expect.objectContaining(closed));
      }
    });
  });
}

function describeDurabilityContract(harness: StoreHarness): void {
  describe("durability (backends that can reopen)", () => {
    it("keeps events, receipts and outbox rows across close and reopen, and continues the sequence", async () => {
      const first = harness.store;
      const acceptedId = newCommandId("kept");
      const rejectedId = newCommandId("refused");
      const [kept, refused] = await first.commit([
        accepted(acceptedId, [event("thread:1", { n: 1 }), event("thread:2", { n: 2 })], [effect("run.start", { run: 1 }), effect("run.stop")]),
        rejected(rejectedId),
      ]);
      const availableAt = (await first.listOutbox("pending"))[0]!.availableAt;
      const [leased] = await first.claimOutbox({ owner: "worker-a", now: availableAt, leaseMs: 60_000, limit: 1 });
      const logBefore = await first.readAll(0);
      const pendingBefore = await first.listOutbox("pending");

      const second = await harness.reopen();
      expect(await second.lastSequence()).toBe(2);
      expect(await second.readAll(0)).toEqual(logBefore);
      expect(await second.readStream("thread:2")).toEqual([logBefore[1]]);
      expect(await second.lookupReceipt(acceptedId)).toEqual(kept!.receipt);
      expect(await second.lookupReceipt(rejectedId)).toEqual(refused!.receipt);
      expect(await second.listOutbox("leased")).toEqual([leased]);
      expect(await second.listOutbox("pending")).toEqual(pendingBefore);
      expect(await second.completeOutbox(leased!.id, "worker-a")).toBe(true);

      const [repeat, next] = await second.commit([accepted(acceptedId, [event("thread:1")]), accepted(newCommandId(), [event("thread:1")])]);
      expect(repeat).toEqual({ receipt: kept!.receipt, events: [], duplicate: true });
      expect(sequencesOf(next!.events)).toEqual([3]);
    });

    it("replays the stored log to a subscriber after reopening", async () => {
      await commitMany(harness.store, 150, "thread:1", 40);
      const reopened = await harness.reopen();
      const seen: number[] = [];
      const subscription = reopened.subscribe(100, (stored) => seen.push(stored.sequence));
      expect(await subscription.caughtUp).toBe(150);
      expect(seen).toEqual(range(101, 150));
      subscription.close();
    });
  });
}
