import type { ProviderLimitKind } from "../events.js";
import { type LimitSignal, isoOfUnixSeconds, limitKindOfHttpStatus, limitSignal, limitSignalOfText, retryAfterMs } from "../kit/limitSignals.js";
import { StdioRpcError, StdioRpcErrorCode } from "../kit/stdioRpcError.js";

/**
 * An ACP agent's limit signals (docs/limits.md). ACP names no limit of its
 * own: an agent answers `session/prompt` with a JSON-RPC error whose code
 * is ACP's `auth_required` (-32000) or whose message and data carry the
 * model API's failure (Gemini CLI's 429 RESOURCE_EXHAUSTED with a
 * RetryInfo, an HTTP status, a retry-after). The data is read for those
 * fields only; it is never recorded.
 */

/** ACP's `auth_required` error code: the agent's sign-in is gone. */
const AUTH_REQUIRED = -32000;

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** An HTTP status the data names (`status`, `statusCode`, `httpStatus`, or an `error.code` of 4xx/5xx). */
function statusInData(data: Record<string, unknown> | null): number | null {
  const error = record(data?.error);
  for (const value of [data?.status, data?.statusCode, data?.httpStatus, data?.code, error?.code, error?.status]) {
    if (typeof value === "number" && value >= 400 && value <= 599) return value;
  }
  return null;
}

/** A retry delay the data names: `retryAfterMs`, `retryAfter` (seconds or an HTTP date), or a google.rpc.RetryInfo `retryDelay` ("58s"). */
function retryInData(data: Record<string, unknown> | null, nowMs: number): number | null {
  if (typeof data?.retryAfterMs === "number") return data.retryAfterMs;
  if (typeof data?.retryAfter === "number") return data.retryAfter * 1000;
  if (typeof data?.retryAfter === "string") return retryAfterMs(data.retryAfter, nowMs);
  const details = record(data?.error)?.details ?? data?.details;
  if (!Array.isArray(details)) return null;
  for (const detail of details) {
    const delay = record(detail)?.retryDelay;
    if (typeof delay === "string" && /^\d+(\.\d+)?s$/.test(delay)) return Math.round(Number(delay.slice(0, -1)) * 1000);
  }
  return null;
}

/** A reset time the data names: `resetAt` (ISO) or `resetsAt` (Unix seconds). */
function resetInData(data: Record<string, unknown> | null): string | null {
  if (typeof data?.resetsAt === "number") return isoOfUnixSeconds(data.resetsAt);
  if (typeof data?.resetAt === "string" && !Number.isNaN(Date.parse(data.resetAt))) return new Date(data.resetAt).toISOString();
  return null;
}

/** The limit a failed `session/prompt` names, or null when the failure is no limit. */
export function acpPromptLimit(error: unknown, nowMs: number): LimitSignal | null {
  if (!(error instanceof StdioRpcError) || error.code !== StdioRpcErrorCode.rpc) return null;
  const data = record(error.data);
  const more = { retryAfterMs: retryInData(data, nowMs), resetAt: resetInData(data) };
  if (error.rpcCode === AUTH_REQUIRED) return limitSignal("auth_expired", error.message, more);
  // The words first (a usage limit is a 429 too), then the status.
  const dataText = error.data === undefined ? "" : ` ${JSON.stringify(error.data)}`;
  const byText = limitSignalOfText(`${error.message}${dataText}`, more);
  const status = statusInData(data);
  const kind: ProviderLimitKind | null = byText?.kind ?? (status === null ? null : limitKindOfHttpStatus(status));
  if (kind === null) return null;
  const retry = byText?.retryAfterMs ?? more.retryAfterMs;
  // A quota that says only when to retry resets then.
  const resetAt = byText?.resetAt ?? more.resetAt ?? (kind === "usage_limit" && retry !== null ? new Date(nowMs + retry).toISOString() : null);
  return limitSignal(kind, error.message, { retryAfterMs: retry, resetAt: kind === "usage_limit" ? resetAt : null });
}
