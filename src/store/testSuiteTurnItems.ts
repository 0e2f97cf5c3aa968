import { describe, expect, it } from "vitest";
import type { NewEvent } from "../contracts/envelopes.js";
import type { TurnItem } from "../contracts/turnItems.js";
import type { EventStore } from "./eventStore.js";
import type { BackendFeatures } from "./testSuite.js";
import { accepted, newCommandId, rejected, type StoreHarness } from "./testSuiteFixtures.js";

/** A turn item as the store sees it: JSON with a thread, a position and an id (the store never looks further). */
function item(threadId: string, position: number, text: string, id = `item:${threadId}:${position}`): TurnItem {
  return { id, threadId, position, runId: null, type: "assistant_message", text, createdAt: "2025-01-01T00:00:00.000Z" } as unknown as TurnItem;
}

function itemEvent(value: TurnItem): NewEvent {
  return { type: "turn-item.updated", streamId: value.threadId, data: { item: value } };
}

function texts(items: readonly (TurnItem | undefined)[]): (string | null)[] {
  return items.map((value) => (value === undefined ? null : (value as unknown as { text: string }).text));
}

/** The async read and, where the backend has one, the synchronous reader must agree. */
async function expectItems(store: EventStore, threadId: string, expected: (string | null)[]): Promise<void> {
  expect(texts(await store.readTurnItems(threadId))).toEqual(expected.filter((text) => text !== null));
  if (store.turnItems !== null) expect(texts(Array.from(store.turnItems.threadItems(threadId)))).toEqual(expected);
}

/** Turn items' read model cases of the EventStore contract (readTurnItems / turnItems). */
export function describeTurnItemsContract(harness: StoreHarness, features: BackendFeatures): void {
  describe("turn items read model", () => {
    it("has no items for a thread that has none", async () => {
      await expectItems(harness.store, "thread:none", []);
      expect(harness.store.turnItems?.threadOfItem("item:none") ?? null).toBeNull();
    });

    it("keeps each position's latest version, ascending by position, per thread", async () => {
      const store = harness.store;
      await store.commit([accepted(newCommandId(), [itemEvent(item("thread:a", 1, "a1")), itemEvent(item("thread:b", 0, "b0"))])]);
      await store.commit([accepted(newCommandId(), [itemEvent(item("thread:a", 0, "a0")), itemEvent(item("thread:a", 1, "a1 again"))])]);
      // Two versions of one position in one batch, even in one entry: the last one wins.
      await store.commit([
        accepted(newCommandId(), [itemEvent(item("thread:a", 2, "a2 first")), itemEvent(item("thread:a", 2, "a2 second"))]),
        accepted(newCommandId(), [itemEvent(item("thread:a", 2, "a2 last"))]),
      ]);
      await expectItems(store, "thread:a", ["a0", "a1 again", "a2 last"]);
      await expectItems(store, "thread:b", ["b0"]);
      expect(store.turnItems?.threadOfItem("item:thread:a:1") ?? "thread:a").toBe("thread:a");
      expect(store.turnItems?.threadOfItem("item:thread:b:0") ?? "thread:b").toBe("thread:b");
    });

    it("keeps a hole where a position has no item", async () => {
      await harness.store.commit([accepted(newCommandId(), [itemEvent(item("thread:h", 0, "h0")), itemEvent(item("thread:h", 2, "h2"))])]);
      await expectItems(harness.store, "thread:h", ["h0", null, "h2"]);
    });

    it("keeps nothing from rejected, duplicate or failed entries, nor from other event types", async () => {
      const store = harness.store;
      const commandId = newCommandId();
      await store.commit([accepted(commandId, [itemEvent(item("thread:d", 0, "kept"))])]);
      await store.commit([accepted(commandId, [itemEvent(item("thread:d", 0, "duplicate"))]), rejected(newCommandId(), "refused", [itemEvent(item("thread:d", 1, "rejected"))])]);
      await expect(
        store.commit([accepted(newCommandId(), [itemEvent(item("thread:d", 2, "failed"))]), accepted(newCommandId(), [{ type: "test.happened", streamId: "thread:d", data: { big: 1n } }])]),
      ).rejects.toThrow();
      await store.commit([accepted(newCommandId(), [{ type: "test.happened", streamId: "thread:d", data: { item: item("thread:d", 3, "not an item event") } }])]);
      await expectItems(store, "thread:d", ["kept"]);
    });

    it("keeps the items of a decided commit", async () => {
      const store = harness.store;
      await store.commitDecided({ after: 0, commandIds: [], decide: () => [accepted(newCommandId(), [itemEvent(item("thread:c", 0, "decided"))])] });
      await expectItems(store, "thread:c", ["decided"]);
    });

    it("pages the log beside the items: item events covered, counted and left out, every other event whole", async () => {
      const store = harness.store;
      const reader = store.turnItems;
      if (reader === null) return;
      await store.commit([accepted(newCommandId(), [{ type: "test.happened", streamId: "thread:l", data: { n: 1 } }, itemEvent(item("thread:l", 0, "l0"))])]);
      await store.commit([accepted(newCommandId(), [itemEvent(item("thread:l", 1, "l1")), itemEvent(item("thread:l", 1, "l1 again")), { type: "test.happened", streamId: "thread:l", data: { n: 2 } }, itemEvent(item("thread:l", 2, "l2"))])]);
      const log = await store.readAll(0);
      const head = log[log.length - 1]!.sequence;
      const first = reader.readBesideItems(0, 4);
      expect(first).toEqual({ events: [log[0]], through: log[3]!.sequence, covered: 4 });
      const second = reader.readBesideItems(first.through, 4);
      expect(second).toEqual({ events: log.slice(4).filter((event) => event.type !== "turn-item.updated"), through: head, covered: log.length - 4 });
      expect(second.events.map((event) => event.data)).toEqual([{ n: 2 }]);
      expect(reader.readBesideItems(head, 4)).toEqual({ events: [], through: head, covered: 0 });
    });

    if (features.durable) {
      it("keeps the items across close and reopen", async () => {
        await harness.store.commit([accepted(newCommandId(), [itemEvent(item("thread:r", 0, "r0")), itemEvent(item("thread:r", 1, "r1"))])]);
        const second = await harness.reopen();
        await expectItems(second, "thread:r", ["r0", "r1"]);
      });
    }

    if (features.peers) {
      it("shows one writer's items to another store on the same database", async () => {
        await harness.store.commit([accepted(newCommandId(), [itemEvent(item("thread:p", 0, "p0"))])]);
        const peer = await harness.openPeer();
        await expectItems(peer, "thread:p", ["p0"]);
      });
    }
  });
}
