import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ProviderSessionRuntime } from "../adapter.js";
import type { NormalizedProviderEvent } from "../events.js";
import { StdioRpcError, StdioRpcErrorCode } from "../kit/stdioRpcError.js";
import { type ScriptedAgentSetup, acpScript, scriptedAgentSetup, waitForEvent } from "../../testkit/acpAgentHarness.js";
import { acpPromptLimit } from "./acpLimits.js";
import { createAcpDriver } from "./driver.js";

/**
 * An ACP agent's limit signals: a failed session/prompt's JSON-RPC error.
 * The shapes are Gemini CLI's model API failure (google.rpc status 429
 * RESOURCE_EXHAUSTED with a RetryInfo) and ACP's auth_required; the last
 * test sends one through a real ACP agent process (the scripted agent).
 */

const NOW = Date.parse("2026-12-07T14:00:00Z");

function rpcError(message: string, code: number, data?: unknown): StdioRpcError {
  return new StdioRpcError(StdioRpcErrorCode.rpc, `session/prompt failed: ${message}`, code, data);
}

const GEMINI_QUOTA = {
  error: {
    code: 429,
    message: "You exceeded your current quota, please check your plan and billing details.",
    status: "RESOURCE_EXHAUSTED",
    details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "58s" }],
  },
};

describe("acp limit signals", () => {
  it("a quota the model API refused, with its retry delay: a usage_limit that resets after the delay", () => {
    expect(acpPromptLimit(rpcError("Internal error", -32603, GEMINI_QUOTA), NOW)).toEqual({
      kind: "usage_limit",
      retryAfterMs: 58_000,
      resetAt: "2026-12-07T14:00:58.000Z",
      providerRetrying: false,
      message: "session/prompt failed: Internal error",
    });
  });

  it("a 429 that names no quota is a rate_limit; its retry-after is read in seconds or as a date", () => {
    expect(acpPromptLimit(rpcError("Too Many Requests", -32603, { status: 429, retryAfter: 20 }), NOW)).toMatchObject({ kind: "rate_limit", retryAfterMs: 20_000, resetAt: null });
    expect(acpPromptLimit(rpcError("request failed", -32603, { statusCode: 429, retryAfter: "Mon, 07 Dec 2026 14:01:00 GMT" }), NOW)).toMatchObject({ kind: "rate_limit", retryAfterMs: 60_000 });
  });

  it("overloaded and server errors are overloaded; auth_required is auth_expired", () => {
    expect(acpPromptLimit(rpcError("model overloaded", -32603), NOW)).toMatchObject({ kind: "overloaded" });
    expect(acpPromptLimit(rpcError("request failed", -32603, { error: { code: 503 } }), NOW)).toMatchObject({ kind: "overloaded" });
    expect(acpPromptLimit(rpcError("Authentication required", -32000), NOW)).toMatchObject({ kind: "auth_expired" });
  });

  it("failures that are no limit, and errors that are not the agent's answer, are none", () => {
    expect(acpPromptLimit(rpcError("Invalid params", -32602, { field: "prompt" }), NOW)).toBeNull();
    expect(acpPromptLimit(new StdioRpcError(StdioRpcErrorCode.closed, "session/prompt failed: too many requests"), NOW)).toBeNull();
    expect(acpPromptLimit(new Error("429"), NOW)).toBeNull();
  });
});

describe("acp driver: a prompt failed on a limit", () => {
  let agent: ScriptedAgentSetup;
  let sessions: ProviderSessionRuntime[];
  beforeEach(() => {
    agent = scriptedAgentSetup();
    sessions = [];
  });
  afterEach(async () => {
    for (const session of sessions) await session.stop();
    agent.close();
  });

  it("signals the limit, then fails the turn", async () => {
    const events: NormalizedProviderEvent[] = [];
    const session = await createAcpDriver().openSession({
      instance: agent.instance({ caps: {}, options: {} }),
      threadId: "thread:1",
      providerSessionId: "provider-session:1",
      cwd: agent.dir,
      runtimeMode: "full-access",
      interactionMode: "default",
      model: null,
      mcp: { url: "http://127.0.0.1:9/mcp", token: "loom-test-token-0123456789abcdef" },
      onEvent: (event) => events.push(event),
    });
    sessions.push(session);
    await session.startTurn({ runId: "run-1", input: acpScript({ chunk: "working" }, { fail: { code: -32603, message: "Internal error", data: GEMINI_QUOTA } }) });
    await waitForEvent(events, (event) => event.type === "turn.completed", "the turn's end");
    const limit = events.findIndex((event) => event.type === "limit");
    expect(events[limit]).toMatchObject({ type: "limit", runId: "run-1", kind: "usage_limit", retryAfterMs: 58_000 });
    expect(events.at(-1)).toMatchObject({ type: "turn.completed", status: "failed" });
    expect(limit).toBeLessThan(events.length - 1);
  });
});
