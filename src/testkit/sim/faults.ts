import { ProviderError, ProviderErrorCode } from "../../providers/adapter.js";
import type { DriverCall } from "./simDriver.js";

/**
 * The faults a simulation can inject, each behind its name so a failing
 * seed reproduces with exactly its fault set. Discrete faults are steps the
 * runner takes at seeded points (`weight` > 0); ambient ones change how the
 * simulated providers behave throughout the active phase. Adding a fault is
 * one entry here plus, for a discrete one, its case in SimWorld.injectFault.
 */
export const FaultKind = {
  /** kill -9 of the whole node at a seeded store call (before or after it applies), then a restart from the store with boot reconciliation. */
  crash: "crash",
  /** A provider process dies mid-turn: it reports the turn failed, then refuses every call. */
  providerDeath: "provider-death",
  /** Heavy-tailed provider latencies: some events and answers take minutes. */
  slowEvents: "slow-events",
  /** Plain items overtake earlier events, and stragglers arrive after a turn ended. */
  reorderEvents: "reorder-events",
  /** Driver calls (open, start, steer, interrupt, respond, stop) fail; the outbox worker retries by policy. */
  effectFailure: "effect-failure",
  /** Lease renewals are lost while a provider call stalls past the lease: the effect is claimed again mid-handler. */
  leaseExpiry: "lease-expiry",
  /** A turn goes silent forever; only the idle reaper ends it. */
  hang: "hang",
  /** A turn ends on a usage limit that resets minutes later: its work waits for the reset (or moves to a failover instance) and resumes once. */
  usageLimit: "usage-limit",
} as const;
export type FaultKind = (typeof FaultKind)[keyof typeof FaultKind];

export interface FaultSpec {
  /** Relative weight of injecting it at a step; 0 for an ambient fault. */
  readonly weight: number;
  readonly summary: string;
}

export const FAULTS: { readonly [K in FaultKind]: FaultSpec } = {
  crash: { weight: 3, summary: "kill -9 the node at a seeded store call and restart it" },
  "provider-death": { weight: 4, summary: "a provider process dies mid-turn" },
  "slow-events": { weight: 0, summary: "heavy-tailed provider latencies" },
  "reorder-events": { weight: 0, summary: "overtaking items and late stragglers" },
  "effect-failure": { weight: 0, summary: "driver calls fail and are retried by policy" },
  "lease-expiry": { weight: 2, summary: "lost lease renewals while a provider call stalls" },
  hang: { weight: 0, summary: "turns that go silent forever" },
  "usage-limit": { weight: 0, summary: "turns stopped by a usage limit that resets minutes later" },
};

export const ALL_FAULTS: readonly FaultKind[] = Object.values(FaultKind);

export function isFaultKind(name: string): name is FaultKind {
  return Object.hasOwn(FAULTS, name);
}

/** Parse `crash,hang`, `all` or `none`. */
export function parseFaults(text: string): FaultKind[] {
  if (text === "all") return [...ALL_FAULTS];
  if (text === "none" || text === "") return [];
  const names = text.split(",").map((name) => name.trim());
  const unknown = names.filter((name) => !isFaultKind(name));
  if (unknown.length > 0) throw new Error(`unknown fault(s): ${unknown.join(", ")}; known: ${ALL_FAULTS.join(", ")}`);
  return names as FaultKind[];
}

/** The failure a driver call reports under the effect-failure fault: retryable where a real provider's would be. */
export function simulatedCallFailure(call: DriverCall): ProviderError {
  switch (call) {
    case "openSession":
    case "startTurn":
      return new ProviderError(ProviderErrorCode.startFailed, `simulated ${call} failure`);
    case "steerTurn":
    case "interruptTurn":
    case "respondToRequest":
    case "stop":
      return new ProviderError(ProviderErrorCode.protocol, `simulated ${call} failure`);
  }
}
