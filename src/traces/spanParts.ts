import type { Failure } from "../contracts/entities/fields.js";
import { spanIdOf } from "./spanIds.js";
import type { SpanAttributeValue, SpanStatus, TraceSpan } from "./spanModel.js";
import { SpanStatusCode } from "./spanModel.js";
import type { Placement } from "./treeContext.js";

/** Shared pieces of the span builders: times, attributes without nulls, failure statuses. */

export function time(iso: string): number {
  return Date.parse(iso);
}

export function endTime(iso: string | null): number | null {
  return iso === null ? null : Date.parse(iso);
}

/** Attributes without the absent ones: OTLP has no null. */
export function attrs(entries: Record<string, SpanAttributeValue | null | undefined>): Record<string, SpanAttributeValue> {
  const out: Record<string, SpanAttributeValue> = {};
  // for-in over a plain literal: its own keys in the same order as Object.entries, without an array of pairs per span.
  for (const key in entries) {
    const value = entries[key];
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out;
}

export function failureStatus(failure: Failure | null, fallback: string): SpanStatus {
  return { code: SpanStatusCode.error, message: failure === null ? fallback : `${failure.code}: ${failure.message}` };
}

export function span(placement: Placement, fields: Omit<TraceSpan, "traceId" | "parentSpanId" | "remoteParent" | "links" | "spanId"> & { readonly spanId?: string }): TraceSpan {
  return {
    traceId: placement.traceId,
    spanId: fields.spanId ?? spanIdOf(fields.entityId),
    parentSpanId: placement.parentSpanId,
    remoteParent: placement.remoteParent,
    links: placement.links,
    ...fields,
  };
}

