import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { WireEvent } from "../contracts/wire/projections.js";
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

  it("splices only updates shaped exactly { kind: 'event', event }", () => {
    const event: WireEvent = { sequence: 1, type: "thread.created", data: {}, occurredAt: "2026-01-01T00:00:00.000Z" };
    expect(isEventUpdate({ kind: "event", event })).toBe(true);
    expect(isEventUpdate({ event, kind: "event" })).toBe(false);
    expect(isEventUpdate({ kind: "event", event, extra: 1 })).toBe(false);
    expect(isEventUpdate({ kind: "delta", event })).toBe(false);
    expect(isEventUpdate(null)).toBe(false);
  });
});
