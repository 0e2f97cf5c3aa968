import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Orchestrator } from "../engine/orchestrator.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import { SimScheduler, WORLD } from "../testkit/sim/scheduler.js";
import { SHUTTING_DOWN_MESSAGE, toFailure } from "./errors.js";
import { UNOBSERVED_WAIT, type WaitHost, waitUntil } from "./waits.js";

/**
 * A wait's check reads the timeline, which reads the store for a thread whose
 * items are not in memory. When the store closes under a wait (the server
 * stopping), that read throws in the wait's own timer callback: the wait must
 * reject with the store's error, answered as the server shutting down, and
 * nothing may escape the callback. A real SQLite file; virtual timers.
 */

let dir: string | null = null;
afterEach(() => {
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

async function openHost(progressIntervalMs: number): Promise<{ host: WaitHost; scheduler: SimScheduler; store: SqliteEventStore }> {
  dir = mkdtempSync(join(tmpdir(), "loom-waits-"));
  const store = SqliteEventStore.open(join(dir, "loom.sqlite"));
  const scheduler = new SimScheduler();
  // hotThreads 0: no thread's items stay in memory, so every timeline read goes to the store.
  const orchestrator = await Orchestrator.open({ store, clock: scheduler.clock, hotThreads: 0, snapshotEvery: null });
  return { host: { orchestrator, clock: scheduler.clock, timers: scheduler.timers(WORLD), progressIntervalMs }, scheduler, store };
}

describe("a wait whose store closes under it", () => {
  for (const [callback, progressIntervalMs] of [
    ["timeout", 60_000],
    ["progress report", 1_000],
  ] as const) {
    it(`rejects with store_closed from its ${callback} callback, answered as shutting down, and throws nothing out of the callback`, async () => {
      const { host, scheduler, store } = await openHost(progressIntervalMs);
      const threadId = "thread:never-written";
      const reads = () => host.orchestrator.timeline.items(threadId).length > 0;
      const waiting = waitUntil(host, UNOBSERVED_WAIT, 10_000, reads, () => `${host.orchestrator.timeline.items(threadId).length} items`);
      let outcome: unknown = "pending";
      waiting.then(
        (value) => (outcome = value),
        (error: unknown) => (outcome = error),
      );
      await store.close();
      expect(() => scheduler.runNext()).not.toThrow();
      await expect(waiting).rejects.toMatchObject({ code: "store_closed" });
      expect(toFailure(outcome)).toMatchObject({ code: "orchestration_error", message: SHUTTING_DOWN_MESSAGE, retryable: true });
      // Its timers are gone with it: nothing is left to fire.
      expect(scheduler.nextAt()).toBeNull();
    });
  }
});
