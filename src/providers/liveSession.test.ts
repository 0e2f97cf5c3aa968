import { describe, expect, it } from "vitest";
import type { ProviderInstanceConfig } from "../config/config.js";
import type { DelegatedTask } from "../contracts/entities/delegatedTasks.js";
import type { ProviderLimitEvent } from "../contracts/providerEvents.js";
import { initialState } from "../core/state.js";
import type { LiveSession, TurnTries } from "./liveSession.js";
import { OUTAGE_RETRY_AFTER_MS, outageStop, usageLimitStop } from "./liveSession.js";
import { ProviderRegistry } from "./registry.js";

/** What a failed turn's stop is read as (docs/limits.md): a usage limit's reset, or an outage with somewhere to go. */

const NOW = Date.parse("2026-12-07T14:00:00.000Z");

function instance(id: string, extra: Partial<ProviderInstanceConfig> = {}): ProviderInstanceConfig {
  return { id, driver: "fake", enabled: true, displayName: null, models: null, options: {}, ...extra };
}

function session(providerInstanceId: string): LiveSession {
  return { providerInstanceId, usageLimits: new Map(), turns: new Map() } as unknown as LiveSession;
}

function tries(kind: ProviderLimitEvent["kind"] | null): TurnTries {
  const transient = kind === null ? null : ({ type: "limit", runId: "run:1", kind, message: "Service unavailable (HTTP 503)", retryAfterMs: null, resetAt: null, providerRetrying: false } as ProviderLimitEvent);
  return { input: {} as TurnTries["input"], startedAt: NOW - 60_000, retries: 3, transient, backingOff: false };
}

function context(instances: ProviderInstanceConfig[], on: string, fallbacks: string[] = []) {
  const state = initialState();
  if (fallbacks.length > 0) {
    state.tasks.set("subagent:1", { fallbacks: fallbacks.map((providerInstanceId) => ({ providerInstanceId })) } as unknown as DelegatedTask);
    state.taskByChildThread.set("thread:1", "subagent:1");
  }
  return { session: session(on), registry: new ProviderRegistry(instances, new Map()), state, threadId: "thread:1", runId: "run:1" };
}

describe("a failed turn's stop", () => {
  it("after an overload past the retries, with a failover list, is an outage tried again later", () => {
    const stop = outageStop(context([instance("a", { failover: ["b"] }), instance("b")], "a"), tries("overloaded"), NOW);
    expect(stop).toEqual({ resetAt: new Date(NOW + OUTAGE_RETRY_AFTER_MS).toISOString(), message: "Service unavailable (HTTP 503)", autoResume: true, cause: "outage" });
  });

  it("is an outage with the delegation's fallbacks alone, and a rate limit counts too", () => {
    expect(outageStop(context([instance("a"), instance("b")], "a", ["b"]), tries("rate_limit"), NOW)).toMatchObject({ cause: "outage" });
  });

  it("is an ordinary failure with nowhere else to go, with autoResume off, or when the last try met no transient limit", () => {
    expect(outageStop(context([instance("a")], "a"), tries("overloaded"), NOW)).toBeUndefined();
    // A fallback naming the instance itself is nowhere else.
    expect(outageStop(context([instance("a")], "a", ["a"]), tries("overloaded"), NOW)).toBeUndefined();
    expect(outageStop(context([instance("a", { failover: ["b"], autoResume: false }), instance("b")], "a"), tries("overloaded"), NOW)).toBeUndefined();
    expect(outageStop(context([instance("a", { failover: ["b"] }), instance("b")], "a"), tries(null), NOW)).toBeUndefined();
    expect(outageStop(context([instance("a", { failover: ["b"] }), instance("b")], "a"), undefined, NOW)).toBeUndefined();
  });

  it("after a usage limit carries its reset and the instance's autoResume", () => {
    const ctx = context([instance("a", { autoResume: false })], "a");
    expect(usageLimitStop(ctx)).toBeUndefined();
    ctx.session.usageLimits.set("run:1", { resetAt: "2026-12-07T15:00:00.000Z", message: "You've hit your limit" });
    expect(usageLimitStop(ctx)).toEqual({ resetAt: "2026-12-07T15:00:00.000Z", message: "You've hit your limit", autoResume: false });
  });
});
