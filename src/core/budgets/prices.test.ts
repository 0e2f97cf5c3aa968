import { describe, expect, it } from "vitest";
import { costOf, priceOf, pricedUsage } from "./prices.js";

const PRICE = { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 };

describe("prices", () => {
  it("costs uncached input, cache reads and output at their prices, per million tokens", () => {
    // 1,000,000 input of which 400,000 cache reads, 100,000 output.
    expect(costOf({ inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 100_000 }, PRICE)).toBeCloseTo(0.6 * 3 + 0.4 * 0.3 + 0.1 * 15, 12);
    // No cached price: cache reads at the input price.
    expect(costOf({ inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 0 }, { inputPerMTok: 3, outputPerMTok: 15 })).toBeCloseTo(3, 12);
    // Cache reads never count for more than the input, nor anything below zero.
    expect(costOf({ inputTokens: 10, cachedInputTokens: 50, outputTokens: -5 }, PRICE)).toBeCloseTo((10 * 0.3) / 1e6, 15);
  });

  it("finds a model's own price, else the list's `*`, else none", () => {
    const list = { "gpt-5": PRICE, "*": { inputPerMTok: 1, outputPerMTok: 2 } };
    expect(priceOf(list, "gpt-5")).toBe(PRICE);
    expect(priceOf(list, "other")).toEqual({ inputPerMTok: 1, outputPerMTok: 2 });
    expect(priceOf(list, null)).toEqual({ inputPerMTok: 1, outputPerMTok: 2 });
    expect(priceOf({ "gpt-5": PRICE }, "other")).toBeNull();
    expect(priceOf(undefined, "gpt-5")).toBeNull();
  });

  it("keeps a provider's own cost and adds one only where a price exists", () => {
    const reported = { inputTokens: 100, outputTokens: 10, costUsd: 0.42 };
    expect(pricedUsage(reported, PRICE)).toBe(reported);
    expect(pricedUsage({ inputTokens: 100, outputTokens: 10 }, null)).toEqual({ inputTokens: 100, outputTokens: 10 });
    expect(pricedUsage({ inputTokens: 100, outputTokens: 10 }, PRICE).costUsd).toBeCloseTo((100 * 3 + 10 * 15) / 1e6, 15);
  });
});
