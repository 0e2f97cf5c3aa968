import { type HrTime, type Link, SpanKind as OtelSpanKind, SpanStatusCode as OtelStatusCode, TraceFlags } from "@opentelemetry/api";
import { type Resource, resourceFromAttributes } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { type SpanAttributes, type SpanKind, type SpanLinkKind, type SpanStatusCode, type TraceSpan, isEnded } from "../traces/spanModel.js";
import { Attr } from "../traces/spanAttributes.js";

/**
 * The span model as the SDK's ReadableSpan, which its exporters and
 * serializers take. Loom builds finished spans from its log, so they never
 * pass through a Tracer: ids, times, parents and links are Loom's own.
 *
 * On the way a span is a SpanRecord: plain data in the SDK's codes, which
 * the live exporter posts to its worker thread (exportWorker.ts), where the
 * same steps as `readableOf` below make it a ReadableSpan.
 */

const KIND: { readonly [K in SpanKind]: OtelSpanKind } = {
  internal: OtelSpanKind.INTERNAL,
  server: OtelSpanKind.SERVER,
  client: OtelSpanKind.CLIENT,
};

const STATUS: { readonly [K in SpanStatusCode]: OtelStatusCode } = {
  unset: OtelStatusCode.UNSET,
  ok: OtelStatusCode.OK,
  error: OtelStatusCode.ERROR,
};

export const INSTRUMENTATION_SCOPE = { name: "loom" } as const;

/** An ended span as plain, cloneable data: what the live exporter hands its worker. */
export interface SpanRecord {
  readonly name: string;
  readonly kind: OtelSpanKind;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly remoteParent: boolean;
  readonly startTimeMs: number;
  /** Never before the start. */
  readonly endTimeMs: number;
  readonly status: { readonly code: OtelStatusCode; readonly message?: string };
  readonly attributes: SpanAttributes;
  readonly links: readonly { readonly traceId: string; readonly spanId: string; readonly kind: SpanLinkKind }[];
}

export function spanRecordOf(span: TraceSpan & { readonly endTimeMs: number }): SpanRecord {
  return {
    name: span.name,
    kind: KIND[span.kind],
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    remoteParent: span.remoteParent,
    startTimeMs: span.startTimeMs,
    endTimeMs: Math.max(span.endTimeMs, span.startTimeMs),
    status: span.status.message === undefined ? { code: STATUS[span.status.code] } : { code: STATUS[span.status.code], message: span.status.message },
    attributes: span.attributes,
    links: span.links,
  };
}

export function loomResource(serviceName: string, version: string): Resource {
  return resourceFromAttributes(resourceAttributes(serviceName, version));
}

export function resourceAttributes(serviceName: string, version: string): Readonly<Record<string, string>> {
  return { "service.name": serviceName, "service.version": version };
}

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** A record as a ReadableSpan (exportWorker.ts does the same in the worker). */
export function readableOf(record: SpanRecord, resource: Resource): ReadableSpan {
  const sampled = TraceFlags.SAMPLED;
  const links: Link[] = record.links.map((link) => ({ context: { traceId: link.traceId, spanId: link.spanId, traceFlags: sampled }, attributes: { [Attr.linkKind]: link.kind } }));
  return {
    name: record.name,
    kind: record.kind,
    spanContext: () => ({ traceId: record.traceId, spanId: record.spanId, traceFlags: sampled }),
    ...(record.parentSpanId === null ? {} : { parentSpanContext: { traceId: record.traceId, spanId: record.parentSpanId, traceFlags: sampled, isRemote: record.remoteParent } }),
    startTime: hrTime(record.startTimeMs),
    endTime: hrTime(record.endTimeMs),
    duration: hrTime(record.endTimeMs - record.startTimeMs),
    status: record.status,
    attributes: record.attributes,
    links,
    events: [],
    ended: true,
    resource,
    instrumentationScope: INSTRUMENTATION_SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** The ended spans of a trace as ReadableSpans; spans still open are never exported. */
export function readableSpans(spans: readonly TraceSpan[], resource: Resource): ReadableSpan[] {
  return spans.filter(isEnded).map((span) => readableOf(spanRecordOf(span), resource));
}
