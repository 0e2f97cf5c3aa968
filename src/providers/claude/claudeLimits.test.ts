import type { SDKAssistantMessageError, SDKMessage, SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import { describe, expect, it } from "vitest";
import { ClaudeTranscriptMapper } from "./claudeEvents.js";
import { loadFixture } from "./testing/fixtures.js";

/**
 * Claude Code's limit signals → the normalized limit event: the recorded
 * HTTP 400 transcript (fixtures/api-error.json) and the Agent SDK's
 * documented shapes (sdk.d.ts: SDKAPIRetryMessage, SDKRateLimitEvent, a
 * result's api_error_status and api_error_type), each varied from the
 * recorded result where it is a result.
 */

function recordedResult(): SDKResultMessage {
  const result = loadFixture("api-error").messages.find((message) => message.type === "result");
  if (result?.type !== "result") throw new Error("the fixture has no result");
  return result;
}

function failedResult(text: string, status: number | null, type: string | null): SDKResultMessage {
  return { ...recordedResult(), result: text, api_error_status: status, api_error_type: type } as unknown as SDKResultMessage;
}

function apiRetry(error: SDKAssistantMessageError, status: number | null, delay: number): SDKMessage {
  return { type: "system", subtype: "api_retry", attempt: 2, max_retries: 10, retry_delay_ms: delay, error_status: status, error, uuid: "00000000-0000-4000-8000-000000000001", session_id: "s-1" };
}

function planLimit(status: "allowed_warning" | "rejected", resetsAt?: number): SDKMessage {
  return { type: "rate_limit_event", rate_limit_info: { status, rateLimitType: "five_hour", ...(resetsAt === undefined ? {} : { resetsAt }) }, uuid: "00000000-0000-4000-8000-000000000002", session_id: "s-1" };
}

describe("claude limit signals", () => {
  it("the recorded HTTP 400 turn is no limit", () => {
    const fixture = loadFixture("api-error");
    const mapper = new ClaudeTranscriptMapper(fixture.cwd);
    const events = fixture.messages.flatMap((message) => (message.type === "result" ? mapper.resultLimit(message, "run-1") : mapper.map(message, "run-1")));
    expect(events.some((event) => event.type === "limit")).toBe(false);
  });

  it("a 429 Claude Code retries is a rate_limit with its delay; a 529 is overloaded", () => {
    const mapper = new ClaudeTranscriptMapper("/workspace");
    expect(mapper.map(apiRetry("rate_limit", 429, 30_000), "run-1")).toEqual([
      { type: "limit", runId: "run-1", kind: "rate_limit", retryAfterMs: 30_000, resetAt: null, providerRetrying: true, message: "model API rate_limit (HTTP 429), retry 2 of 10" },
    ]);
    expect(mapper.map(apiRetry("overloaded", 529, 2_000), "run-1")).toEqual([expect.objectContaining({ kind: "overloaded", retryAfterMs: 2_000, providerRetrying: true })]);
    expect(mapper.map(apiRetry("unknown", 503, 1_000), "run-1")).toEqual([expect.objectContaining({ kind: "overloaded" })]);
    expect(mapper.map(apiRetry("unknown", null, 1_000), "run-1")).toEqual([]);
  });

  it("a refused plan limit is a usage_limit with its reset, and the failed result does not repeat it", () => {
    const mapper = new ClaudeTranscriptMapper("/workspace");
    expect(mapper.map(planLimit("allowed_warning", 1_796_040_000), "run-1")).toEqual([]);
    expect(mapper.map(planLimit("rejected", 1_796_040_000), "run-1")).toEqual([
      { type: "limit", runId: "run-1", kind: "usage_limit", retryAfterMs: null, resetAt: new Date(1_796_040_000_000).toISOString(), providerRetrying: false, message: "claude.ai five hour limit reached" },
    ]);
    expect(mapper.resultLimit(failedResult("Claude AI usage limit reached|1796040000", 429, "rate_limit_error"), "run-1")).toEqual([]);
    // The next turn's result is its own.
    expect(mapper.resultLimit(failedResult("Claude AI usage limit reached|1796040000", 429, "rate_limit_error"), "run-1")).toEqual([
      expect.objectContaining({ kind: "usage_limit", resetAt: new Date(1_796_040_000_000).toISOString() }),
    ]);
  });

  it("a failed result on a limit: the text's usage limit first, then the error type, then the status", () => {
    const mapper = new ClaudeTranscriptMapper("/workspace");
    const of = (text: string, status: number | null, type: string | null) => mapper.resultLimit(failedResult(text, status, type), "run-1")[0];
    expect(of("API Error: 429 rate limited", 429, "rate_limit_error")).toMatchObject({ kind: "rate_limit", resetAt: null, providerRetrying: false });
    expect(of("API Error: Repeated 529 Overloaded errors", 529, "overloaded_error")).toMatchObject({ kind: "overloaded" });
    expect(of("API Error: 401 invalid x-api-key · Please run /login", 401, "authentication_error")).toMatchObject({ kind: "auth_expired" });
    expect(of("API Error: 500 internal", 500, null)).toMatchObject({ kind: "overloaded" });
    expect(of("You've hit your usage limit · resets at 2026-12-07T14:05:00Z", 429, "rate_limit_error")).toMatchObject({ kind: "usage_limit", resetAt: "2026-12-07T14:05:00.000Z" });
    expect(of("API Error: 400 boom", 400, "invalid_request_error")).toBeUndefined();
  });

  it("a result that is no error is no limit, whatever its text says", () => {
    const ok = { ...recordedResult(), is_error: false, result: "the rate limit docs say 429" } as SDKResultMessage;
    expect(new ClaudeTranscriptMapper("/workspace").resultLimit(ok, "run-1")).toEqual([]);
  });
});
