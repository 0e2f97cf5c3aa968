import type { SDKAssistantMessageError, SDKMessage, SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import type { ProviderLimitKind } from "../events.js";
import { type LimitSignal, isoOfUnixSeconds, limitKindOfHttpStatus, limitKindOfText, limitSignal, resetAtInText } from "../kit/limitSignals.js";

/**
 * Claude Code's limit signals (docs/limits.md): `system`/`api_retry` while it
 * retries a failed model request itself (429, 529 overloaded, 5xx),
 * `rate_limit_event` when a claude.ai plan limit refuses the request (with
 * its reset time), and the failed result that ends the turn (the model API's
 * status and error type, or the usage-limit text Claude Code writes).
 */

/** Claude Code's name for why a model request failed, and the limit it is (null: none). */
const LIMIT_OF_ERROR: { readonly [K in SDKAssistantMessageError]: ProviderLimitKind | null } = {
  authentication_failed: "auth_expired",
  oauth_org_not_allowed: null,
  account_on_hold: null,
  verification_required: null,
  billing_error: "usage_limit",
  rate_limit: "rate_limit",
  overloaded: "overloaded",
  invalid_request: null,
  model_not_found: null,
  server_error: "overloaded",
  unknown: null,
  max_output_tokens: null,
  cloud_credential_error: "auth_expired",
};

/** The Messages API's error types (a result's `api_error_type`), and the limit each is (null: none). */
type ApiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error"
  | "billing_error"
  | "timeout_error";

const LIMIT_OF_API_ERROR_TYPE: { readonly [K in ApiErrorType]: ProviderLimitKind | null } = {
  invalid_request_error: null,
  authentication_error: "auth_expired",
  permission_error: null,
  not_found_error: null,
  request_too_large: null,
  rate_limit_error: "rate_limit",
  api_error: "overloaded",
  overloaded_error: "overloaded",
  billing_error: "usage_limit",
  timeout_error: "overloaded",
};

function apiErrorTypeLimit(type: unknown): ProviderLimitKind | null {
  return typeof type === "string" && Object.hasOwn(LIMIT_OF_API_ERROR_TYPE, type) ? LIMIT_OF_API_ERROR_TYPE[type as ApiErrorType] : null;
}

/**
 * The limit a streamed message signals, or null: an `api_retry` Claude Code
 * runs itself, or a plan limit's refusal.
 */
export function claudeMessageLimit(message: SDKMessage): LimitSignal | null {
  if (message.type === "system" && message.subtype === "api_retry") {
    const kind = LIMIT_OF_ERROR[message.error] ?? (message.error_status === null ? null : limitKindOfHttpStatus(message.error_status));
    if (kind === null) return null;
    const status = message.error_status === null ? "no response" : `HTTP ${message.error_status}`;
    return limitSignal(kind, `model API ${message.error} (${status}), retry ${message.attempt} of ${message.max_retries}`, {
      retryAfterMs: message.retry_delay_ms,
      providerRetrying: true,
    });
  }
  if (message.type === "rate_limit_event") {
    const info = message.rate_limit_info;
    if (info.status !== "rejected") return null;
    const which = info.rateLimitType === undefined ? "plan" : info.rateLimitType.replaceAll("_", " ");
    return limitSignal("usage_limit", `claude.ai ${which} limit reached`, { resetAt: info.resetsAt === undefined ? null : isoOfUnixSeconds(info.resetsAt) });
  }
  return null;
}

/**
 * The limit a failed result ends its turn on, or null. The result's text
 * decides first (a usage limit is answered with status 429 too), then the
 * API error type, then the status. `resetAt` is a reset a plan-limit
 * event of the same turn told.
 */
export function claudeResultLimit(result: SDKResultMessage, resetAt: string | null): LimitSignal | null {
  if (!result.is_error) return null;
  const text = result.subtype === "success" ? result.result : result.errors.join("; ");
  const status = (result as { api_error_status?: unknown }).api_error_status;
  const kind =
    (limitKindOfText(text) === "usage_limit" ? "usage_limit" : null) ??
    apiErrorTypeLimit((result as { api_error_type?: unknown }).api_error_type) ??
    (typeof status === "number" ? limitKindOfHttpStatus(status) : limitKindOfText(text));
  if (kind === null) return null;
  return limitSignal(kind, text, { resetAt: kind === "usage_limit" ? (resetAtInText(text) ?? resetAt) : null });
}
