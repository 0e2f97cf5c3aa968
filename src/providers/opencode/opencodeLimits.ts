import type { Event } from "@opencode-ai/sdk/v2";
import type { ProviderLimitKind } from "../events.js";
import { type LimitSignal, isoOfUnixSeconds, limitKindOfHttpStatus, limitKindOfText, limitSignal, resetAtInText, retryAfterMs } from "../kit/limitSignals.js";

/**
 * OpenCode's limit signals (docs/limits.md): `session.status` of type
 * "retry" while OpenCode retries a failed model request itself (its message
 * and the time of the next attempt), and the `session.error` that ends the
 * turn: an APIError (the model API's status code and response headers) or
 * a ProviderAuthError.
 */

type SessionError = NonNullable<Extract<Event, { type: "session.error" }>["properties"]["error"]>;
type RetryStatus = Extract<Extract<Event, { type: "session.status" }>["properties"]["status"], { type: "retry" }>;

/** OpenCode's error names, and the limit each is (null: none; an APIError is read further). */
const LIMIT_OF_ERROR_NAME: { readonly [K in SessionError["name"]]: ProviderLimitKind | null } = {
  ProviderAuthError: "auth_expired",
  UnknownError: null,
  MessageOutputLengthError: null,
  MessageAbortedError: null,
  StructuredOutputError: null,
  ContextOverflowError: null,
  ContentFilterError: null,
  APIError: null,
};

/** A header of a response, by its name in any case. */
function header(headers: { readonly [key: string]: string } | undefined, name: string): string | undefined {
  if (headers === undefined) return undefined;
  return Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
}

/** The reset time a provider's response headers state (Anthropic's unified reset, Unix seconds). */
function resetInHeaders(headers: { readonly [key: string]: string } | undefined): string | null {
  const unified = header(headers, "anthropic-ratelimit-unified-reset");
  return unified !== undefined && /^\d+$/.test(unified) ? isoOfUnixSeconds(Number(unified)) : null;
}

/** The limit a session error ends its turn on, or null. */
export function opencodeErrorLimit(error: SessionError, nowMs: number): LimitSignal | null {
  if (error.name !== "APIError") {
    const kind = LIMIT_OF_ERROR_NAME[error.name];
    const message = (error.data as { message?: unknown } | undefined)?.message;
    return kind === null ? null : limitSignal(kind, typeof message === "string" ? message : error.name);
  }
  const { message, statusCode, responseHeaders } = error.data;
  // The words first (a usage limit is answered 429 too), then the status.
  const kind = (limitKindOfText(message) === "usage_limit" ? "usage_limit" : null) ?? (statusCode === undefined ? limitKindOfText(message) : limitKindOfHttpStatus(statusCode));
  if (kind === null) return null;
  const retryMs = header(responseHeaders, "retry-after-ms");
  const retry = retryMs !== undefined && /^\d+$/.test(retryMs) ? Number(retryMs) : retryAfterMs(header(responseHeaders, "retry-after"), nowMs);
  const resetAt = kind === "usage_limit" ? (resetInHeaders(responseHeaders) ?? resetAtInText(message)) : null;
  return limitSignal(kind, message, { retryAfterMs: retry, resetAt });
}

/** The limit OpenCode is retrying on, or null when its retry message names none. */
export function opencodeRetryLimit(status: RetryStatus, nowMs: number): LimitSignal | null {
  const kind = limitKindOfText(status.message);
  if (kind === null) return null;
  return limitSignal(kind, `${status.message} (attempt ${status.attempt})`, { retryAfterMs: Math.max(0, status.next - nowMs), providerRetrying: true });
}
