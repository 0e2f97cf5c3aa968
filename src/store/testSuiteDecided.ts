import { describe, expect, it } from "vitest";
import type { CommitEntry, EventStore, LockedView } from "./eventStore.js";
import { accepted, event, newCommandId, type StoreHarness } from "./testSuiteFixtures.js";

/**
 * commitDecided: a decision taken under the log's write lock sees every
 * event committed after the caller's position (by this store or, for shared
 * backends, another writer) and the stored receipts it asks about, and its
 * entries commit in the same transaction.
 */
export function describeDecidedContract(harness: StoreHarness, features: { readonly peers: boolean }): void {
  describe("commitDecided", () => {
    it("hands the decision the events after the caller's position and the receipts it asked for, then commits its entries", async () => {
      const { store } = harness;
      const first = newCommandId("first");
      await store.commit([accepted(first, [event("thread:a"), event("thread:a")])]);
      await store.commit([accepted(newCommandId(), [event("thread:b")])]);
      let seen: LockedView | null = null;
      const id = newCommandId("decided");
      const results = await store.commitDecided({
        after: 1,
        commandIds: [first, id],
        decide: (view) => {
          seen = view;
          return [accepted(id, [event("thread:c")])];
        },
      });
      const view = seen as LockedView | null;
      expect(view?.head).toBe(3);
      expect(view?.foreign.map((stored) => stored.sequence)).toEqual([2, 3]);
      // Exactly the stored events, as a read returns them (ids, data, times).
      expect(view?.foreign).toEqual(await store.readAll(1, 2));
      expect([...(view?.known.keys() ?? [])]).toEqual([first]);
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ duplicate: false, receipt: { status: "accepted", sequence: 4 }, events: [{ sequence: 4, commandId: id }] });
      expect(await store.lastSequence()).toBe(4);
    });

    it("writes nothing when the decision returns no entries or throws", async () => {
      const { store } = harness;
      await store.commit([accepted(newCommandId(), [event("thread:a")])]);
      expect(await store.commitDecided({ after: 1, commandIds: [], decide: () => [] })).toEqual([]);
      const id = newCommandId("thrown");
      await expect(
        store.commitDecided({
          after: 1,
          commandIds: [id],
          decide: () => {
            throw new Error("decider failed");
          },
        }),
      ).rejects.toThrow("decider failed");
      expect(await store.lastSequence()).toBe(1);
      expect(await store.lookupReceipt(id)).toBeNull();
    });

    if (features.peers) {
      it("sees what another writer committed, so decisions on two stores stay sequential and gap-free", async () => {
        const { store } = harness;
        const peer = await harness.openPeer();
        // Each store decides from its own last known position; each must see the other's commits.
        let mine = 0;
        let theirs = 0;
        const decideOn = (writer: EventStore, known: () => number, remember: (sequence: number) => void, label: string) =>
          writer.commitDecided({
            after: known(),
            commandIds: [],
            decide: (view) => {
              expect(view.foreign[0]?.sequence ?? view.head + 1).toBe(known() + 1);
              const entries: CommitEntry[] = [accepted(newCommandId(label), [event(`thread:${label}`)])];
              remember(view.head + 1);
              return entries;
            },
          });
        for (let round = 0; round < 5; round += 1) {
          await Promise.all([
            decideOn(store, () => mine, (sequence) => (mine = sequence), "mine"),
            decideOn(peer, () => theirs, (sequence) => (theirs = sequence), "theirs"),
          ]);
        }
        const all = await store.readAll(0);
        expect(all.map((stored) => stored.sequence)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      });
    }
  });
}
