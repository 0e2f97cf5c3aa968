import { describe, expect, it } from "vitest";
import { instantsThrough, isTimeZone, nextDueAfter } from "./dueTimes.js";

const at = (iso: string) => Date.parse(iso);

describe("due times", () => {
  it("interval: one interval after saving, then the previous instant plus whole intervals past now", () => {
    const trigger = { type: "interval" as const, everyMs: 60_000 };
    expect(nextDueAfter(trigger, at("2026-01-01T00:00:00Z"), null, "UTC")).toBe(at("2026-01-01T00:01:00Z"));
    expect(nextDueAfter(trigger, at("2026-01-01T00:01:00Z"), at("2026-01-01T00:01:00Z"), "UTC")).toBe(at("2026-01-01T00:02:00Z"));
    // Woken late (or after downtime): the next instant is the first one after now, on the original grid.
    expect(nextDueAfter(trigger, at("2026-01-01T00:05:30Z"), at("2026-01-01T00:01:00Z"), "UTC")).toBe(at("2026-01-01T00:06:00Z"));
    expect(instantsThrough(trigger, at("2026-01-01T00:01:00Z"), at("2026-01-01T00:05:30Z"), "UTC")).toBe(5);
  });

  it("daily: wall-clock time in the zone, on the listed weekdays, across a daylight-saving change", () => {
    const weekdays = { type: "daily" as const, at: "09:30", weekdays: [1, 2, 3, 4, 5] };
    // Saturday 2025-03-08 noon UTC in New York: next is Monday 09:30 EDT (DST began Sunday 2025-03-09).
    expect(nextDueAfter(weekdays, at("2025-03-08T12:00:00Z"), null, "America/New_York")).toBe(at("2025-03-10T13:30:00Z"));
    // Friday before the change: 09:30 EST.
    expect(nextDueAfter(weekdays, at("2025-03-07T12:00:00Z"), null, "America/New_York")).toBe(at("2025-03-07T14:30:00Z"));
    const everyDay = { type: "daily" as const, at: "00:00", weekdays: null };
    expect(nextDueAfter(everyDay, at("2026-01-01T00:00:00Z"), null, "UTC")).toBe(at("2026-01-02T00:00:00Z"));
    expect(instantsThrough(everyDay, at("2026-01-02T00:00:00Z"), at("2026-01-05T12:00:00Z"), "UTC")).toBe(4);
  });

  it("knows real time zones only", () => {
    expect(isTimeZone("Europe/Paris")).toBe(true);
    expect(isTimeZone("Mars/Olympus")).toBe(false);
  });
});
