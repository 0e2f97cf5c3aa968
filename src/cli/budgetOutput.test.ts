import { describe, expect, it } from "vitest";
import { formatBudget } from "./budgetOutput.js";

describe("a budget as the CLI prints it", () => {
  it("lists each limited kind's spend, limit and what is left, marks the reached ones, and says how it ran out", () => {
    const lines = formatBudget({
      limits: { tokens: 300, spawns: 2, costUsd: 0.5, wallClockMs: 60_000 },
      spent: { tokens: 504, turns: 3, wallClockMs: 12_500, spawns: 2, costUsd: 0.0123 },
      remaining: { tokens: 0, spawns: 0, costUsd: 0.4877, wallClockMs: 47_500 },
      reached: ["tokens", "spawns"],
      exceeded: { kind: "tokens", limit: 300, spent: 504, policy: "stop", at: "2026-12-04T10:00:00.000Z" },
    });
    expect(lines).toEqual([
      "budget:",
      "  tokens: 504 of 300, 0 left (reached: nothing new starts)",
      "  spawns: 2 of 2, 0 left (reached: nothing new starts)",
      "  cost: $0.0123 of $0.5000, $0.4877 left",
      "  time: 12.5 s of 60.0 s, 47.5 s left",
      "  ran out of tokens at 2026-12-04T10:00:00.000Z (504 of 300; stop)",
    ]);
  });

  it("prints only the kinds with a limit, and nothing about running out while none did", () => {
    expect(formatBudget({ limits: { turns: 4 }, spent: { tokens: 10, turns: 1, wallClockMs: 5, spawns: 0, costUsd: 0 }, remaining: { turns: 3 }, reached: [], exceeded: null })).toEqual([
      "budget:",
      "  turns: 1 of 4, 3 left",
    ]);
  });
});
