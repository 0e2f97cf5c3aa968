import { type LimitSignal, limitKindOfHttpStatus, limitKindOfText, limitSignal, resetAtInText, retryDelayInText } from "../kit/limitSignals.js";

/**
 * Pi's limit signals (docs/limits.md; docs/rpc.md of pi-coding-agent):
 * `auto_retry_start` while Pi retries a transient error itself (overloaded,
 * rate limit, 5xx) with its delay, and the error message of the model
 * request that failed the run. Pi passes the model API's failure on as
 * text, its HTTP status first ("529 {...overloaded_error...}").
 */

/** The limit a model API failure's text names: its words, then the status it starts with; null for none. */
export function piErrorLimit(text: string, providerRetrying: boolean, retryAfterMs: number | null): LimitSignal | null {
  const status = /^\s*(\d{3})\b/.exec(text)?.[1];
  const kind = (limitKindOfText(text) === "usage_limit" ? "usage_limit" : null) ?? (status === undefined ? null : limitKindOfHttpStatus(Number(status))) ?? limitKindOfText(text);
  if (kind === null) return null;
  return limitSignal(kind, text, { providerRetrying, retryAfterMs: retryAfterMs ?? retryDelayInText(text), resetAt: kind === "usage_limit" ? resetAtInText(text) : null });
}

/** The limit an `auto_retry_start` retries on, or null when its error is none. */
export function piRetryLimit(event: { readonly errorMessage?: unknown; readonly delayMs?: unknown }): LimitSignal | null {
  if (typeof event.errorMessage !== "string") return null;
  return piErrorLimit(event.errorMessage, true, typeof event.delayMs === "number" ? event.delayMs : null);
}
