import type { ProviderLimitEvent, ProviderLimitKind, SystemNoticeItem } from "../events.js";

/**
 * What the drivers share to map their providers' limit signals
 * (docs/limits.md): a signal without its run, the HTTP status and
 * Retry-After readings every HTTP-speaking provider needs, and the words a
 * provider uses when it only sends text. Each driver keeps its own table of
 * native codes; these are the parts no driver should write twice.
 */

/** A limit signal before the session names its run. */
export type LimitSignal = Omit<ProviderLimitEvent, "type" | "runId">;

export function limitEvent(runId: string, signal: LimitSignal): ProviderLimitEvent {
  return { type: "limit", runId, ...signal };
}

/** A signal of `kind` with nothing more known than the provider's words. */
export function limitSignal(kind: ProviderLimitKind, message: string, more: Partial<Omit<LimitSignal, "kind" | "message">> = {}): LimitSignal {
  return { kind, retryAfterMs: more.retryAfterMs ?? null, resetAt: more.resetAt ?? null, providerRetrying: more.providerRetrying ?? false, message };
}

/** The limit an HTTP status means, or null for a status that is not one (400, 404, ...). */
export function limitKindOfHttpStatus(status: number): ProviderLimitKind | null {
  if (status === 429) return "rate_limit";
  if (status === 401) return "auth_expired";
  if (status === 529 || (status >= 500 && status <= 599)) return "overloaded";
  return null;
}

/**
 * A Retry-After value in milliseconds from `nowMs`: delta seconds or an HTTP
 * date (RFC 9110 §10.2.3); null when absent or unreadable. A date already
 * past is 0.
 */
export function retryAfterMs(value: string | null | undefined, nowMs: number): number | null {
  if (value === null || value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/** A Unix time in seconds (what providers send as a reset time) as ISO 8601. */
export function isoOfUnixSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/**
 * The words providers put in a limit's message when that message is all
 * there is (an ACP agent's error, a CLI's result text), most specific
 * first: a usage limit often says "rate limit" too.
 */
const LIMIT_WORDS: readonly (readonly [RegExp, ProviderLimitKind])[] = [
  [/usage limit|plan limit|hit your limit|(5-hour|hourly|daily|weekly|monthly) limit|quota (exceeded|exhausted)|exceeded your current quota|resource.?exhausted|insufficient.?quota|credits? (depleted|exhausted)|billing/i, "usage_limit"],
  [/rate.?limit|too many requests|\b429\b/i, "rate_limit"],
  [/overloaded|\b529\b|\b50[0234]\b|service unavailable|internal server error|bad gateway/i, "overloaded"],
  [/\b401\b|unauthori[sz]ed|authentication|not (logged|signed) in|log ?in again|token (has )?expired|invalid api key|\/login/i, "auth_expired"],
];

/** The limit a provider's message speaks of, or null when it speaks of none. */
export function limitKindOfText(text: string): ProviderLimitKind | null {
  for (const [pattern, kind] of LIMIT_WORDS) if (pattern.test(text)) return kind;
  return null;
}

/**
 * A reset time a message states: Claude Code's `…|<unix seconds>` suffix or
 * an ISO 8601 time after "reset"; null when it states none.
 */
export function resetAtInText(text: string): string | null {
  const unix = /\|(\d{9,11})\s*$/.exec(text);
  if (unix?.[1] !== undefined) return isoOfUnixSeconds(Number(unix[1]));
  const iso = /resets?\D{0,12}(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}))/i.exec(text);
  if (iso?.[1] !== undefined) {
    const parsed = Date.parse(iso[1]);
    if (!Number.isNaN(parsed)) return new Date(parsed).toISOString();
  }
  return null;
}

/** A retry delay a message states ("Please retry in 58.2s", "try again in 2 minutes"), in milliseconds; null when it states none. */
export function retryDelayInText(text: string): number | null {
  const match = /(?:retry|try again)\s+(?:in|after)\s+(\d+(?:\.\d+)?)\s*(ms|seconds?|sec|s|minutes?|min|m)\b/i.exec(text);
  if (match?.[1] === undefined || match[2] === undefined) return null;
  const unit = match[2].toLowerCase();
  const unitMs = unit === "ms" ? 1 : unit.startsWith("s") ? 1000 : 60_000;
  return Math.round(Number(match[1]) * unitMs);
}

/** The signal in a provider's error text, or null when the text is not about a limit. */
export function limitSignalOfText(text: string, more: Partial<Omit<LimitSignal, "kind" | "message">> = {}): LimitSignal | null {
  const kind = limitKindOfText(text);
  if (kind === null) return null;
  return limitSignal(kind, text, { ...more, resetAt: more.resetAt ?? resetAtInText(text), retryAfterMs: more.retryAfterMs ?? retryDelayInText(text) });
}

const KIND_TEXT: { readonly [K in ProviderLimitKind]: string } = {
  rate_limit: "rate limited",
  usage_limit: "usage limit reached",
  overloaded: "provider overloaded",
  auth_expired: "sign-in expired",
};

/** The system notice a limit signal is recorded as on its thread's timeline. */
export function limitNotice(event: ProviderLimitEvent): SystemNoticeItem {
  const when = [
    event.resetAt === null ? null : `resets at ${event.resetAt}`,
    event.retryAfterMs === null ? null : `retry after ${Math.ceil(event.retryAfterMs / 1000)} s`,
    event.providerRetrying ? "the provider is retrying" : null,
  ].filter((part) => part !== null);
  const head = when.length === 0 ? KIND_TEXT[event.kind] : `${KIND_TEXT[event.kind]} (${when.join(", ")})`;
  return { kind: "system_notice", level: "warning", text: `${head}: ${event.message}` };
}
