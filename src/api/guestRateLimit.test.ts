import { describe, expect, it } from "vitest";
import { FailureLimiter } from "./guestRateLimit.js";

describe("FailureLimiter", () => {
  it("allows a key until its max-th failure in the window, and again once the window passed", () => {
    let now = 1_000;
    const limiter = new FailureLimiter(3, 60_000, () => now);
    for (let i = 0; i < 3; i += 1) {
      expect(limiter.allows("a")).toBe(true);
      limiter.fail("a");
    }
    expect(limiter.allows("a")).toBe(false);
    expect(limiter.allows("b")).toBe(true);
    now += 59_999;
    expect(limiter.allows("a")).toBe(false);
    now += 1;
    expect(limiter.allows("a")).toBe(true);
  });
});
