import { describe, expect, it } from "vitest";
import { eventStoreContract } from "../testSuite.js";
import { accepted, effect, event, newCommandId } from "../testSuiteFixtures.js";
import { MemoryEventStore } from "./memoryEventStore.js";

// A small replay page makes the contract's replay/live races span many pages.
eventStoreContract("memory", () =>
  Promise.resolve({
    store: new MemoryEventStore({ replayPageSize: 64 }),
    cleanup: () => Promise.resolve(),
  }),
  { durable: false, peers: false },
);

describe("MemoryEventStore", () => {
  it("stamps events and outbox rows with the injected clock and id source", async () => {
    let ids = 0;
    const store = new MemoryEventStore({ clock: () => Date.UTC(2030, 0, 2, 3, 4, 5), newId: () => `id-${++ids}` });
    const [result] = await store.commit([accepted(newCommandId(), [event("thread:1")], [effect("run.start")])]);
    expect(result!.events[0]).toMatchObject({ eventId: "event:id-1", occurredAt: "2030-01-02T03:04:05.000Z" });
    expect(await store.listOutbox("pending")).toEqual([
      expect.objectContaining({ id: "outbox:id-2", availableAt: Date.UTC(2030, 0, 2, 3, 4, 5), createdAt: "2030-01-02T03:04:05.000Z" }),
    ]);
    await store.close();
  });

  it("hands out copies of outbox rows, so callers cannot change the table", async () => {
    const store = new MemoryEventStore();
    await store.commit([accepted(newCommandId(), [], [effect("run.start")])]);
    const [row] = await store.listOutbox("pending");
    (row as { status: string }).status = "done";
    expect((await store.listOutbox("pending")).map((pending) => pending.id)).toEqual([row!.id]);
    await store.close();
  });
});
