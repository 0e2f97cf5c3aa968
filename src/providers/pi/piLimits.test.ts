import { describe, expect, it } from "vitest";
import { PiEventMapper } from "./piEvents.js";

/**
 * Pi's limit signals → the normalized limit event, on the RPC events
 * docs/rpc.md of pi-coding-agent documents (auto_retry_start, a failed
 * assistant message_end, agent_end), its examples' error texts included.
 */

const failed = (errorMessage: string) => ({ type: "message_end", message: { role: "assistant", content: [], stopReason: "error", errorMessage } });

function run(...events: Record<string, unknown>[]) {
  const mapper = new PiEventMapper("/w");
  mapper.startTurn();
  return events.flatMap((event) => mapper.map(event, "r")).filter((event) => event.type === "limit");
}

describe("pi limit signals", () => {
  it("an auto retry of a 529 is overloaded, with the delay Pi waits, and says Pi retries", () => {
    const retry = { type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' };
    expect(run(retry)).toEqual([
      { type: "limit", runId: "r", kind: "overloaded", retryAfterMs: 2000, resetAt: null, providerRetrying: true, message: retry.errorMessage },
    ]);
  });

  it("the run's failed request ends it on its limit at agent_end, once", () => {
    const limits = run(failed("429 rate_limit_error: Too many requests, please retry in 20s"), { type: "agent_end", messages: [] });
    expect(limits).toEqual([expect.objectContaining({ kind: "rate_limit", retryAfterMs: 20_000, providerRetrying: false })]);
    expect(run(failed("You have hit your usage limit; resets at 2026-12-07T14:05:00Z"), { type: "agent_end", messages: [] })).toEqual([
      expect.objectContaining({ kind: "usage_limit", resetAt: "2026-12-07T14:05:00.000Z" }),
    ]);
    expect(run(failed("401 authentication_error: invalid x-api-key"), { type: "agent_end", messages: [] })).toEqual([expect.objectContaining({ kind: "auth_expired" })]);
  });

  it("a failure that is no limit, a retry without an error and a run that ended well signal none", () => {
    expect(run(failed("400 invalid_request_error: prompt is too long"), { type: "agent_end", messages: [] })).toEqual([]);
    expect(run({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 10 })).toEqual([]);
    expect(run({ type: "message_end", message: { role: "assistant", content: [{ type: "text", text: "rate limit docs" }], stopReason: "stop" } }, { type: "agent_end", messages: [] })).toEqual([]);
  });
});
