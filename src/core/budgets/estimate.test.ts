import { describe, expect, it } from "vitest";
import { launchTotals, median } from "./estimate.js";

/** The arithmetic of launch estimates (docs/budgets.md, "Estimate before launch"): medians, and totals over rounds. */

describe("median", () => {
  it("is the middle value, or the mean of the middle two", () => {
    expect(median([5])).toBe(5);
    expect(median([9, 1, 5])).toBe(5);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});

describe("launchTotals", () => {
  it("adds tokens and cost over every call, and wall-clock time over rounds by each round's slowest call", () => {
    const fast = { tokens: 100, costUsd: 0.5, wallClockMs: 1_000 };
    const slow = { tokens: 300, costUsd: 1.5, wallClockMs: 4_000 };
    expect(launchTotals([[fast, slow, fast], [fast]])).toEqual({ tokens: 600, costUsd: 3, wallClockMs: 5_000 });
    expect(launchTotals([])).toEqual({ tokens: 0, costUsd: 0, wallClockMs: 0 });
  });

  it("leaves a figure null when any call lacks it: an unknown part makes an unknown whole", () => {
    const known = { tokens: 100, costUsd: 0.5, wallClockMs: 1_000 };
    expect(launchTotals([[known], [{ tokens: 50, costUsd: null, wallClockMs: 10 }]])).toEqual({ tokens: 150, costUsd: null, wallClockMs: 1_010 });
    expect(launchTotals([[known, { tokens: null, costUsd: null, wallClockMs: null }]])).toEqual({ tokens: null, costUsd: null, wallClockMs: null });
  });
});
