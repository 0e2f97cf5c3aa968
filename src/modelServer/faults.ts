import type { ModelApi } from "./normalized.js";

/**
 * A rule's failed answer (docs/model-server.md, "Faults"): the HTTP status
 * a model API answers when it is rate limited (429 with Retry-After), out
 * of plan (a usage-limit body), overloaded (Anthropic's 529) or failing
 * (5xx), in the error body each API sends, so a real agent CLI meets the
 * limit as it would meet the provider's.
 */
export interface RuleFault {
  /** 400–599. */
  readonly status: number;
  /** Sent as the Retry-After header (delta seconds). */
  readonly retryAfterSeconds?: number;
  readonly message?: string;
  /** The error body as sent, instead of the API's usual one (a provider's usage-limit shape). */
  readonly body?: unknown;
  /** More response headers (an Anthropic `anthropic-ratelimit-unified-reset`). */
  readonly headers?: Readonly<Record<string, string>>;
}

function anthropicType(status: number): string {
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  if (status === 401) return "authentication_error";
  return status >= 500 ? "api_error" : "invalid_request_error";
}

function openAiType(status: number): string {
  if (status === 429) return "rate_limit_exceeded";
  if (status === 401) return "invalid_api_key";
  return status >= 500 ? "server_error" : "invalid_request_error";
}

function googleStatus(status: number): string {
  if (status === 429) return "RESOURCE_EXHAUSTED";
  if (status === 401) return "UNAUTHENTICATED";
  if (status === 503 || status === 529) return "UNAVAILABLE";
  return status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT";
}

function defaultMessage(status: number): string {
  if (status === 429) return "rate limited by the model server";
  if (status === 529) return "Overloaded";
  return `the model server answered ${status}`;
}

/** The error body an API sends for the fault. */
export function faultBody(api: ModelApi, fault: RuleFault): unknown {
  if (fault.body !== undefined) return fault.body;
  const message = fault.message ?? defaultMessage(fault.status);
  switch (api) {
    case "anthropic":
      return { type: "error", error: { type: anthropicType(fault.status), message } };
    case "responses":
    case "chat": {
      const type = openAiType(fault.status);
      return { error: { message, type, code: type, param: null } };
    }
    case "gemini":
      return { error: { code: fault.status, message, status: googleStatus(fault.status) } };
    default: {
      const unexpected: never = api;
      throw new Error(`unexpected model API ${String(unexpected)}`);
    }
  }
}

/** The response headers of the fault: JSON, its Retry-After and any it names. */
export function faultHeaders(fault: RuleFault): Record<string, string> {
  return {
    "content-type": "application/json",
    ...(fault.retryAfterSeconds === undefined ? {} : { "retry-after": String(fault.retryAfterSeconds) }),
    ...fault.headers,
  };
}
