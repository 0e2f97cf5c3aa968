import type { ProviderLimitEvent } from "./events.js";

/**
 * Loom's own retry of a turn a transient limit failed (docs/limits.md,
 * "Transient errors"): a rate limit or an overload (429, 529, 5xx) that
 * ended the turn is tried again up to MAX_TRANSIENT_RETRIES times, after a
 * jittered exponential backoff that waits at least the provider's
 * Retry-After and the instance's shared cool-down, and only while the wait
 * fits the retry window. A usage limit or a lost sign-in is not retried.
 */

export const MAX_TRANSIENT_RETRIES = 3;
/** The first backoff; each retry doubles it. */
export const TRANSIENT_BASE_DELAY_MS = 1_000;
/** No retry waits past this long after the turn first started (the run's time for transient errors). */
export const TRANSIENT_RETRY_WINDOW_MS = 10 * 60_000;

export interface TransientRetryInput {
  /** The transient limit the failed turn reported. */
  readonly limit: Pick<ProviderLimitEvent, "kind" | "retryAfterMs">;
  /** Retries already made for the run (0 for its first failure). */
  readonly retries: number;
  /** How long since the turn first started. */
  readonly elapsedMs: number;
  /** What is left of the instance's cool-down (0 when none). */
  readonly coolDownMs: number;
  /** A number in [0, 1): the jitter. */
  readonly jitter: number;
}

/** Whether a limit is one Loom retries. */
export function isTransientLimit(limit: Pick<ProviderLimitEvent, "kind">): boolean {
  return limit.kind === "rate_limit" || limit.kind === "overloaded";
}

/** How long to wait before retrying the turn, or null when it is not retried (not transient, out of retries, past the window). */
export function transientRetryDelay(input: TransientRetryInput): number | null {
  if (!isTransientLimit(input.limit) || input.retries >= MAX_TRANSIENT_RETRIES) return null;
  const backoff = TRANSIENT_BASE_DELAY_MS * 2 ** input.retries;
  const floor = Math.max(backoff, input.limit.retryAfterMs ?? 0, input.coolDownMs);
  // Up to half again on top, so children that met one limit together come back apart.
  const delay = Math.round(floor * (1 + input.jitter / 2));
  return input.elapsedMs + delay > TRANSIENT_RETRY_WINDOW_MS ? null : delay;
}

/** The notice a retry leaves on the run. */
export function transientRetryNotice(limit: Pick<ProviderLimitEvent, "kind">, retry: number, delayMs: number): string {
  const what = limit.kind === "rate_limit" ? "a rate limit" : "an overloaded provider";
  return `Retrying the turn after ${what} in ${Math.max(1, Math.round(delayMs / 1000))} s (retry ${retry} of ${MAX_TRANSIENT_RETRIES}).`;
}
