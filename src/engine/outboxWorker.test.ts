import { describe, expect, it } from "vitest";
import type { OutboxRow } from "../contracts/envelopes.js";
import type { OutboxClaim } from "../store/eventStore.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { OutboxWorker } from "./outboxWorker.js";

describe("OutboxWorker.stop", () => {
  it("waits for the effects of a claim that was in flight when it was called", async () => {
    const store = new MemoryEventStore();
    await store.commit([
      {
        receipt: { status: "accepted", commandId: "cmd:1", commandType: "test", acceptedAt: new Date(0).toISOString() },
        events: [],
        outbox: [{ kind: "test.effect", streamId: "thread:a", payload: {}, replaySafe: false }],
      },
    ]);
    // The claim answers only after stop() was called.
    let releaseClaim = () => undefined as void;
    const claimGate = new Promise<void>((resolve) => (releaseClaim = resolve));
    const claim = store.claimOutbox.bind(store);
    store.claimOutbox = async (c: OutboxClaim) => {
      await claimGate;
      return claim(c);
    };
    const ran: string[] = [];
    const worker = new OutboxWorker({
      store,
      owner: "test",
      handlers: new Map([["test.effect", (row: OutboxRow) => Promise.resolve(void ran.push(row.id))]]),
    });
    worker.start();
    const stopped = worker.stop();
    releaseClaim();
    await stopped;
    const afterStop = [...ran];
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(afterStop).toEqual(ran);
    expect(ran).toHaveLength(1);
  });
});
