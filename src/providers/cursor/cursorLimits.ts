import type { RunError } from "@cursor/sdk";
import type { ProviderLimitKind } from "../events.js";
import { type LimitSignal, limitKindOfHttpStatus, limitKindOfText, limitSignal, resetAtInText, retryDelayInText } from "../kit/limitSignals.js";

/**
 * Cursor's limit signals (docs/limits.md): the SDK's error classes
 * (@cursor/sdk errors.d.ts: RateLimitError for 429 and usage limits,
 * AuthenticationError for 401, NetworkError for 503, 504 and other server
 * failures, each with an optional HTTP status) thrown while a run streams,
 * and a failed run's error ({ message, code? }).
 */

/** The SDK's error class names that are a limit. */
const LIMIT_OF_ERROR_CLASS = {
  RateLimitError: "rate_limit",
  AuthenticationError: "auth_expired",
  NetworkError: "overloaded",
} as const satisfies { readonly [name: string]: ProviderLimitKind };
type LimitErrorClass = keyof typeof LIMIT_OF_ERROR_CLASS;

function isLimitClass(name: unknown): name is LimitErrorClass {
  return typeof name === "string" && Object.hasOwn(LIMIT_OF_ERROR_CLASS, name);
}

function signal(kind: ProviderLimitKind, message: string): LimitSignal {
  // A rate limit that says it is a usage limit is one.
  const refined = kind === "rate_limit" && limitKindOfText(message) === "usage_limit" ? "usage_limit" : kind;
  return limitSignal(refined, message, { retryAfterMs: retryDelayInText(message), resetAt: refined === "usage_limit" ? resetAtInText(message) : null });
}

/** The limit an error thrown by the SDK names, or null. */
export function cursorErrorLimit(error: unknown): LimitSignal | null {
  if (!(error instanceof Error)) return null;
  const status = (error as { status?: unknown }).status;
  const byStatus = typeof status === "number" ? limitKindOfHttpStatus(status) : null;
  const kind = isLimitClass(error.name) ? LIMIT_OF_ERROR_CLASS[error.name] : byStatus;
  return kind === null ? null : signal(kind, error.message);
}

/** The limit a failed run's error names, or null. */
export function cursorRunLimit(error: RunError): LimitSignal | null {
  const kind = limitKindOfText(`${error.code ?? ""} ${error.message}`);
  return kind === null ? null : signal(kind, error.message);
}
