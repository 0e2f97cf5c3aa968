import { type HrTime, type Link, SpanKind as OtelSpanKind, SpanStatusCode as OtelStatusCode, TraceFlags } from "@opentelemetry/api";
import { type Resource, resourceFromAttributes } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { type SpanKind, type SpanStatusCode, type TraceSpan, isEnded } from "../traces/spanModel.js";
import { Attr } from "../traces/spanAttributes.js";

/**
 * The span model as the SDK's ReadableSpan, which its exporters and
 * serializers take. Loom builds finished spans from its log, so they never
 * pass through a Tracer: ids, times, parents and links are Loom's own.
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

export function loomResource(serviceName: string, version: string): Resource {
  return resourceFromAttributes({ "service.name": serviceName, "service.version": version });
}

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** An ended span as a ReadableSpan; spans still open are never exported. */
export function toReadableSpan(span: TraceSpan & { readonly endTimeMs: number }, resource: Resource): ReadableSpan {
  const sampled = TraceFlags.SAMPLED;
  const links: Link[] = span.links.map((link) => ({ context: { traceId: link.traceId, spanId: link.spanId, traceFlags: sampled }, attributes: { [Attr.linkKind]: link.kind } }));
  const end = Math.max(span.endTimeMs, span.startTimeMs);
  return {
    name: span.name,
    kind: KIND[span.kind],
    spanContext: () => ({ traceId: span.traceId, spanId: span.spanId, traceFlags: sampled }),
    ...(span.parentSpanId === null ? {} : { parentSpanContext: { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: sampled, isRemote: span.remoteParent } }),
    startTime: hrTime(span.startTimeMs),
    endTime: hrTime(end),
    duration: hrTime(end - span.startTimeMs),
    status: span.status.message === undefined ? { code: STATUS[span.status.code] } : { code: STATUS[span.status.code], message: span.status.message },
    attributes: span.attributes,
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

export function readableSpans(spans: readonly TraceSpan[], resource: Resource): ReadableSpan[] {
  return spans.filter(isEnded).map((span) => toReadableSpan(span, resource));
}
