import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ProviderInstanceConfig } from "../config/config.js";
import type { ProviderCapabilities, ProviderDriver } from "../providers/adapter.js";
import { ProviderError } from "../providers/adapter.js";
import { ProviderRegistry } from "../providers/registry.js";
import type { ActingCaller } from "./caller.js";
import { AppError } from "./errors.js";
import { resolveTarget } from "./policy.js";

/**
 * Target resolution's fallbacks on a real registry whose drivers are fakes
 * (only their probe answers matter): the instance asked for or inherited,
 * then the request's fallbacks, then the instance's failover list.
 */

const capabilities: ProviderCapabilities = {
  steering: true,
  interrupt: true,
  restart: false,
  fork: false,
  resume: true,
  runtimeModes: ["full-access"],
  models: ["m-large", "m-small"],
  mcpTransport: "http",
};

const driver: ProviderDriver = {
  driver: "fake",
  optionsSchema: z.strictObject({}),
  capabilities: () => capabilities,
  probe: () => Promise.resolve({ installed: true, authenticated: true, reason: null }),
  openSession: () => Promise.reject(new ProviderError("unsupported", "fake driver opens no sessions")),
};

function registryOf(...instances: Array<[string, Partial<ProviderInstanceConfig>]>): ProviderRegistry {
  const configs = instances.map(([id, extra]): ProviderInstanceConfig => ({ id, driver: "fake", enabled: true, displayName: null, models: null, options: {}, ...extra }));
  return new ProviderRegistry(configs, new Map([["fake", driver]]));
}

/** A caller whose thread runs on `providerInstanceId` with `model`. */
function callerOn(providerInstanceId: string, model: string): ActingCaller {
  return {
    kind: "thread",
    identity: { kind: "owner" } as ActingCaller["identity"],
    thread: { providerInstanceId, modelSelection: { providerInstanceId, model } } as ActingCaller["thread"],
    activeRun: null,
    requestScope: "owner",
    providerInstanceId,
  };
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  return error;
}

describe("resolveTarget with fallbacks", () => {
  it("keeps an available target and the caller's model on the caller's own instance, with no failover noted", async () => {
    const registry = registryOf(["a", { failover: ["b"] }], ["b", {}]);
    expect(await resolveTarget(registry, callerOn("a", "m-small"), undefined)).toMatchObject({ providerInstanceId: "a", model: "m-small", failedOver: null });
  });

  it("passes over an unavailable explicit target for the request's fallbacks first, then the instance's failover list", async () => {
    const registry = registryOf(["a", { enabled: false, failover: ["c"] }], ["b", { enabled: false }], ["c", {}], ["d", {}]);
    const caller = callerOn("d", "m-small");
    expect(await resolveTarget(registry, caller, { providerInstanceId: "a", fallbacks: [{ providerInstanceId: "b" }, { providerInstanceId: "d", model: "m-small" }] })).toMatchObject({
      providerInstanceId: "d",
      model: "m-small",
      failedOver: { fromProviderInstanceId: "a", reason: "disabled in config" },
    });
    expect(await resolveTarget(registry, caller, { providerInstanceId: "a" })).toMatchObject({ providerInstanceId: "c", model: "m-large", failedOver: { fromProviderInstanceId: "a" } });
  });

  it("sends an inherited instance's work to its failover list before any other instance", async () => {
    const registry = registryOf(["any", {}], ["a", { enabled: false, failover: ["b"] }], ["b", {}]);
    expect(await resolveTarget(registry, callerOn("a", "m-small"), undefined)).toMatchObject({ providerInstanceId: "b", model: "m-large", failedOver: { fromProviderInstanceId: "a", reason: "disabled in config" } });
    // Without a failover list, an inherited instance gives way to any available one, as before, and nothing is noted.
    const plain = registryOf(["any", {}], ["a", { enabled: false }]);
    expect(await resolveTarget(plain, callerOn("a", "m-small"), undefined)).toMatchObject({ providerInstanceId: "any", failedOver: null });
  });

  it("refuses with every reason when no fallback is available, and refuses a fallback model the instance does not offer", async () => {
    const registry = registryOf(["a", { enabled: false }], ["b", { enabled: false }], ["c", {}]);
    const none = await refusal(resolveTarget(registry, callerOn("c", "m-small"), { providerInstanceId: "a", fallbacks: [{ providerInstanceId: "b" }] }));
    expect([none.code, none.message]).toEqual(["provider_unavailable", "a is unavailable: disabled in config; b is unavailable: disabled in config"]);
    const unknown = await refusal(resolveTarget(registry, callerOn("c", "m-small"), { providerInstanceId: "a", fallbacks: [{ providerInstanceId: "zz" }] }));
    expect([unknown.code, unknown.message]).toEqual(["provider_unavailable", "no provider instance named zz; the instances are a, b, c"]);
    const model = await refusal(resolveTarget(registry, callerOn("c", "m-small"), { providerInstanceId: "a", fallbacks: [{ providerInstanceId: "c", model: "nope" }] }));
    expect([model.code, model.message]).toEqual(["model_unavailable", "c does not advertise model nope; it offers m-large, m-small"]);
    expect(await resolveTarget(registry, callerOn("c", "m-small"), { driverKind: "other", fallbacks: [{ providerInstanceId: "c" }] })).toMatchObject({
      providerInstanceId: "c",
      failedOver: { fromProviderInstanceId: "any other instance", reason: "no available provider instance of driver other" },
    });
    const alone = await refusal(resolveTarget(registry, callerOn("c", "m-small"), { providerInstanceId: "a" }));
    expect(alone.message).toBe("a is unavailable: disabled in config");
  });
});
