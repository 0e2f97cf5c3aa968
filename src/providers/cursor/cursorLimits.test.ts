import { describe, expect, it } from "vitest";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { ProviderEventRecorder } from "../kit/testSuiteHarness.js";
import { cursorErrorLimit, cursorRunLimit } from "./cursorLimits.js";
import { createCursorDriver } from "./driver.js";
import { fakeCursorSdk } from "./testing/fakeCursorSdk.js";

/**
 * Cursor's limit signals → the normalized limit event, on the SDK's
 * published shapes (@cursor/sdk errors.d.ts: the error classes by name with
 * their optional status; run.d.ts: RunError { message, code? }). The
 * session test runs on the fake SDK boundary: Cursor's agent needs
 * Cursor's backend, so it cannot run offline.
 */

function sdkError(name: string, message: string, status?: number): Error {
  return Object.assign(new Error(message), { name, ...(status === undefined ? {} : { status }) });
}

describe("cursor limit signals", () => {
  it("the SDK's error classes: RateLimitError, AuthenticationError, NetworkError", () => {
    expect(cursorErrorLimit(sdkError("RateLimitError", "Too many requests, retry after 30 seconds", 429))).toEqual({
      kind: "rate_limit",
      retryAfterMs: 30_000,
      resetAt: null,
      providerRetrying: false,
      message: "Too many requests, retry after 30 seconds",
    });
    expect(cursorErrorLimit(sdkError("RateLimitError", "You've hit your usage limit; resets at 2026-12-07T14:05:00Z"))).toMatchObject({ kind: "usage_limit", resetAt: "2026-12-07T14:05:00.000Z" });
    expect(cursorErrorLimit(sdkError("AuthenticationError", "not logged in", 401))).toMatchObject({ kind: "auth_expired" });
    expect(cursorErrorLimit(sdkError("NetworkError", "service unavailable", 503))).toMatchObject({ kind: "overloaded" });
  });

  it("an unnamed error is read by its status; a configuration error and a plain error are none", () => {
    expect(cursorErrorLimit(sdkError("UnknownAgentError", "upstream", 529))).toMatchObject({ kind: "overloaded" });
    expect(cursorErrorLimit(sdkError("ConfigurationError", "invalid model name", 400))).toBeNull();
    expect(cursorErrorLimit(new Error("boom"))).toBeNull();
    expect(cursorErrorLimit("429")).toBeNull();
  });

  it("a failed run's error is read by its code and words", () => {
    expect(cursorRunLimit({ message: "Usage limit reached for this billing period", code: "resource_exhausted" })).toMatchObject({ kind: "usage_limit" });
    expect(cursorRunLimit({ message: "the model is overloaded" })).toMatchObject({ kind: "overloaded" });
    expect(cursorRunLimit({ message: "model unavailable" })).toBeNull();
  });

  it("a run that fails on a usage limit signals it before the turn fails", async () => {
    const recorder = new ProviderEventRecorder();
    const instance: ProviderInstanceConfig = { id: "cursor", driver: "cursor", enabled: true, displayName: null, models: ["gpt-x"], options: {} };
    const driver = createCursorDriver({ loadSdk: () => Promise.resolve(fakeCursorSdk().sdk), processEnv: { CURSOR_API_KEY: "key_cursor_test_0123456789" }, log: () => undefined });
    const session = await driver.openSession({
      instance,
      threadId: "thread:c",
      providerSessionId: "ps:c",
      cwd: "/work",
      runtimeMode: "full-access",
      interactionMode: "default",
      model: null,
      mcp: { url: "http://127.0.0.1:7/mcp", token: "tok_cursor_test_0123456789" },
      onEvent: recorder.onEvent,
      resume: null,
    });
    await session.startTurn({ runId: "r1", input: "fail: You've hit your usage limit; resets at 2026-12-07T14:05:00Z" });
    expect(await recorder.turnEnd("r1")).toMatchObject({ type: "turn.completed", status: "failed" });
    const events = recorder.ofRun("r1").map((event) => event.type);
    expect(events.slice(-2)).toEqual(["limit", "turn.completed"]);
    expect(recorder.ofRun("r1").find((event) => event.type === "limit")).toMatchObject({ kind: "usage_limit", resetAt: "2026-12-07T14:05:00.000Z" });
    await session.stop();
  });
});
