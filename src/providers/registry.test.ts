import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ProviderCapabilities, ProviderDriver, ProviderProbe } from "./adapter.js";
import { ProviderError } from "./adapter.js";
import type { ProviderInstanceConfig } from "../config/config.js";
import { ProviderRegistry } from "./registry.js";

const capabilities: ProviderCapabilities = {
  steering: true,
  interrupt: true,
  restart: false,
  fork: false,
  resume: true,
  runtimeModes: ["approval-required", "full-access"],
  models: ["fake-large", "fake-small"],
  mcpTransport: "http",
};

function fakeDriver(driver: string, probe: () => Promise<ProviderProbe>): ProviderDriver & { probes: number } {
  const fake = {
    driver,
    optionsSchema: z.strictObject({}),
    probes: 0,
    capabilities: () => capabilities,
    probe: async () => {
      fake.probes += 1;
      return probe();
    },
    openSession: () => Promise.reject(new ProviderError("unsupported", "fake driver opens no sessions")),
  };
  return fake;
}

function instance(id: string, driver: string, extra: Partial<ProviderInstanceConfig> = {}): ProviderInstanceConfig {
  return { id, driver, enabled: true, displayName: null, models: null, options: {}, ...extra };
}

const ok = (): Promise<ProviderProbe> => Promise.resolve({ installed: true, authenticated: true, reason: null });

describe("ProviderRegistry availability", () => {
  it("an available instance reports capabilities, models and no reason", async () => {
    const registry = new ProviderRegistry([instance("fake", "fake")], new Map([["fake", fakeDriver("fake", ok)]]));
    const availability = await registry.get("fake");
    expect(availability).toMatchObject({
      driver: "fake",
      displayName: "fake",
      enabled: true,
      installed: true,
      authenticated: true,
      adapterPresent: true,
      available: true,
      reason: null,
      models: ["fake-large", "fake-small"],
    });
    expect(availability?.capabilities).toEqual(capabilities);
  });

  it("a disabled instance is unavailable and never probed", async () => {
    const driver = fakeDriver("fake", ok);
    const registry = new ProviderRegistry([instance("off", "fake", { enabled: false })], new Map([["fake", driver]]));
    const availability = await registry.get("off");
    expect(availability).toMatchObject({ enabled: false, available: false, reason: "disabled in config", adapterPresent: true });
    expect(driver.probes).toBe(0);
  });

  it("an instance whose driver has no adapter is listed but unavailable", async () => {
    const registry = new ProviderRegistry([instance("gem", "gemini", { displayName: "Gemini" })], new Map());
    const [availability] = await registry.list();
    expect(availability).toMatchObject({
      displayName: "Gemini",
      adapterPresent: false,
      available: false,
      capabilities: null,
      models: [],
      reason: "no adapter for driver gemini",
    });
  });

  it("a probe that finds no executable says so", async () => {
    const driver = fakeDriver("fake", () => Promise.resolve({ installed: false, authenticated: false, reason: "fake-cli" }));
    const registry = new ProviderRegistry([instance("fake", "fake")], new Map([["fake", driver]]));
    expect(await registry.get("fake")).toMatchObject({
      installed: false,
      available: false,
      reason: "executable not found: fake-cli",
    });
  });

  it("a probe that finds no login says so", async () => {
    const driver = fakeDriver("fake", () =>
      Promise.resolve({ installed: true, authenticated: false, reason: "run `fake login`" }),
    );
    const registry = new ProviderRegistry([instance("fake", "fake")], new Map([["fake", driver]]));
    expect(await registry.get("fake")).toMatchObject({
      installed: true,
      authenticated: false,
      available: false,
      reason: "not authenticated: run `fake login`",
    });
  });

  it("a probe that throws makes the instance unavailable instead of failing the list", async () => {
    const driver = fakeDriver("fake", () => Promise.reject(new Error("spawn EACCES")));
    const registry = new ProviderRegistry([instance("fake", "fake"), instance("other", "none")], new Map([["fake", driver]]));
    const list = await registry.list();
    expect(list.map((a) => [a.instance.id, a.available, a.reason])).toEqual([
      ["fake", false, "probe failed: spawn EACCES"],
      ["other", false, "no adapter for driver none"],
    ]);
  });

  it("configured models override the driver's", async () => {
    const registry = new ProviderRegistry(
      [instance("fake", "fake", { models: ["pinned"] })],
      new Map([["fake", fakeDriver("fake", ok)]]),
    );
    expect((await registry.get("fake"))?.models).toEqual(["pinned"]);
  });

  it("unknown ids give null", async () => {
    const registry = new ProviderRegistry([instance("fake", "fake")], new Map([["fake", fakeDriver("fake", ok)]]));
    expect(await registry.get("nope")).toBeNull();
    expect(registry.driverFor("nope")).toBeNull();
    expect(registry.driverFor("fake")?.driver).toBe("fake");
  });
});

describe("ProviderRegistry probe cache", () => {
  it("reuses a probe within the TTL, shares concurrent probes, and probes again after it", async () => {
    let now = 1_000;
    const driver = fakeDriver("fake", ok);
    const registry = new ProviderRegistry([instance("fake", "fake")], new Map([["fake", driver]]), {
      probeTtlMs: 5_000,
      now: () => now,
    });
    await Promise.all([registry.list(), registry.get("fake"), registry.get("fake")]);
    expect(driver.probes).toBe(1);
    now += 4_999;
    await registry.get("fake");
    expect(driver.probes).toBe(1);
    now += 1;
    await registry.get("fake");
    expect(driver.probes).toBe(2);
    registry.invalidate("fake");
    await registry.get("fake");
    expect(driver.probes).toBe(3);
  });

  it("serves a stale available answer at once while probing again, and probes a stale unavailable one before answering", async () => {
    let now = 1_000;
    const answers: { resolve: (probe: ProviderProbe) => void }[] = [];
    const driver = fakeDriver("fake", () => new Promise<ProviderProbe>((resolve) => answers.push({ resolve })));
    const registry = new ProviderRegistry([instance("fake", "fake")], new Map([["fake", driver]]), { probeTtlMs: 5_000, now: () => now });
    const first = registry.get("fake");
    answers[0]!.resolve({ installed: true, authenticated: true, reason: null });
    expect((await first)?.available).toBe(true);

    now += 5_000;
    // The CLI went away: the stale answer still serves this call, and a new probe is running.
    expect((await registry.get("fake"))?.available).toBe(true);
    expect(driver.probes).toBe(2);
    expect((await registry.get("fake"))?.available).toBe(true);
    expect(driver.probes).toBe(2); // one refresh at a time
    answers[1]!.resolve({ installed: false, authenticated: false, reason: "codex" });
    await new Promise((resolve) => setImmediate(resolve)); // the settled probe's callbacks run
    const after = await registry.get("fake");
    expect(after).toMatchObject({ available: false, reason: "executable not found: codex" });
    expect(driver.probes).toBe(2);

    now += 5_000;
    // A stale unavailable answer is not served: the caller waits for the new probe.
    const fixed = registry.get("fake");
    expect(driver.probes).toBe(3);
    answers[2]!.resolve({ installed: true, authenticated: true, reason: null });
    expect((await fixed)?.available).toBe(true);
  });
});

describe("ProviderRegistry limit windows", () => {
  const RESET = "2026-12-07T14:05:00.000Z";

  it("a usage limit with a reset ahead makes the instance unavailable until then, with the reset time; then it is available again", async () => {
    let now = Date.parse("2026-12-07T14:00:00Z");
    const registry = new ProviderRegistry([instance("claude", "fake")], new Map([["fake", fakeDriver("fake", ok)]]), { now: () => now });
    registry.noteLimit("claude", { kind: "usage_limit", resetAt: RESET, message: "You've hit your limit" });
    expect(await registry.get("claude")).toMatchObject({ available: false, reason: `usage limit reached, resets at ${RESET}: You've hit your limit`, limitResetAt: RESET });
    now = Date.parse(RESET) - 1;
    expect(await registry.get("claude")).toMatchObject({ available: false, limitResetAt: RESET });
    now = Date.parse(RESET);
    const after = await registry.get("claude");
    expect(after).toMatchObject({ available: true, reason: null });
    expect(after?.limitResetAt).toBeUndefined();
  });

  it("a later reset extends the window, an earlier one does not shorten it; other limits and resets already past leave the instance available", async () => {
    const now = Date.parse("2026-12-07T14:00:00Z");
    const registry = new ProviderRegistry([instance("claude", "fake"), instance("codex", "fake")], new Map([["fake", fakeDriver("fake", ok)]]), { now: () => now });
    registry.noteLimit("claude", { kind: "usage_limit", resetAt: RESET, message: "first" });
    registry.noteLimit("claude", { kind: "usage_limit", resetAt: "2026-12-07T15:00:00+01:00", message: "earlier" });
    expect(await registry.get("claude")).toMatchObject({ limitResetAt: RESET });
    registry.noteLimit("claude", { kind: "usage_limit", resetAt: "2026-12-07T16:00:00Z", message: "later" });
    expect(await registry.get("claude")).toMatchObject({ limitResetAt: "2026-12-07T16:00:00.000Z", reason: expect.stringContaining("later") });
    registry.noteLimit("codex", { kind: "rate_limit", resetAt: null, message: "429" });
    registry.noteLimit("codex", { kind: "usage_limit", resetAt: null, message: "no reset told" });
    registry.noteLimit("codex", { kind: "usage_limit", resetAt: "2026-12-07T13:00:00Z", message: "already reset" });
    expect(await registry.get("codex")).toMatchObject({ available: true, reason: null });
  });

  it("an instance unavailable for another reason keeps that reason", async () => {
    const registry = new ProviderRegistry([instance("claude", "fake")], new Map([["fake", fakeDriver("fake", () => Promise.resolve({ installed: true, authenticated: false, reason: null }))]]), {
      now: () => Date.parse("2026-12-07T14:00:00Z"),
    });
    registry.noteLimit("claude", { kind: "usage_limit", resetAt: RESET, message: "limit" });
    const answer = await registry.get("claude");
    expect(answer).toMatchObject({ available: false, reason: expect.stringMatching(/^not authenticated/) });
    expect(answer?.limitResetAt).toBeUndefined();
  });

  it("shares its windows: each one this node meets is recorded, and one another node recorded holds the instance here until its reset", async () => {
    let now = Date.parse("2026-12-07T14:00:00Z");
    const registry = new ProviderRegistry([instance("claude", "fake"), instance("codex", "fake")], new Map([["fake", fakeDriver("fake", ok)]]), { now: () => now });
    const recorded = new Map<string, { resetAt: string; message: string }>();
    const sent: unknown[] = [];
    registry.shareLimitWindows({ record: (window) => sent.push(window), recorded: (id) => recorded.get(id) ?? null });

    registry.noteLimit("claude", { kind: "usage_limit", resetAt: "2026-12-07T15:05:00+01:00", message: "You've hit your limit" });
    // Not again for a reset no later; a rate limit is no window.
    registry.noteLimit("claude", { kind: "usage_limit", resetAt: RESET, message: "again" });
    registry.noteLimit("claude", { kind: "rate_limit", resetAt: null, message: "429" });
    expect(sent).toEqual([{ providerInstanceId: "claude", resetAt: RESET, message: "You've hit your limit" }]);

    // Another node's window: codex is unavailable here until its reset, then available again.
    recorded.set("codex", { resetAt: "2026-12-07T14:30:00.000Z", message: "quota spent" });
    expect(await registry.get("codex")).toMatchObject({ available: false, limitResetAt: "2026-12-07T14:30:00.000Z", reason: "usage limit reached, resets at 2026-12-07T14:30:00.000Z: quota spent" });
    // The later of this node's window and the recorded one holds.
    recorded.set("claude", { resetAt: "2026-12-07T14:02:00.000Z", message: "older" });
    expect(await registry.get("claude")).toMatchObject({ limitResetAt: RESET });
    recorded.set("claude", { resetAt: "2026-12-07T16:00:00.000Z", message: "newer, from another node" });
    expect(await registry.get("claude")).toMatchObject({ limitResetAt: "2026-12-07T16:00:00.000Z", reason: expect.stringContaining("newer") });
    now = Date.parse("2026-12-07T16:00:00.000Z");
    expect(await registry.get("claude")).toMatchObject({ available: true });
    expect(await registry.get("codex")).toMatchObject({ available: true });
  });
});

describe("ProviderRegistry cool-downs", () => {
  it("a rate limit or an overload cools the instance down for its Retry-After (at least the base backoff); a later one extends it, an earlier end never shortens it", () => {
    let now = Date.parse("2026-12-07T14:00:00Z");
    const registry = new ProviderRegistry([instance("claude", "fake"), instance("codex", "fake")], new Map([["fake", fakeDriver("fake", ok)]]), { now: () => now });
    expect(registry.coolDownMs("claude")).toBe(0);
    registry.noteLimit("claude", { kind: "rate_limit", resetAt: null, retryAfterMs: 30_000, message: "429" });
    registry.noteLimit("claude", { kind: "overloaded", resetAt: null, retryAfterMs: null, message: "529" });
    expect(registry.coolDownMs("claude")).toBe(30_000);
    expect(registry.coolDownMs("codex")).toBe(0);
    now += 10_000;
    expect(registry.coolDownMs("claude")).toBe(20_000);
    registry.noteLimit("claude", { kind: "overloaded", resetAt: null, retryAfterMs: 60_000, message: "529 again" });
    expect(registry.coolDownMs("claude")).toBe(60_000);
    now += 60_000;
    expect(registry.coolDownMs("claude")).toBe(0);
    registry.noteLimit("codex", { kind: "rate_limit", resetAt: null, retryAfterMs: null, message: "429 without Retry-After" });
    expect(registry.coolDownMs("codex")).toBe(1_000);
  });
});
