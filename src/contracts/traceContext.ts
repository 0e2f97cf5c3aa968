import { z } from "zod";

/**
 * W3C trace context (https://www.w3.org/TR/trace-context/): the `traceparent`
 * of a call that started work, kept with that work so its spans join the
 * caller's trace (docs/telemetry.md, "Trace context in").
 * Version 00: `00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`,
 * lower case, neither id all zeros.
 */
const TRACE_PARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

export const TraceParentSchema = z.string().regex(TRACE_PARENT, { error: "must be a W3C traceparent: 00-<32 hex>-<16 hex>-<2 hex>, lower case, ids not all zeros" });

export interface TraceParent {
  readonly traceId: string;
  readonly spanId: string;
  /** Bit 0: the caller sampled its span. */
  readonly flags: number;
}

/**
 * A `traceparent` header value, or null when it is absent or malformed. A
 * later version's value is read by its version-00 prefix, as the
 * specification asks of a parser.
 */
export function parseTraceParent(value: string | undefined | null): TraceParent | null {
  if (typeof value !== "string") return null;
  const trimmed = value.trim().toLowerCase();
  const head = trimmed.startsWith("00-") ? trimmed : /^[0-9a-e][0-9a-f]-/.test(trimmed) && trimmed.length > 55 && trimmed[55] === "-" ? `00${trimmed.slice(2, 55)}` : trimmed;
  if (!TRACE_PARENT.test(head)) return null;
  return { traceId: head.slice(3, 35), spanId: head.slice(36, 52), flags: Number.parseInt(head.slice(53, 55), 16) };
}

export function formatTraceParent(context: TraceParent): string {
  return `00-${context.traceId}-${context.spanId}-${context.flags.toString(16).padStart(2, "0")}`;
}
