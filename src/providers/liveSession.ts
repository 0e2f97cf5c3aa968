import type { ReportedUsage } from "../contracts/commands/runtimeCommands.js";
import type { ProviderLimitEvent } from "../contracts/providerEvents.js";
import type { ProviderSessionRuntime } from "./adapter.js";
import type { ProviderRegistry } from "./registry.js";
import { isTransientLimit } from "./transientRetry.js";

/**
 * The session manager's record of one live provider session, and the limit
 * bookkeeping it keeps per run (docs/limits.md): a usage limit's reset for
 * limit recovery, a transient limit for a retry.
 */
export interface LiveSession {
  readonly providerSessionId: string;
  readonly openedAt: number;
  readonly resumed: boolean;
  readonly fromPool: boolean;
  /** The first turn carries a recap of the earlier sessions (resumeRecap): set until it started. */
  recapPending: boolean;
  readonly providerInstanceId: string;
  readonly driver: string;
  readonly runtime: ProviderSessionRuntime;
  lastActivity: number;
  sequence: number;
  /** A turn was started on the agent and it has not reported the turn's end: the agent is working. */
  turnRunning: boolean;
  /** The latest usage the provider reported per run, and when it was last recorded. */
  readonly usage: Map<string, { latest: ReportedUsage; recordedAt: number }>;
  /** The latest usage limit with a reset time per run: a failed turn after it was stopped by it (docs/limits.md). */
  readonly usageLimits: Map<string, { readonly resetAt: string; readonly message: string }>;
  /** Per run: the turn's input (sent again by a retry), when it first started, its retries so far and the transient limit of its latest try. */
  readonly turns: Map<string, TurnTries>;
}

/** A run's tries at its turn on this session (docs/limits.md, "Transient errors"). */
export interface TurnTries {
  readonly input: Parameters<ProviderSessionRuntime["startTurn"]>[0];
  readonly startedAt: number;
  retries: number;
  transient: ProviderLimitEvent | null;
  /** A retry waits for its backoff: no provider turn runs, so an interrupt ends the run here. */
  backingOff: boolean;
}

/** What a failed turn needs of its limits: a usage limit's reset (limit recovery), a transient limit (a retry). */
export function rememberLimit(session: LiveSession, event: ProviderLimitEvent): void {
  if (event.kind === "usage_limit" && event.resetAt !== null) session.usageLimits.set(event.runId, { resetAt: event.resetAt, message: event.message });
  const tries = session.turns.get(event.runId);
  if (tries !== undefined) tries.transient = isTransientLimit(event) ? event : null;
}

/** The usage limit that stopped a failed turn, with whether its instance resumes the work after the reset (config `autoResume`, default on). */
export function usageLimitStop(session: LiveSession, registry: ProviderRegistry, runId: string): { resetAt: string; message: string; autoResume: boolean } | undefined {
  const limit = session.usageLimits.get(runId);
  if (limit === undefined) return undefined;
  return { ...limit, autoResume: registry.instance(session.providerInstanceId)?.autoResume ?? true };
}
