import { describe, expect, it } from "vitest";
import { limitEvent, limitKindOfHttpStatus, limitKindOfText, limitNotice, limitSignal, resetAtInText, retryAfterMs, retryDelayInText } from "./limitSignals.js";

const NOW = Date.parse("2026-12-07T14:00:00Z");

describe("limit signals shared by the drivers", () => {
  it("Retry-After in delta seconds or as an HTTP date; unreadable or absent is null", () => {
    expect(retryAfterMs("30", NOW)).toBe(30_000);
    expect(retryAfterMs("1.5", NOW)).toBe(1_500);
    expect(retryAfterMs("Mon, 07 Dec 2026 14:02:00 GMT", NOW)).toBe(120_000);
    expect(retryAfterMs("Mon, 07 Dec 2026 13:00:00 GMT", NOW)).toBe(0);
    expect(retryAfterMs("soon", NOW)).toBeNull();
    expect(retryAfterMs(undefined, NOW)).toBeNull();
  });

  it("HTTP statuses: 429 rate limit, 401 sign-in, 529 and 5xx overloaded, the rest none", () => {
    expect([429, 401, 529, 500, 503, 400, 403, 404].map(limitKindOfHttpStatus)).toEqual(["rate_limit", "auth_expired", "overloaded", "overloaded", "overloaded", null, null, null]);
  });

  it("words: a usage limit before a rate limit, and text about nothing of the kind is none", () => {
    expect(limitKindOfText("Claude AI usage limit reached|1796040000")).toBe("usage_limit");
    expect(limitKindOfText("429: quota exceeded for this month")).toBe("usage_limit");
    expect(limitKindOfText("429 Too Many Requests")).toBe("rate_limit");
    expect(limitKindOfText("Overloaded")).toBe("overloaded");
    expect(limitKindOfText("OAuth token has expired. Please run /login")).toBe("auth_expired");
    expect(limitKindOfText("file not found: src/index.ts")).toBeNull();
    expect(limitKindOfText("max turns limit reached")).toBeNull();
    expect(limitKindOfText("You exceeded your current quota, please check your plan and billing details.")).toBe("usage_limit");
  });

  it("reset times and retry delays a message states", () => {
    expect(resetAtInText("Claude AI usage limit reached|1796040000")).toBe(new Date(1_796_040_000_000).toISOString());
    expect(resetAtInText("limit reached, resets at 2026-12-07T14:05:00+01:00")).toBe("2026-12-07T13:05:00.000Z");
    expect(resetAtInText("limit reached")).toBeNull();
    expect(retryDelayInText("Please retry in 58.2s.")).toBe(58_200);
    expect(retryDelayInText("try again in 2 minutes")).toBe(120_000);
    expect(retryDelayInText("retry after 250 ms")).toBe(250);
    expect(retryDelayInText("retry later")).toBeNull();
  });

  it("the notice a limit is recorded as says what and when", () => {
    const usage = limitEvent("run-1", limitSignal("usage_limit", "You've hit your limit", { resetAt: "2026-12-07T14:05:00.000Z" }));
    expect(limitNotice(usage)).toEqual({ kind: "system_notice", level: "warning", text: "usage limit reached (resets at 2026-12-07T14:05:00.000Z): You've hit your limit" });
    const rate = limitEvent("run-1", limitSignal("rate_limit", "429", { retryAfterMs: 1_200, providerRetrying: true }));
    expect(limitNotice(rate).text).toBe("rate limited (retry after 2 s, the provider is retrying): 429");
    expect(limitNotice(limitEvent("run-1", limitSignal("auth_expired", "401"))).text).toBe("sign-in expired: 401");
  });
});
