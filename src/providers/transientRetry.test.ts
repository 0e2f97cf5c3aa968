import { describe, expect, it } from "vitest";
import { MAX_TRANSIENT_RETRIES, TRANSIENT_RETRY_WINDOW_MS, transientRetryDelay, transientRetryNotice } from "./transientRetry.js";

const rateLimit = { kind: "rate_limit" as const, retryAfterMs: null };
const base = { limit: rateLimit, retries: 0, elapsedMs: 0, coolDownMs: 0, jitter: 0 };

describe("transientRetryDelay", () => {
  it("backs off exponentially from 1 s, at least the provider's Retry-After and the instance's cool-down, up to half again by the jitter", () => {
    expect([0, 1, 2].map((retries) => transientRetryDelay({ ...base, retries }))).toEqual([1_000, 2_000, 4_000]);
    expect(transientRetryDelay({ ...base, limit: { kind: "overloaded", retryAfterMs: 7_000 } })).toBe(7_000);
    expect(transientRetryDelay({ ...base, coolDownMs: 12_000 })).toBe(12_000);
    expect(transientRetryDelay({ ...base, jitter: 0.5 })).toBe(1_250);
  });

  it("does not retry a usage limit or a lost sign-in, a run out of retries, or a wait past the retry window", () => {
    expect(transientRetryDelay({ ...base, limit: { kind: "usage_limit", retryAfterMs: null } })).toBeNull();
    expect(transientRetryDelay({ ...base, limit: { kind: "auth_expired", retryAfterMs: null } })).toBeNull();
    expect(transientRetryDelay({ ...base, retries: MAX_TRANSIENT_RETRIES })).toBeNull();
    expect(transientRetryDelay({ ...base, elapsedMs: TRANSIENT_RETRY_WINDOW_MS - 999 })).toBeNull();
    expect(transientRetryDelay({ ...base, elapsedMs: TRANSIENT_RETRY_WINDOW_MS - 1_000 })).toBe(1_000);
  });

  it("spreads 16 children that met one limit together over the cool-down and half of it again, none before the cool-down ends", () => {
    const delays = Array.from({ length: 16 }, (_, child) => transientRetryDelay({ ...base, coolDownMs: 30_000, jitter: child / 16 })!);
    expect(Math.min(...delays)).toBe(30_000);
    expect(Math.max(...delays)).toBeLessThan(45_000);
    expect(new Set(delays).size).toBe(16);
  });

  it("says what is retried, when and which retry", () => {
    expect(transientRetryNotice(rateLimit, 1, 2_400)).toBe("Retrying the turn after a rate limit in 2 s (retry 1 of 3).");
    expect(transientRetryNotice({ kind: "overloaded" }, 3, 200)).toBe("Retrying the turn after an overloaded provider in 1 s (retry 3 of 3).");
  });
});
