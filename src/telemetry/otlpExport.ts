import { ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { ExportResultCode } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  SamplingDecision,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import { OtlpProtocol, type SamplerKind, type TelemetrySettings } from "../config/telemetry.js";
import type { TraceParent } from "../contracts/traceContext.js";

/**
 * The OpenTelemetry SDK side of trace export (docs/telemetry.md): an OTLP/HTTP
 * exporter in the configured encoding, and the configured sampler, decided
 * once per trace so a tree is exported whole or not at all. This module is
 * loaded only when export is on.
 */

/** The exporter for these settings: JSON or protobuf over HTTP, with the (secret) headers. */
export function otlpExporter(settings: Pick<TelemetrySettings, "tracesUrl" | "protocol" | "headers">): SpanExporter {
  const config = { url: settings.tracesUrl, headers: { ...settings.headers } };
  return settings.protocol === OtlpProtocol.json ? new JsonExporter(config) : new ProtobufExporter(config);
}

const SAMPLERS: { readonly [K in SamplerKind]: (ratio: number) => Sampler } = {
  always_on: () => new AlwaysOnSampler(),
  always_off: () => new AlwaysOffSampler(),
  traceidratio: (ratio) => new TraceIdRatioBasedSampler(ratio),
  parentbased_always_on: () => new ParentBasedSampler({ root: new AlwaysOnSampler() }),
  parentbased_always_off: () => new ParentBasedSampler({ root: new AlwaysOffSampler() }),
  parentbased_traceidratio: (ratio) => new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
};

/** Whether a tree's trace is exported: the sampler asked once, with the caller's context as the parent when one was recorded. */
export function traceSampler(settings: Pick<TelemetrySettings, "sampler" | "samplerRatio">): (traceId: string, caller: TraceParent | null) => boolean {
  const sampler = SAMPLERS[settings.sampler](settings.samplerRatio);
  return (traceId, caller) => {
    const context = caller === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, { traceId: caller.traceId, spanId: caller.spanId, traceFlags: caller.flags, isRemote: true });
    return sampler.shouldSample(context, traceId, "tree", SpanKind.INTERNAL, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED;
  };
}

/** Send spans once, now (`loom trace --otlp`): resolves when the collector accepted them, rejects with its answer otherwise. */
export async function exportOnce(exporter: SpanExporter, spans: ReadableSpan[]): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      exporter.export(spans, (result) => (result.code === ExportResultCode.SUCCESS ? resolve() : reject(result.error ?? new Error("the collector refused the spans"))));
    });
  } finally {
    await exporter.shutdown();
  }
}

/**
 * Loom's batch limits where OTEL_BSP_* set none: a tree ends spans in bursts
 * (a fan-out's children end together), so the queue holds more than the
 * SDK's 2,048 before it drops, and a batch is sent as soon as 1,024 wait.
 */
const BATCH_DEFAULTS = { maxQueueSize: 16_384, maxExportBatchSize: 1_024 } as const;

/** Batches ended spans for a live exporter (OTEL_BSP_* tune it; a full queue drops spans, the SDK's rule). */
export function batchProcessor(exporter: SpanExporter, options: { readonly scheduledDelayMillis?: number; readonly maxQueueSize?: number } = {}, env: Readonly<Record<string, string | undefined>> = process.env): BatchSpanProcessor {
  return new BatchSpanProcessor(exporter, {
    ...(env.OTEL_BSP_MAX_QUEUE_SIZE === undefined ? { maxQueueSize: BATCH_DEFAULTS.maxQueueSize } : {}),
    ...(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE === undefined ? { maxExportBatchSize: BATCH_DEFAULTS.maxExportBatchSize } : {}),
    ...options,
  });
}
