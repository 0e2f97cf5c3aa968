import type { ProviderLimitKind } from "../events.js";
import { type LimitSignal, isoOfUnixSeconds, limitKindOfHttpStatus, limitSignal } from "../kit/limitSignals.js";
import type { RateLimitReachedType, RateLimitSnapshot, TurnError } from "./protocol.js";

/**
 * Codex's limit signals (docs/limits.md): the `codexErrorInfo` of an `error`
 * notification or a failed turn, and `account/rateLimits/updated` once a
 * window is reached. Codex retries rate limits and overloads itself
 * (`willRetry`); a usage limit ends the turn.
 */

/** The codes codex names without a payload (CodexErrorInfo), and the limit each is (null: none). */
type CodexErrorCode =
  | "contextWindowExceeded"
  | "sessionBudgetExceeded"
  | "usageLimitExceeded"
  | "rateLimitExceeded"
  | "flexUnavailable"
  | "serverOverloaded"
  | "modelNotFound"
  | "policyCapacityUnavailable"
  | "inferenceHookDenied"
  | "cyberPolicy"
  | "bioPolicy"
  | "misalignmentPolicyViolation"
  | "tooManyDenials"
  | "internalServerError"
  | "unauthorized"
  | "badRequest"
  | "threadRollbackFailed"
  | "sandboxError"
  | "other";

const LIMIT_OF_CODE: { readonly [K in CodexErrorCode]: ProviderLimitKind | null } = {
  contextWindowExceeded: null,
  // Codex's own per-session budget, not the account's: no reset to wait for.
  sessionBudgetExceeded: null,
  usageLimitExceeded: "usage_limit",
  rateLimitExceeded: "rate_limit",
  flexUnavailable: "overloaded",
  serverOverloaded: "overloaded",
  modelNotFound: null,
  policyCapacityUnavailable: "overloaded",
  inferenceHookDenied: null,
  cyberPolicy: null,
  bioPolicy: null,
  misalignmentPolicyViolation: null,
  tooManyDenials: null,
  internalServerError: "overloaded",
  unauthorized: "auth_expired",
  badRequest: null,
  threadRollbackFailed: null,
  sandboxError: null,
  other: null,
};

function isCode(code: string): code is CodexErrorCode {
  return Object.hasOwn(LIMIT_OF_CODE, code);
}

/** The variants that carry the upstream HTTP status: its status says which limit, if any. */
const STATUS_VARIANTS = ["httpConnectionFailed", "responseStreamConnectionFailed", "responseStreamDisconnected", "responseTooManyFailedAttempts"] as const;

const LIMIT_OF_REACHED: { readonly [K in RateLimitReachedType]: ProviderLimitKind } = {
  rate_limit_reached: "usage_limit",
  workspace_owner_credits_depleted: "usage_limit",
  workspace_member_credits_depleted: "usage_limit",
  workspace_owner_usage_limit_reached: "usage_limit",
  workspace_member_usage_limit_reached: "usage_limit",
};

function kindOfInfo(info: TurnError["codexErrorInfo"]): ProviderLimitKind | null {
  if (info === null) return null;
  if (typeof info === "string") return isCode(info) ? LIMIT_OF_CODE[info] : null;
  for (const variant of STATUS_VARIANTS) {
    const status = (info as { [key: string]: { httpStatusCode?: unknown } | undefined })[variant]?.httpStatusCode;
    if (typeof status === "number") return limitKindOfHttpStatus(status);
  }
  return null;
}

/**
 * The limit a codex error names, or null for an error that is no limit. A
 * usage limit resets when a reached rate-limit snapshot said (`resetAt`),
 * else when the error's words say ("try again at 2:27 PM").
 */
export function codexErrorLimit(error: TurnError, willRetry: boolean, resetAt: string | null, now: number = Date.now()): LimitSignal | null {
  const kind = kindOfInfo(error.codexErrorInfo);
  if (kind === null) return null;
  const message = error.additionalDetails === null ? error.message : `${error.message} (${error.additionalDetails})`;
  return limitSignal(kind, message, { providerRetrying: willRetry, resetAt: kind === "usage_limit" ? (resetAt ?? codexRetryAt(message, now)) : null });
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** Codex's "try again at 2:27 PM" (or "Try again at …", without a plan) or "try again at Dec 8th, 2026 2:27 PM". */
const RETRY_AT = /try again at (?:([a-z]{3}) (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}) )?(\d{1,2}):(\d{2}) ?([ap]m)/i;

/**
 * When codex's usage-limit message says to try again, as an instant. Codex
 * writes the time of day in its process's time zone, which is Loom's (Loom
 * starts it): a time without a date is the next such time after `now`.
 */
export function codexRetryAt(message: string, now: number): string | null {
  const match = RETRY_AT.exec(message);
  if (match === null) return null;
  const [, month, day, year, hour, minute, half] = match;
  const hours = (Number(hour) % 12) + (half?.toUpperCase() === "PM" ? 12 : 0);
  if (month !== undefined) {
    const index = MONTHS.indexOf(`${month.charAt(0).toUpperCase()}${month.slice(1).toLowerCase()}`);
    if (index < 0) return null;
    return new Date(Number(year), index, Number(day), hours, Number(minute)).toISOString();
  }
  const today = new Date(now);
  const at = new Date(today.getFullYear(), today.getMonth(), today.getDate(), hours, Number(minute));
  if (at.getTime() <= now) at.setDate(at.getDate() + 1);
  return at.toISOString();
}

/**
 * When a reached snapshot's limit resets: the latest reset of its windows
 * that are used up (both windows full waits for the later one).
 */
export function snapshotResetAt(snapshot: RateLimitSnapshot): string | null {
  const windows = [snapshot.primary, snapshot.secondary].filter((window) => window !== null && window.resetsAt !== null && window.usedPercent >= 100);
  const resets = windows.map((window) => window?.resetsAt ?? 0);
  if (resets.length === 0) return null;
  return isoOfUnixSeconds(Math.max(...resets));
}

/** The limit an account rate-limit update reports, or null while the account still has room. */
export function codexRateLimitsLimit(snapshot: RateLimitSnapshot): LimitSignal | null {
  const reached = snapshot.rateLimitReachedType;
  if (reached === null) return null;
  const name = snapshot.limitName ?? snapshot.limitId ?? "codex";
  return limitSignal(LIMIT_OF_REACHED[reached], `${name}: ${reached.replaceAll("_", " ")}`, { resetAt: snapshotResetAt(snapshot) });
}
