import { describe, expect, it } from "vitest";
import type { EventListener, Subscription } from "../store/eventStore.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { Orchestrator } from "./orchestrator.js";

/**
 * `Orchestrator.open` resolves once the orchestrator follows the log live.
 * Until its tail subscription has replayed, every commit would only queue in
 * the subscription's buffer; a burst of commands that never lets the event
 * loop turn (each commit resolving through microtasks) kept every event of
 * the burst in memory that way (docs/benchmarks.md, "Core").
 */

/** A store whose log subscriptions fail their replay, as a read of a broken database would. */
class UnreadableTailStore extends MemoryEventStore {
  override subscribe(after: number, listener: EventListener): Subscription {
    const subscription = super.subscribe(after, listener);
    subscription.close();
    const caughtUp = Promise.reject(new Error("the log could not be read"));
    caughtUp.catch(() => undefined);
    return { caughtUp, close: () => subscription.close() };
  }
}

describe("opening an orchestrator", () => {
  it("resolves with its tail live: commits reach followers as each one returns", async () => {
    const orchestrator = await Orchestrator.open({ store: new MemoryEventStore() });
    const seen: number[] = [];
    const follower = orchestrator.follow(0, (event) => seen.push(event.sequence));
    await follower.caughtUp;
    const receipts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => orchestrator.dispatch({ type: "thread.create", commandId: `cmd:create:${i}`, data: { threadId: `thread:${i}`, projectId: "p", title: `T${i}` } })),
    );
    expect(receipts.every((receipt) => receipt.status === "accepted")).toBe(true);
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    await orchestrator.close();
  });

  it("fails when it cannot follow the log, instead of running without its tail", async () => {
    await expect(Orchestrator.open({ store: new UnreadableTailStore() })).rejects.toThrow("the log could not be read");
  });
});
