import { describe, expect, it } from "vitest";
import type { OutboxRow } from "../contracts/envelopes.js";
import type { EventStore } from "./eventStore.js";
import { accepted, effect, event, newCommandId, type StoreHarness } from "./testSuiteFixtures.js";

/**
 * Outbox part of the EventStore contract. Times are derived from the
 * `availableAt` the store stamped at commit, so the cases hold for any clock.
 */
export function describeOutboxContract(harness: StoreHarness): void {
  describe("outbox", () => {
    /** Commit one command with effects of the given kinds; returns its rows and their commit time. */
    async function commitEffects(store: EventStore, kinds: readonly string[]): Promise<{ rows: OutboxRow[]; t0: number; commandId: string }> {
      const commandId = newCommandId("effects");
      await store.commit([
        accepted(
          commandId,
          [event("thread:1")],
          kinds.map((kind, index) => effect(kind, { index }, `thread:${index}`, index % 2 === 0)),
        ),
      ]);
      const rows = (await store.listOutbox("pending")).filter((row) => row.commandId === commandId);
      return { rows, t0: rows[0]!.availableAt, commandId };
    }

    it("stores effects as pending rows in creation order", async () => {
      const { store } = harness;
      const { rows, commandId } = await commitEffects(store, ["run.start", "run.steer", "checkpoint.capture"]);
      expect(rows.map((row) => row.kind)).toEqual(["run.start", "run.steer", "checkpoint.capture"]);
      expect(new Set(rows.map((row) => row.id)).size).toBe(3);
      rows.forEach((row, index) => {
        expect(row.id).toMatch(/^outbox:[0-9a-f-]{36}$/);
        expect(row).toMatchObject({
          commandId,
          streamId: `thread:${index}`,
          payload: { index },
          replaySafe: index % 2 === 0,
          status: "pending",
          attempts: 0,
          leaseOwner: null,
          leaseExpiresAt: null,
          lastError: null,
        });
        expect(Number.isNaN(Date.parse(row.createdAt))).toBe(false);
      });
      expect(await store.listOutbox("leased")).toEqual([]);
    });

    it("leases claimable rows oldest first, up to the limit, and not before availableAt", async () => {
      const { store } = harness;
      const { rows, t0 } = await commitEffects(store, ["a", "b", "c"]);
      expect(await store.claimOutbox({ owner: "w1", now: t0 - 1, leaseMs: 1_000, limit: 10 })).toEqual([]);
      expect(await store.claimOutbox({ owner: "w1", now: t0, leaseMs: 1_000, limit: 0 })).toEqual([]);

      const claimed = await store.claimOutbox({ owner: "w1", now: t0, leaseMs: 1_000, limit: 2 });
      expect(claimed.map((row) => row.id)).toEqual([rows[0]!.id, rows[1]!.id]);
      for (const row of claimed) {
        expect(row).toMatchObject({ status: "leased", leaseOwner: "w1", leaseExpiresAt: t0 + 1_000, attempts: 1 });
      }
      expect(await store.listOutbox("leased")).toEqual(claimed);
      expect((await store.listOutbox("pending")).map((row) => row.id)).toEqual([rows[2]!.id]);

      // A leased row is not claimable again while its lease runs.
      const rest = await store.claimOutbox({ owner: "w2", now: t0 + 999, leaseMs: 1_000, limit: 10 });
      expect(rest.map((row) => row.id)).toEqual([rows[2]!.id]);
      expect(rest[0]!.leaseOwner).toBe("w2");
    });

    it("completes a row only for the owner of its lease", async () => {
      const { store } = harness;
      const { rows, t0 } = await commitEffects(store, ["a"]);
      const id = rows[0]!.id;
      expect(await store.completeOutbox(id, "w1")).toBe(false); // pending, not leased
      await store.claimOutbox({ owner: "w1", now: t0, leaseMs: 1_000, limit: 1 });

      expect(await store.completeOutbox(id, "intruder")).toBe(false);
      expect((await store.listOutbox("leased")).map((row) => row.id)).toEqual([id]);

      expect(await store.completeOutbox(id, "w1")).toBe(true);
      const [done] = await store.listOutbox("done");
      expect(done).toMatchObject({ id, status: "done", attempts: 1 });
      expect(await store.listOutbox("leased")).toEqual([]);
      expect(await store.completeOutbox(id, "w1")).toBe(false);
      expect(await store.claimOutbox({ owner: "w2", now: t0 + 10_000, leaseMs: 1_000, limit: 10 })).toEqual([]);
    });

    it("returns a failed attempt to pending until retryAt, then lets it be claimed again", async () => {
      const { store } = harness;
      const { rows, t0 } = await commitEffects(store, ["a"]);
      const id = rows[0]!.id;
      await store.claimOutbox({ owner: "w1", now: t0, leaseMs: 1_000, limit: 1 });
      expect(await store.failOutbox(id, "intruder", "nope", t0 + 500)).toBe(false);

      expect(await store.failOutbox(id, "w1", "provider busy", t0 + 500)).toBe(true);
      const [pending] = await store.listOutbox("pending");
      expect(pending).toMatchObject({
        id,
        status: "pending",
        availableAt: t0 + 500,
        attempts: 1,
        leaseOwner: null,
        leaseExpiresAt: null,
        lastError: "provider busy",
      });
      expect(await store.failOutbox(id, "w1", "again", t0 + 600)).toBe(false); // lease was released

      expect(await store.claimOutbox({ owner: "w2", now: t0 + 499, leaseMs: 1_000, limit: 1 })).toEqual([]);
      const [retry] = await store.claimOutbox({ owner: "w2", now: t0 + 500, leaseMs: 1_000, limit: 1 });
      expect(retry).toMatchObject({ id, status: "leased", leaseOwner: "w2", attempts: 2, lastError: "provider busy" });
    });

    it("fails a row for good when no retry time is given", async () => {
      const { store } = harness;
      const { rows, t0 } = await commitEffects(store, ["a", "b"]);
      await store.claimOutbox({ owner: "w1", now: t0, leaseMs: 1_000, limit: 1 });

      expect(await store.failOutbox(rows[0]!.id, "w1", "fatal", null)).toBe(true);
      expect(await store.listOutbox("failed")).toEqual([
        expect.objectContaining({ id: rows[0]!.id, status: "failed", lastError: "fatal", leaseOwner: null, leaseExpiresAt: null }),
      ]);
      const later = await store.claimOutbox({ owner: "w2", now: t0 + 1_000_000, leaseMs: 1_000, limit: 10 });
      expect(later.map((row) => row.id)).toEqual([rows[1]!.id]);
      expect(await store.completeOutbox(rows[0]!.id, "w1")).toBe(false);
    });

    it("abandons pending and leased rows whoever holds them, but never a finished one", async () => {
      const { store } = harness;
      const { rows, t0 } = await commitEffects(store, ["a", "b", "c"]);
      await store.claimOutbox({ owner: "dead", now: t0, leaseMs: 60_000, limit: 2 });
      await store.completeOutbox(rows[1]!.id, "dead");

      expect(await store.abandonOutbox(rows[0]!.id, "lost")).toBe(true); // leased by a dead owner
      expect(await store.abandonOutbox(rows[1]!.id, "lost")).toBe(false); // already done
      expect(await store.abandonOutbox(rows[2]!.id, "lost")).toBe(true); // pending
      expect(await store.abandonOutbox(rows[2]!.id, "lost")).toBe(false); // already failed
      expect((await store.listOutbox("failed")).map((row) => [row.id, row.lastError, row.leaseOwner])).toEqual([
        [rows[0]!.id, "lost", null],
        [rows[2]!.id, "lost", null],
      ]);
      expect(await store.claimOutbox({ owner: "next", now: t0 + 10_000_000, leaseMs: 1, limit: 10 })).toEqual([]);
      expect(await store.completeOutbox(rows[0]!.id, "dead")).toBe(false);
    });

    it("lets another owner take over an expired lease; the old owner then cannot finish it", async () => {
      const { store } = harness;
      const { rows, t0 } = await commitEffects(store, ["a"]);
      const id = rows[0]!.id;
      await store.claimOutbox({ owner: "crashed", now: t0, leaseMs: 100, limit: 1 });

      expect(await store.claimOutbox({ owner: "rescuer", now: t0 + 99, leaseMs: 100, limit: 1 })).toEqual([]);
      const [takenOver] = await store.claimOutbox({ owner: "rescuer", now: t0 + 100, leaseMs: 100, limit: 1 });
      expect(takenOver).toMatchObject({ id, leaseOwner: "rescuer", leaseExpiresAt: t0 + 200, attempts: 2 });

      expect(await store.completeOutbox(id, "crashed")).toBe(false);
      expect(await store.failOutbox(id, "crashed", "late", null)).toBe(false);
      expect(await store.completeOutbox(id, "rescuer")).toBe(true);
    });

    it("renews a lease only for its owner, so a heartbeat keeps a long effect from being claimed twice", async () => {
      const { store } = harness;
      const { rows, t0 } = await commitEffects(store, ["long"]);
      const id = rows[0]!.id;
      await store.claimOutbox({ owner: "worker", now: t0, leaseMs: 100, limit: 1 });

      expect(await store.renewOutbox(id, "worker", t0 + 90, 100)).toBe(true);
      expect(await store.claimOutbox({ owner: "other", now: t0 + 150, leaseMs: 100, limit: 1 })).toEqual([]);
      expect(await store.renewOutbox(id, "other", t0 + 150, 100)).toBe(false);
      const [leased] = await store.listOutbox("leased");
      expect(leased).toMatchObject({ id, leaseOwner: "worker", leaseExpiresAt: t0 + 190 });

      // Without a heartbeat the lease lapses and another owner takes over; the old one can no longer renew.
      expect(await store.claimOutbox({ owner: "other", now: t0 + 190, leaseMs: 100, limit: 1 })).toHaveLength(1);
      expect(await store.renewOutbox(id, "worker", t0 + 195, 100)).toBe(false);
      expect(await store.completeOutbox(id, "other")).toBe(true);
      expect(await store.renewOutbox(id, "other", t0 + 200, 100)).toBe(false);
    });

    it("claims only the requested kinds", async () => {
      const { store } = harness;
      const { rows, t0 } = await commitEffects(store, ["run.start", "checkpoint.capture", "run.start", "run.steer"]);
      const starts = await store.claimOutbox({ owner: "w1", now: t0, leaseMs: 1_000, limit: 10, kinds: ["run.start"] });
      expect(starts.map((row) => row.id)).toEqual([rows[0]!.id, rows[2]!.id]);

      const two = await store.claimOutbox({ owner: "w1", now: t0, leaseMs: 1_000, limit: 10, kinds: ["run.steer", "checkpoint.capture"] });
      expect(two.map((row) => row.id)).toEqual([rows[1]!.id, rows[3]!.id]);
      expect(await store.claimOutbox({ owner: "w1", now: t0, leaseMs: 1_000, limit: 10, kinds: [] })).toEqual([]);
      expect(await store.listOutbox("pending")).toEqual([]);
    });

    it("leaves the rows of skipped streams to others", async () => {
      const { store } = harness;
      const { rows, t0 } = await commitEffects(store, ["a", "b", "c"]);
      const mine = await store.claimOutbox({ owner: "w1", now: t0, leaseMs: 1_000, limit: 10, skipStreams: ["thread:1", "thread:2"] });
      expect(mine.map((row) => row.id)).toEqual([rows[0]!.id]);
      const rest = await store.claimOutbox({ owner: "w2", now: t0, leaseMs: 1_000, limit: 10, skipStreams: [] });
      expect(rest.map((row) => row.id)).toEqual([rows[1]!.id, rows[2]!.id]);
    });

    it("writes outbox rows only for commands that were committed", async () => {
      const { store } = harness;
      const { commandId } = await commitEffects(store, ["a"]);
      await store.commit([accepted(commandId, [], [effect("again")])]);
      expect((await store.listOutbox("pending")).map((row) => row.kind)).toEqual(["a"]);
    });
  });
}
