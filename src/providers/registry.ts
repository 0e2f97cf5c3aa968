import type { ProviderCapabilities, ProviderDriver, ProviderProbe } from "./adapter.js";
import type { ProviderLimitEvent } from "./events.js";
import { TRANSIENT_BASE_DELAY_MS } from "./transientRetry.js";
import type { ProviderInstanceConfig } from "../config/config.js";

/**
 * Whether a configured provider instance can run work right now, with the
 * reason in words a model can read (spec 000, Provider Support and
 * orchestrator_capabilities). Instances without an adapter are still listed,
 * marked unavailable, so provider selection stays model-visible.
 */
export interface ProviderAvailability {
  readonly instance: ProviderInstanceConfig;
  readonly driver: string;
  readonly displayName: string;
  readonly enabled: boolean;
  /** False also when the instance was not probed (disabled, or no adapter). */
  readonly installed: boolean;
  readonly authenticated: boolean;
  readonly adapterPresent: boolean;
  /** enabled && adapterPresent && installed && authenticated. */
  readonly available: boolean;
  /** Null exactly when available. */
  readonly reason: string | null;
  /** Set while a usage limit the provider reported makes the instance unavailable: when it resets (ISO 8601). */
  readonly limitResetAt?: string;
  readonly capabilities: ProviderCapabilities | null;
  /** The instance's configured models, else the driver's advertised ones. */
  readonly models: readonly string[];
  /** Models the driver still accepts but no longer offers by default (capabilities.legacyModels). */
  readonly legacyModels: readonly string[];
  /** The user's favorites (config `favoriteModels`). */
  readonly favoriteModels: readonly string[];
  /** Models the user added beyond the catalog (config `customModels`); accepted as targets. */
  readonly customModels: readonly string[];
}

export interface ProviderRegistryOptions {
  /** How long a probe answer is reused. Probes may spawn processes. */
  readonly probeTtlMs?: number;
  readonly now?: () => number;
}

export const DEFAULT_PROBE_TTL_MS = 5_000;

interface CachedProbe {
  readonly at: number;
  readonly result: Promise<ProbeOutcome>;
  /** The answer once the probe settled: a stale available answer is served while a new probe runs. */
  settled: ProbeOutcome | null;
  /** A newer probe started because this answer went stale (at most one at a time). */
  refreshing: boolean;
}

/** Usage limit windows shared with the other nodes sharing the log (docs/limits.md, "Unavailable until the reset"). */
export interface SharedLimitWindows {
  /** Record a window this node's session met. */
  record(window: { readonly providerInstanceId: string; readonly resetAt: string; readonly message: string }): void;
  /** The window recorded for an instance (by any node), if any; its reset may have passed. */
  recorded(instanceId: string): { readonly resetAt: string; readonly message: string } | null;
}

export class ProviderRegistry {
  private readonly instances: Map<string, ProviderInstanceConfig>;
  private readonly probes = new Map<string, CachedProbe>();
  /** Usage limits this node's sessions reported, by instance, until they reset (docs/limits.md). */
  private readonly limitWindows = new Map<string, { readonly until: number; readonly resetAt: string; readonly message: string }>();
  /** Until when (epoch ms) a rate limit or overload this node's sessions met cools the instance down (docs/limits.md, "Transient errors"). */
  private readonly coolDowns = new Map<string, number>();
  /** Where windows are shared with the other nodes (the log), once the engine is up. */
  private shared: SharedLimitWindows | null = null;
  private readonly probeTtlMs: number;
  private readonly now: () => number;

  constructor(
    instances: readonly ProviderInstanceConfig[],
    private readonly drivers: ReadonlyMap<string, ProviderDriver>,
    options: ProviderRegistryOptions = {},
  ) {
    this.instances = new Map(instances.map((instance) => [instance.id, instance]));
    this.probeTtlMs = options.probeTtlMs ?? DEFAULT_PROBE_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  /** Every configured instance in config order, probed concurrently. */
  async list(): Promise<ProviderAvailability[]> {
    return Promise.all([...this.instances.values()].map((instance) => this.availabilityOf(instance)));
  }

  /** Null when no instance has this id. */
  async get(instanceId: string): Promise<ProviderAvailability | null> {
    const instance = this.instances.get(instanceId);
    return instance === undefined ? null : this.availabilityOf(instance);
  }

  instance(instanceId: string): ProviderInstanceConfig | null {
    return this.instances.get(instanceId) ?? null;
  }

  /** The driver behind an instance, or null when the instance or its adapter is missing. */
  driverFor(instanceId: string): ProviderDriver | null {
    const instance = this.instances.get(instanceId);
    return instance === undefined ? null : (this.drivers.get(instance.driver) ?? null);
  }

  /**
   * Add an instance, or replace the one with its id (a registry agent just
   * prepared, docs/providers/acp.md): sessions opened after this use it, and
   * its next probe is fresh. The caller validated it against its driver.
   */
  register(instance: ProviderInstanceConfig): void {
    this.instances.set(instance.id, instance);
    this.probes.delete(instance.id);
  }

  /**
   * A limit the instance's provider reported (the session manager passes on
   * every limit event): a usage limit whose reset is ahead makes the
   * instance unavailable until then; a later reset extends it. Other limits
   * pass (the provider or the run retries them).
   */
  noteLimit(instanceId: string, limit: Pick<ProviderLimitEvent, "kind" | "resetAt" | "message"> & { readonly retryAfterMs?: number | null }): void {
    if (limit.kind === "rate_limit" || limit.kind === "overloaded") {
      // A shared cool-down: every retry on the instance waits for it, so many children do not storm it at once.
      const until = this.now() + Math.max(limit.retryAfterMs ?? 0, TRANSIENT_BASE_DELAY_MS);
      if ((this.coolDowns.get(instanceId) ?? 0) < until) this.coolDowns.set(instanceId, until);
      return;
    }
    if (limit.kind !== "usage_limit" || limit.resetAt === null) return;
    const until = Date.parse(limit.resetAt);
    if (Number.isNaN(until) || until <= this.now()) return;
    const current = this.limitWindows.get(instanceId);
    if (current !== undefined && current.until >= until) return;
    this.limitWindows.set(instanceId, { until, resetAt: new Date(until).toISOString(), message: limit.message });
    this.shared?.record({ providerInstanceId: instanceId, resetAt: new Date(until).toISOString(), message: limit.message });
  }

  /**
   * Share usage limit windows through the log (docs/limits.md): each window
   * this node's sessions meet is recorded there, and the windows other
   * nodes recorded make their instances unavailable here too.
   */
  shareLimitWindows(shared: SharedLimitWindows): void {
    this.shared = shared;
  }

  /** What is left of the instance's cool-down after a rate limit or an overload, in ms (0 when none). */
  coolDownMs(instanceId: string): number {
    const until = this.coolDowns.get(instanceId);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left <= 0) this.coolDowns.delete(instanceId);
    return Math.max(0, left);
  }

  /** Forget cached probe answers (all, or one instance's), e.g. after a login. */
  invalidate(instanceId?: string): void {
    if (instanceId === undefined) {
      this.probes.clear();
    } else {
      this.probes.delete(instanceId);
    }
  }

  private async availabilityOf(instance: ProviderInstanceConfig): Promise<ProviderAvailability> {
    const driver = this.drivers.get(instance.driver);
    const capabilities = driver === undefined ? null : driver.capabilities(instance);
    const base = {
      instance,
      driver: instance.driver,
      displayName: instance.displayName ?? instance.id,
      enabled: instance.enabled,
      adapterPresent: driver !== undefined,
      capabilities,
      models: instance.models ?? capabilities?.models ?? [],
      legacyModels: capabilities?.legacyModels ?? [],
      favoriteModels: instance.favoriteModels ?? [],
      customModels: instance.customModels ?? [],
    };
    if (!instance.enabled) {
      return { ...base, installed: false, authenticated: false, available: false, reason: "disabled in config" };
    }
    if (driver === undefined) {
      return {
        ...base,
        installed: false,
        authenticated: false,
        available: false,
        reason: `no adapter for driver ${instance.driver}`,
      };
    }
    const probed = { ...base, ...verdict(instance, await this.probe(driver, instance)) };
    const window = this.limitWindow(instance.id);
    if (!probed.available || window === null) return probed;
    return { ...probed, available: false, reason: `usage limit reached, resets at ${window.resetAt}: ${window.message}`, limitResetAt: window.resetAt };
  }

  /** The instance's usage limit still in force, if any; a window whose reset passed is forgotten. */
  private limitWindow(instanceId: string): { readonly resetAt: string; readonly message: string } | null {
    let window: { readonly until: number; readonly resetAt: string; readonly message: string } | null = this.limitWindows.get(instanceId) ?? null;
    if (window !== null && window.until <= this.now()) {
      this.limitWindows.delete(instanceId);
      window = null;
    }
    const recorded = this.shared?.recorded(instanceId) ?? null;
    const until = recorded === null ? Number.NaN : Date.parse(recorded.resetAt);
    if (recorded !== null && until > this.now() && (window === null || until > window.until)) return recorded;
    return window;
  }

  /**
   * Concurrent callers share one probe; a probe that throws counts as not
   * installed. An answer older than the TTL that found the instance
   * available is still served at once while a new probe runs in the
   * background (probes may spawn the agent's CLI, hundreds of milliseconds
   * a delegation should not wait for); callers after it settles get the new
   * answer.
   * A stale answer of unavailable is probed again before answering, so a
   * fix (an install, a login) shows on the next call.
   */
  private probe(driver: ProviderDriver, instance: ProviderInstanceConfig): Promise<ProbeOutcome> {
    const now = this.now();
    const cached = this.probes.get(instance.id);
    if (cached !== undefined && now - cached.at < this.probeTtlMs) {
      return cached.result;
    }
    if (cached !== undefined && cached.settled !== null && isAvailable(cached.settled)) {
      if (!cached.refreshing) {
        cached.refreshing = true;
        const next = newProbe(driver, instance, now);
        // The new answer replaces the stale one once it is in; invalidate() in between wins.
        void next.result.then(() => {
          if (this.probes.get(instance.id) === cached) this.probes.set(instance.id, next);
        });
      }
      return cached.result;
    }
    const entry = newProbe(driver, instance, now);
    this.probes.set(instance.id, entry);
    return entry.result;
  }
}

function newProbe(driver: ProviderDriver, instance: ProviderInstanceConfig, now: number): CachedProbe {
  const entry: CachedProbe = { at: now, result: runProbe(driver, instance), settled: null, refreshing: false };
  void entry.result.then((outcome) => {
    entry.settled = outcome;
  });
  return entry;
}

/** A probe's answer, or the message of the exception it threw instead. */
type ProbeOutcome =
  | { readonly kind: "answered"; readonly probe: ProviderProbe }
  | { readonly kind: "threw"; readonly message: string };

async function runProbe(driver: ProviderDriver, instance: ProviderInstanceConfig): Promise<ProbeOutcome> {
  try {
    return { kind: "answered", probe: await driver.probe(instance) };
  } catch (error) {
    return { kind: "threw", message: error instanceof Error ? error.message : String(error) };
  }
}

function isAvailable(outcome: ProbeOutcome): boolean {
  return outcome.kind === "answered" && outcome.probe.installed && outcome.probe.authenticated;
}

interface Verdict {
  readonly installed: boolean;
  readonly authenticated: boolean;
  readonly available: boolean;
  readonly reason: string | null;
}

function verdict(instance: ProviderInstanceConfig, outcome: ProbeOutcome): Verdict {
  if (outcome.kind === "threw") {
    return { installed: false, authenticated: false, available: false, reason: `probe failed: ${outcome.message}` };
  }
  const { installed, authenticated, reason } = outcome.probe;
  if (!installed) {
    return { installed, authenticated, available: false, reason: `executable not found: ${reason ?? instance.driver}` };
  }
  if (!authenticated) {
    return {
      installed,
      authenticated,
      available: false,
      reason: `not authenticated: ${reason ?? `log in to ${instance.driver}`}`,
    };
  }
  return { installed, authenticated, available: true, reason: null };
}
