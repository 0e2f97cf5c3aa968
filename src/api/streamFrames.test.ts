import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { wireEvent } from "../app/orchestration/wireEvents.js";
import type { StoredEvent } from "../contracts/envelopes.js";
import type { WireEvent } from "../contracts/wire/projections.js";
import { storedDataJson } from "../store/storedJson.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import { accepted, event } from "../store/testSuiteFixtures.js";
import { eventStreamFrame, isEventUpdate } from "./streamFrames.js";

/** The spliced event frame is byte for byte the frame JSON.stringify would send. */
describe("eventStreamFrame", () => {
  it("equals JSON.stringify of the stream frame for any event and subscription id", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 128 }),
        fc.record({ sequence: fc.nat(), type: fc.string(), data: fc.jsonValue(), occurredAt: fc.string() }),
        (id, event: WireEvent) => {
          const update = { kind: "event", event } as const;
          expect(eventStreamFrame(id, update)).toBe(JSON.stringify({ type: "stream", id, update }));
          // The second subscription's frame reuses the event's text and still names its own id.
          expect(eventStreamFrame(`${id}-2`, update)).toBe(JSON.stringify({ type: "stream", id: `${id}-2`, update }));
        },
      ),
    );
  });

  it("reuses the JSON a SQLite commit wrote for the data, byte for byte what JSON.stringify sends", async () => {
    const store = SqliteEventStore.open(":memory:");
    try {
      const live: StoredEvent[] = [];
      await store.subscribe(0, (stored) => live.push(stored)).caughtUp;
      const awkward: unknown[] = [
        { b: 1, 2: "two", a: [1, -0, 1e21, 0.1], 1: null },
        { text: "lone \ud800 surrogate, \u2028 line separator, emoji \u{1F600}, quote \" and \\" },
        { when: new Date(0), gone: undefined, nested: { deep: [{ x: undefined }] } },
      ];
      const generated = fc.sample(fc.jsonValue(), { numRuns: 200, seed: 13 });
      let commandIndex = 0;
      for (const data of [...awkward, ...generated]) await store.commit([accepted(`cmd:frames:${commandIndex++}`, [event("thread:frames", data)])]);
      expect(live).toHaveLength(awkward.length + generated.length);
      for (const stored of live) {
        expect(storedDataJson(stored)).toBeDefined();
        const update = { kind: "event", event: wireEvent(stored) } as const;
        expect(eventStreamFrame("7", update)).toBe(JSON.stringify({ type: "stream", id: "7", update }));
      }
    } finally {
      await store.close();
    }
  });

  it("splices only updates shaped exactly { kind: 'event', event }", () => {
    const event: WireEvent = { sequence: 1, type: "thread.created", data: {}, occurredAt: "2026-01-01T00:00:00.000Z" };
    expect(isEventUpdate({ kind: "event", event })).toBe(true);
    expect(isEventUpdate({ event, kind: "event" })).toBe(false);
    expect(isEventUpdate({ kind: "event", event, extra: 1 })).toBe(false);
    expect(isEventUpdate({ kind: "delta", event })).toBe(false);
    expect(isEventUpdate(null)).toBe(false);
  });
});
