import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CodexEventMapper } from "./codexEvents.js";
import { codexErrorLimit, codexRetryAt } from "./codexLimits.js";
import type { RateLimitSnapshot, ServerNotification, TurnError } from "./protocol.js";

/**
 * Codex's limit signals → the normalized limit event, on the app-server's
 * documented shapes (generated/v2: ErrorNotification, CodexErrorInfo,
 * AccountRateLimitsUpdatedNotification) and the recorded failed turn.
 */

const THREAD = "01a22c49-9a0b-7d13-b324-946c86bd68b7";
const TURN = "01a22c49-9a3f-74c0-9ceb-f0ab91b5f65a";

function turnError(codexErrorInfo: TurnError["codexErrorInfo"], message = "the request failed"): TurnError {
  return { message, codexErrorInfo, additionalDetails: null, misalignment: null };
}

function errorNotification(error: TurnError, willRetry: boolean): ServerNotification {
  return { method: "error", params: { error, willRetry, threadId: THREAD, turnId: TURN } };
}

function failedTurn(error: TurnError): ServerNotification {
  const turn = { id: TURN, rootTurnId: TURN, items: [], itemsView: "notLoaded", status: "failed", error, startedAt: 1, completedAt: 2, durationMs: 1000 };
  return { method: "turn/completed", params: { threadId: THREAD, turn } } as unknown as ServerNotification;
}

function snapshot(more: Partial<RateLimitSnapshot>): RateLimitSnapshot {
  return {
    limitId: "codex",
    limitName: null,
    normalModelSlug: null,
    primary: { usedPercent: 100, windowDurationMins: 300, resetsAt: 1_796_040_000 },
    secondary: { usedPercent: 40, windowDurationMins: 10_080, resetsAt: 1_796_500_000 },
    credits: null,
    individualLimit: null,
    spendControlReached: null,
    planType: "plus",
    rateLimitReachedType: "rate_limit_reached",
    ...more,
  };
}

describe("codex limit signals", () => {
  it("the recorded 404 turn is no limit", () => {
    const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "failed.json"), "utf8")) as { messages: { id?: unknown }[] };
    const mapper = new CodexEventMapper();
    const events = fixture.messages.filter((message) => message.id === undefined).flatMap((message) => mapper.map(message as ServerNotification, "run-1"));
    expect(events.some((event) => event.type === "limit")).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: "turn.completed", status: "failed" });
  });

  it("a rate limit codex retries is a rate_limit it says it retries", () => {
    const events = new CodexEventMapper().map(errorNotification(turnError("rateLimitExceeded", "rate limit exceeded"), true), "run-1");
    expect(events.map((event) => event.type)).toEqual(["item.completed", "limit"]);
    expect(events[1]).toEqual({ type: "limit", runId: "run-1", kind: "rate_limit", retryAfterMs: null, resetAt: null, providerRetrying: true, message: "rate limit exceeded" });
  });

  it("an upstream status in an httpConnectionFailed says which limit", () => {
    const mapper = new CodexEventMapper();
    const of = (status: number) => mapper.map(errorNotification(turnError({ httpConnectionFailed: { httpStatusCode: status } }), true), "run-1").find((event) => event.type === "limit");
    expect(of(429)).toMatchObject({ kind: "rate_limit" });
    expect(of(503)).toMatchObject({ kind: "overloaded" });
    expect(of(401)).toMatchObject({ kind: "auth_expired" });
    expect(of(404)).toBeUndefined();
    expect(mapper.map(errorNotification(turnError({ responseStreamDisconnected: { httpStatusCode: 529 } }), true), "run-1")).toContainEqual(expect.objectContaining({ type: "limit", kind: "overloaded" }));
  });

  it("a usage limit takes its reset time from the account's reached window, and the failed turn does not repeat it", () => {
    const mapper = new CodexEventMapper();
    const update = mapper.map({ method: "account/rateLimits/updated", params: { rateLimits: snapshot({}) } }, "run-1");
    expect(update).toEqual([
      { type: "limit", runId: "run-1", kind: "usage_limit", retryAfterMs: null, resetAt: new Date(1_796_040_000_000).toISOString(), providerRetrying: false, message: "codex: rate limit reached" },
    ]);
    const error = turnError("usageLimitExceeded", "You've hit your usage limit.");
    const signalled = mapper.map(errorNotification(error, false), "run-1");
    expect(signalled.find((event) => event.type === "limit")).toMatchObject({ kind: "usage_limit", resetAt: new Date(1_796_040_000_000).toISOString(), providerRetrying: false });
    expect(mapper.map(failedTurn(error), "run-1").map((event) => event.type)).toEqual(["turn.completed"]);
  });

  it("a failed turn with a limit and no error notification signals it before the turn ends", () => {
    const events = new CodexEventMapper().map(failedTurn(turnError("unauthorized", "401 Unauthorized")), "run-1");
    expect(events.map((event) => event.type)).toEqual(["limit", "turn.completed"]);
    expect(events[0]).toMatchObject({ kind: "auth_expired", message: "401 Unauthorized" });
  });

  it("an account update with room left signals nothing; both windows full wait for the later reset", () => {
    const mapper = new CodexEventMapper();
    expect(mapper.map({ method: "account/rateLimits/updated", params: { rateLimits: snapshot({ rateLimitReachedType: null }) } }, "run-1")).toEqual([]);
    const both = snapshot({ secondary: { usedPercent: 100, windowDurationMins: 10_080, resetsAt: 1_796_500_000 }, rateLimitReachedType: "workspace_member_usage_limit_reached" });
    expect(mapper.map({ method: "account/rateLimits/updated", params: { rateLimits: both } }, "run-1")).toEqual([
      expect.objectContaining({ kind: "usage_limit", resetAt: new Date(1_796_500_000_000).toISOString() }),
    ]);
  });

  it("a usage limit with no reached window takes its reset from codex's words: the next such time of day, or the date it names", () => {
    // Codex's message for a model API's usage_limit_reached (with resets_at), as a real codex printed it against the model server.
    const words = "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 2:27 PM.";
    const morning = new Date(2026, 11, 7, 13, 26).getTime();
    expect(codexErrorLimit(turnError("usageLimitExceeded", words), false, null, morning)).toMatchObject({ kind: "usage_limit", resetAt: new Date(2026, 11, 7, 14, 27).toISOString() });
    // Past that time today: tomorrow's.
    const evening = new Date(2026, 11, 7, 15, 0).getTime();
    expect(codexRetryAt(words, evening)).toBe(new Date(2026, 11, 8, 14, 27).toISOString());
    expect(codexRetryAt("try again at Dec 9th, 2026 9:05 AM.", evening)).toBe(new Date(2026, 11, 9, 9, 5).toISOString());
    expect(codexRetryAt("try again at 12:10 AM.", evening)).toBe(new Date(2026, 11, 8, 0, 10).toISOString());
    // Without a plan codex writes "You’ve hit your usage limit. Try again at 2:30 PM."
    expect(codexRetryAt("You’ve hit your usage limit. Try again at 2:30 PM.", morning)).toBe(new Date(2026, 11, 7, 14, 30).toISOString());
    // A reached window's reset wins, and words without a time give none.
    expect(codexErrorLimit(turnError("usageLimitExceeded", words), false, "2026-12-07T20:00:00.000Z", morning)?.resetAt).toBe("2026-12-07T20:00:00.000Z");
    expect(codexErrorLimit(turnError("usageLimitExceeded", "You've hit your usage limit."), false, null, morning)?.resetAt).toBeNull();
  });

  it("errors that are no limit (context window, bad request) signal none", () => {
    const mapper = new CodexEventMapper();
    for (const info of ["contextWindowExceeded", "badRequest", "sessionBudgetExceeded", "a code from a newer codex"] as const) {
      expect(mapper.map(errorNotification(turnError(info), false), "run-1").map((event) => event.type)).toEqual(["item.completed"]);
    }
  });
});
