import { describe, expect, it } from "vitest";
import type { BackendFeatures } from "./testSuite.js";
import { commitMany, type StoreHarness } from "./testSuiteFixtures.js";
import { StoreErrorCode } from "./storeErrors.js";

/** Bytes no text encoding would keep: every byte value, zeros included. */
function awkwardBytes(length: number, seed = 0): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + seed) % 256;
  return bytes;
}

/** State snapshot cases of the EventStore contract (saveSnapshot / loadSnapshot). */
export function describeSnapshotContract(harness: StoreHarness, features: BackendFeatures): void {
  describe("state snapshot", () => {
    it("loads nothing before a snapshot is saved", async () => {
      expect(await harness.store.loadSnapshot("v1")).toBeNull();
    });

    it("gives back the saved body byte for byte, and only for its version", async () => {
      await commitMany(harness.store, 5);
      const body = awkwardBytes(70_000);
      expect(await harness.store.saveSnapshot({ version: "v1", sequence: 5, body })).toBe(true);
      const loaded = await harness.store.loadSnapshot("v1");
      expect(loaded?.version).toBe("v1");
      expect(loaded?.sequence).toBe(5);
      expect(Buffer.from(loaded!.body).equals(Buffer.from(body))).toBe(true);
      expect(await harness.store.loadSnapshot("v2")).toBeNull();
    });

    it("keeps one snapshot: a later save replaces it, whatever its version", async () => {
      await commitMany(harness.store, 4);
      await harness.store.saveSnapshot({ version: "v1", sequence: 2, body: awkwardBytes(10, 1) });
      expect(await harness.store.saveSnapshot({ version: "v1", sequence: 4, body: awkwardBytes(10, 2) })).toBe(true);
      expect((await harness.store.loadSnapshot("v1"))?.sequence).toBe(4);
      expect(await harness.store.saveSnapshot({ version: "v2", sequence: 1, body: awkwardBytes(3, 3) })).toBe(true);
      expect(await harness.store.loadSnapshot("v1")).toBeNull();
      const kept = await harness.store.loadSnapshot("v2");
      expect([kept?.sequence, [...kept!.body]]).toEqual([1, [...awkwardBytes(3, 3)]]);
    });

    it("keeps a later fold of the same version over an earlier one (another writer saved it)", async () => {
      await commitMany(harness.store, 6);
      await harness.store.saveSnapshot({ version: "v1", sequence: 6, body: awkwardBytes(8, 6) });
      expect(await harness.store.saveSnapshot({ version: "v1", sequence: 3, body: awkwardBytes(8, 3) })).toBe(false);
      const kept = await harness.store.loadSnapshot("v1");
      expect([kept?.sequence, [...kept!.body]]).toEqual([6, [...awkwardBytes(8, 6)]]);
    });

    it("refuses a sequence past the log's head, negative or fractional, and an empty version, keeping what it had", async () => {
      await commitMany(harness.store, 3);
      await harness.store.saveSnapshot({ version: "v1", sequence: 3, body: awkwardBytes(4) });
      for (const bad of [
        { version: "v1", sequence: 4 },
        { version: "v1", sequence: -1 },
        { version: "v1", sequence: 1.5 },
        { version: "", sequence: 1 },
      ]) {
        await expect(harness.store.saveSnapshot({ ...bad, body: awkwardBytes(2, 9) })).rejects.toMatchObject({ code: StoreErrorCode.badSnapshot });
      }
      const kept = await harness.store.loadSnapshot("v1");
      expect([kept?.sequence, [...kept!.body]]).toEqual([3, [...awkwardBytes(4)]]);
    });

    it("gives back a body of several megabytes byte for byte while commits go on, and replaces it at the same position under another version", async () => {
      await commitMany(harness.store, 5);
      const big = awkwardBytes(3 * 1024 * 1024 + 12_345, 11);
      // Commits made while the save is under way land and do not disturb it.
      const [saved, last] = await Promise.all([harness.store.saveSnapshot({ version: "v1", sequence: 5, body: big }), commitMany(harness.store, 20, "thread:beside", 1)]);
      expect(saved).toBe(true);
      expect(last).toBe(25);
      const loaded = await harness.store.loadSnapshot("v1");
      expect(loaded?.sequence).toBe(5);
      expect(Buffer.from(loaded!.body).equals(Buffer.from(big))).toBe(true);
      const other = awkwardBytes(2 * 1024 * 1024 + 1, 12);
      expect(await harness.store.saveSnapshot({ version: "v2", sequence: 5, body: other })).toBe(true);
      expect(await harness.store.loadSnapshot("v1")).toBeNull();
      expect(Buffer.from((await harness.store.loadSnapshot("v2"))!.body).equals(Buffer.from(other))).toBe(true);
      // A small one after it replaces it whole.
      expect(await harness.store.saveSnapshot({ version: "v2", sequence: 25, body: awkwardBytes(10, 13) })).toBe(true);
      expect([...(await harness.store.loadSnapshot("v2"))!.body]).toEqual([...awkwardBytes(10, 13)]);
    });

    it("takes a snapshot of the empty log (sequence 0) with an empty body", async () => {
      expect(await harness.store.saveSnapshot({ version: "v0", sequence: 0, body: new Uint8Array(0) })).toBe(true);
      const kept = await harness.store.loadSnapshot("v0");
      expect([kept?.sequence, kept?.body.byteLength]).toEqual([0, 0]);
    });

    if (features.durable) {
      it("keeps the snapshot across close and reopen", async () => {
        await commitMany(harness.store, 2);
        const body = awkwardBytes(1_000, 5);
        await harness.store.saveSnapshot({ version: "v1", sequence: 2, body });
        const second = await harness.reopen();
        const kept = await second.loadSnapshot("v1");
        expect(kept?.sequence).toBe(2);
        expect(Buffer.from(kept!.body).equals(Buffer.from(body))).toBe(true);
      });
    }

    if (features.peers) {
      it("shows one writer's snapshot to another store on the same database", async () => {
        await commitMany(harness.store, 2);
        await harness.store.saveSnapshot({ version: "v1", sequence: 2, body: awkwardBytes(16, 7) });
        const peer = await harness.openPeer();
        expect((await peer.loadSnapshot("v1"))?.sequence).toBe(2);
      });
    }
  });
}
