import { describe, expect, it } from "vitest";
import { reachedLimit } from "./budgets.js";

const spend = { tokens: 100, turns: 3, wallClockMs: 500, spawns: 2, costUsd: 0.5 };

describe("reachedLimit", () => {
  it("admits nothing new once any limit is reached", () => {
    expect(reachedLimit({ spawns: 2 }, spend, "admit")).toEqual({ kind: "spawns", limit: 2, spent: 2 });
    expect(reachedLimit({ tokens: 100 }, spend, "admit")).toEqual({ kind: "tokens", limit: 100, spent: 100 });
    expect(reachedLimit({ tokens: 101, spawns: 3 }, spend, "admit")).toBeNull();
  });

  it("stops running work when tokens, cost or time reach their limit and counts go past theirs", () => {
    expect(reachedLimit({ spawns: 2, turns: 3 }, spend, "run")).toBeNull();
    expect(reachedLimit({ turns: 2 }, spend, "run")).toEqual({ kind: "turns", limit: 2, spent: 3 });
    expect(reachedLimit({ costUsd: 0.5 }, spend, "run")).toEqual({ kind: "costUsd", limit: 0.5, spent: 0.5 });
    expect(reachedLimit({ wallClockMs: 400 }, spend, "run")).toEqual({ kind: "wallClockMs", limit: 400, spent: 500 });
  });

  it("names the first kind in table order when several ran out", () => {
    expect(reachedLimit({ wallClockMs: 1, tokens: 1 }, spend)?.kind).toBe("tokens");
  });
});
