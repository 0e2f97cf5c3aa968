import type { Event } from "@opencode-ai/sdk/v2";
import { describe, expect, it } from "vitest";
import { OpencodeEventMapper } from "./opencodeEvents.js";

/**
 * OpenCode's limit signals → the normalized limit event, on the server's
 * event shapes (@opencode-ai/sdk v2 types.gen: EventSessionError with
 * APIError { message, statusCode, isRetryable, responseHeaders } and
 * ProviderAuthError, EventSessionStatus of type "retry" { attempt,
 * message, next }).
 */

const S = "ses_1";
const NOW = Date.parse("2026-12-07T14:00:00Z");
const ev = (type: string, properties: Record<string, unknown>): Event => ({ id: `evt_${type}`, type, properties: { sessionID: S, ...properties } }) as unknown as Event;
const apiError = (data: Record<string, unknown>): Event => ev("session.error", { error: { name: "APIError", data: { isRetryable: false, ...data } } });

function limits(event: Event) {
  return new OpencodeEventMapper("/w", () => NOW).map(event, "r").filter((mapped) => mapped.type === "limit");
}

describe("opencode limit signals", () => {
  it("an APIError 429 is a rate_limit with its retry-after header (seconds, or milliseconds)", () => {
    expect(limits(apiError({ message: "Too Many Requests", statusCode: 429, responseHeaders: { "Retry-After": "30" } }))).toEqual([
      { type: "limit", runId: "r", kind: "rate_limit", retryAfterMs: 30_000, resetAt: null, providerRetrying: false, message: "Too Many Requests" },
    ]);
    expect(limits(apiError({ message: "Too Many Requests", statusCode: 429, responseHeaders: { "retry-after-ms": "1500" } }))).toEqual([expect.objectContaining({ retryAfterMs: 1500 })]);
  });

  it("a usage limit answered 429 is a usage_limit with the reset its headers state; 529 and 5xx are overloaded", () => {
    expect(limits(apiError({ message: "You have reached your usage limit", statusCode: 429, responseHeaders: { "anthropic-ratelimit-unified-reset": "1796040000" } }))).toEqual([
      expect.objectContaining({ kind: "usage_limit", resetAt: new Date(1_796_040_000_000).toISOString() }),
    ]);
    expect(limits(apiError({ message: "Overloaded", statusCode: 529 }))).toEqual([expect.objectContaining({ kind: "overloaded" })]);
    expect(limits(apiError({ message: "Bad Gateway", statusCode: 502 }))).toEqual([expect.objectContaining({ kind: "overloaded" })]);
  });

  it("a ProviderAuthError is auth_expired; a 400 and an abort are no limit", () => {
    expect(limits(ev("session.error", { error: { name: "ProviderAuthError", data: { providerID: "anthropic", message: "token expired" } } }))).toEqual([
      expect.objectContaining({ kind: "auth_expired", message: "token expired" }),
    ]);
    expect(limits(apiError({ message: "invalid model", statusCode: 400 }))).toEqual([]);
    expect(limits(ev("session.error", { error: { name: "MessageAbortedError", data: { message: "aborted" } } }))).toEqual([]);
  });

  it("a retry status on a limit says OpenCode retries, and when", () => {
    const retry = ev("session.status", { status: { type: "retry", attempt: 2, message: "Rate limited", next: NOW + 8_000 } });
    expect(limits(retry)).toEqual([{ type: "limit", runId: "r", kind: "rate_limit", retryAfterMs: 8_000, resetAt: null, providerRetrying: true, message: "Rate limited (attempt 2)" }]);
    expect(limits(ev("session.status", { status: { type: "retry", attempt: 1, message: "Provider is overloaded", next: NOW + 1_000 } }))).toEqual([expect.objectContaining({ kind: "overloaded" })]);
    expect(limits(ev("session.status", { status: { type: "busy" } }))).toEqual([]);
  });
});
