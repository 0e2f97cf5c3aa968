import type { ReportedUsage, TurnCompletedCommand } from "../contracts/commands/runtimeCommands.js";
import type { UsageEvent } from "../contracts/providerEvents.js";
import { priceOf, pricedUsage } from "../core/budgets/prices.js";
import type { OrchestrationState } from "../core/state.js";
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

/** What a failed turn's stop is read from: its session, the instances' config, Loom's records. */
export interface StopContext {
  readonly session: LiveSession;
  readonly registry: ProviderRegistry;
  readonly state: OrchestrationState;
  readonly threadId: string;
  readonly runId: string;
}

/** What stopped a failed turn that waits in a limit recovery: the turn-completed command's `limit`. */
export type LimitStop = NonNullable<TurnCompletedCommand["data"]["limit"]>;

/**
 * How long after an outage (transient limits past Loom's retries) its
 * instance is tried again, when no failover instance took the work
 * (docs/limits.md, "After an outage").
 */
export const OUTAGE_RETRY_AFTER_MS = 10 * 60_000;

/** The usage limit that stopped a failed turn, with whether its instance resumes the work after the reset (config `autoResume`, default on). */
export function usageLimitStop({ session, registry, runId }: StopContext): LimitStop | undefined {
  const limit = session.usageLimits.get(runId);
  if (limit === undefined) return undefined;
  return { ...limit, autoResume: registry.instance(session.providerInstanceId)?.autoResume ?? true };
}

/**
 * A turn whose latest try ended on a rate limit or an overload after Loom's
 * retries gave up: an outage, when the thread has somewhere to fail over to
 * (its delegation's fallbacks, its instance's failover list) and the
 * instance resumes work by itself. Its work then moves to the first
 * available of them, or is tried here again after OUTAGE_RETRY_AFTER_MS.
 * Otherwise the run fails as it did.
 */
export function outageStop({ session, registry, state, threadId }: StopContext, tries: TurnTries | undefined, now: number): LimitStop | undefined {
  const transient = tries?.transient ?? null;
  const instance = registry.instance(session.providerInstanceId);
  if (transient === null || !(instance?.autoResume ?? true)) return undefined;
  const taskId = state.taskByChildThread.get(threadId);
  const fallbacks = (taskId === undefined ? undefined : state.tasks.get(taskId)?.fallbacks) ?? [];
  const elsewhere = [...fallbacks.map((fallback) => fallback.providerInstanceId), ...(instance?.failover ?? [])].some((id) => id !== session.providerInstanceId);
  if (!elsewhere) return undefined;
  return { resetAt: new Date(now + OUTAGE_RETRY_AFTER_MS).toISOString(), message: transient.message, autoResume: true, cause: "outage" };
}

/** Usage during a long turn is recorded at most this often; the turn's end always records it. */
export const USAGE_CHECKPOINT_MS = 10_000;

/**
 * Keep a run's latest usage on its session, priced by the instance's list
 * when the provider reports tokens but no cost (docs/budgets.md, "Cost").
 * Returns the usage to record now (at most every USAGE_CHECKPOINT_MS), or
 * null when it is only kept until then or the turn's end.
 */
export function noteUsage(session: LiveSession, event: UsageEvent, prices: Parameters<typeof priceOf>[0], model: string | null, now: number): ReportedUsage | null {
  const latest = pricedUsage(
    {
      inputTokens: event.inputTokens,
      outputTokens: event.outputTokens,
      ...(event.cachedInputTokens === undefined ? {} : { cachedInputTokens: event.cachedInputTokens }),
      ...(event.costUsd === undefined ? {} : { costUsd: event.costUsd }),
    },
    priceOf(prices, model),
  );
  const known = session.usage.get(event.runId);
  if (known !== undefined && now - known.recordedAt < USAGE_CHECKPOINT_MS) {
    known.latest = latest;
    return null;
  }
  session.usage.set(event.runId, { latest, recordedAt: now });
  return latest;
}
