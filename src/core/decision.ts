import type { NewOutboxEffect, Rejection } from "../contracts/envelopes.js";
import type { KnownDomainEvent } from "../contracts/events.js";
import type { ProviderCapabilities } from "../contracts/capabilities.js";
import type { Allocate } from "./ids.js";
import type { RejectionCode } from "./rejections.js";

/** What decide may read besides state: the clock and the id source, both injected. */
export interface DecideContext {
  /** ISO-8601 time of the decision. */
  readonly now: string;
  readonly allocate: Allocate;
  /**
   * What a provider instance can do, or null when it is unknown or cannot run.
   * Send-mode selection reads this; it is configuration, not state.
   */
  readonly providers: (providerInstanceId: string) => ProviderFacts | null;
  /** Delegation guards (configuration). */
  readonly limits: DelegationLimits;
  /**
   * Capture a checkpoint before and after every turn that may write
   * (configuration, `workspaces.checkpoints`). Absent means off: an engine
   * that is not told captures nothing.
   */
  readonly turnCheckpoints?: boolean;
  /** The W3C traceparent the command carries: a run it creates keeps it (docs/telemetry.md). */
  readonly traceParent?: string;
}

export interface DelegationLimits {
  /** How deep delegation may nest: a root's children are depth 1. */
  readonly maxDelegationDepth: number;
  /** Unfinished tasks one parent thread may have at once. */
  readonly maxActiveChildrenPerThread: number;
  /** Tasks one root thread's whole tree may ever spawn. */
  readonly maxSpawnsPerRootThread: number;
}

export const DEFAULT_DELEGATION_LIMITS: DelegationLimits = {
  maxDelegationDepth: 4,
  maxActiveChildrenPerThread: 16,
  maxSpawnsPerRootThread: 64,
};

export interface ProviderFacts {
  readonly driver: string;
  readonly capabilities: ProviderCapabilities;
}

export interface Accepted {
  readonly kind: "accepted";
  /** Only events of the event table (contracts/events.ts): an event without a schema is a compile error. */
  readonly events: readonly KnownDomainEvent[];
  readonly effects: readonly NewOutboxEffect[];
}

export interface Rejected {
  readonly kind: "rejected";
  readonly rejection: Rejection & { readonly code: RejectionCode };
}

export type Decision = Accepted | Rejected;

export function accept(events: readonly KnownDomainEvent[], effects: readonly NewOutboxEffect[] = []): Accepted {
  return { kind: "accepted", events, effects };
}

/** Refuse the command with a code from the closed set and a message for people. */
export function reject(code: RejectionCode, message: string): Rejected {
  return { kind: "rejected", rejection: { code, message } };
}
