import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoredEvent } from "../contracts/envelopes.js";
import { toDomainEvent } from "../contracts/events.js";
import { type OrchestrationState, evolve, initialState } from "../core/state.js";
import type { EventStore } from "../store/eventStore.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import { runSeed } from "../testkit/sim/runner.js";
import { HotTurnItems } from "./hotTurnItems.js";
import { restore } from "./restore.js";
import { STATE_SNAPSHOT_VERSION, encodeState } from "./stateSnapshot.js";
import { ThreadIndex } from "./threadIndex.js";

/**
 * Start-up from a snapshot skips the tail's `turn-item.updated` events (the
 * store's turn items read model already holds their items) and folds every
 * other event. On simulator logs (threads, runs, attempts, delegations,
 * waits, crashes) copied into a memory store and a real SQLite file, a
 * snapshot cut anywhere plus the restored tail reaches exactly the full
 * replay's state: every field but the item caches compared whole, and every
 * thread's items and every item's thread read back through the caches.
 */

function foldStored(events: readonly StoredEvent[], into: OrchestrationState = initialState()): OrchestrationState {
  for (const stored of events) {
    evolve(into, toDomainEvent(stored));
    into.lastSequence = stored.sequence;
  }
  return into;
}

/** The state without its item maps, which a store-backed state holds as caches. */
function withoutItems(state: OrchestrationState): Record<string, unknown> {
  const { turnItems: _items, itemThreads: _threads, ...rest } = state;
  return rest;
}

/** The thread lists as a fold leaves them: every list's ids, newest first. */
function lists(index: ThreadIndex): string[] {
  return [...index.unarchived.newestFirst()].map((entry) => entry.id).concat([...index.pinned].sort());
}

const dir = mkdtempSync(join(tmpdir(), "loom-restore-items-"));
const logs: StoredEvent[][] = [];
let files = 0;

beforeAll(async () => {
  for (const seed of [5, 13]) logs.push([...(await runSeed({ seed, store: "memory" })).log]);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh store holding the log (a store keeps one snapshot and never goes back to an earlier one). */
async function storeWith(kind: "memory" | "sqlite", log: readonly StoredEvent[]): Promise<EventStore> {
  const store = kind === "memory" ? new MemoryEventStore() : SqliteEventStore.open(join(dir, `log-${files++}.db`));
  const events = log.map(({ type, streamId, data }) => ({ type, streamId, data }));
  await store.commit([{ receipt: { status: "accepted", commandId: "cmd:copy", commandType: "test.copy", acceptedAt: "2026-01-01T00:00:00.000Z" }, events, outbox: [] }]);
  return store;
}

describe("restore beside the turn items", () => {
  it("has simulator logs with item events among runs, attempts and delegations", () => {
    for (const log of logs) {
      const types = new Set(log.map((event) => event.type));
      expect([...types]).toEqual(expect.arrayContaining(["turn-item.updated", "run.created", "run-attempt.updated", "thread.created"]));
      expect(log.map((event) => event.sequence)).toEqual(log.map((_, i) => i + 1));
    }
  });

  for (const kind of ["memory", "sqlite"] as const) {
    it(`reaches the full replay's state from a snapshot cut anywhere (${kind} store)`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.nat(logs.length - 1), fc.double({ min: 0, max: 1, noNaN: true }), async (which, at) => {
          const log = logs[which]!;
          const store = await storeWith(kind, log);
          const cut = Math.floor(at * log.length);
          // The snapshot a store-backed orchestrator saves: no items in it.
          const head = foldStored(log.slice(0, cut));
          await store.saveSnapshot({ version: STATE_SNAPSHOT_VERSION, sequence: cut, body: encodeState({ ...head, turnItems: new Map(), itemThreads: new Map() }) });

          const restored = await restore(store, { hotThreads: 0 });
          const full = foldStored(log);
          expect(restored.report).toEqual({ snapshotSequence: cut, replayed: log.length - cut, discarded: null });
          expect(restored.state.turnItems).toBeInstanceOf(HotTurnItems);
          // The tail's item events were skipped, not folded: no item is in memory yet.
          expect(restored.state.turnItems.size).toBe(0);
          expect(withoutItems(restored.state)).toStrictEqual(withoutItems(full));
          expect(lists(restored.index)).toEqual(lists(ThreadIndex.of(full.threads.values())));
          for (const [threadId, items] of full.turnItems) expect(restored.state.turnItems.get(threadId)).toStrictEqual(items);
          for (const [itemId, threadId] of full.itemThreads) expect(restored.state.itemThreads.get(itemId)).toBe(threadId);
          await store.close();
        }),
        { numRuns: 15 },
      );
    }, 120_000);
  }
});
