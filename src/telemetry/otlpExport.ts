import { ExportResultCode } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { OtlpProtocol, type TelemetrySettings } from "../config/telemetry.js";

/**
 * The SDK's OTLP/HTTP exporter in the configured encoding, for sending a
 * tree after the fact (`loom trace --otlp`, docs/telemetry.md). The live
 * exporter's runs in its worker thread (exportWorker.ts).
 */

/** The exporter for these settings: JSON or protobuf over HTTP, with the (secret) headers. */
export function otlpExporter(settings: Pick<TelemetrySettings, "tracesUrl" | "protocol" | "headers">): SpanExporter {
  const config = { url: settings.tracesUrl, headers: { ...settings.headers } };
  return settings.protocol === OtlpProtocol.json ? new JsonExporter(config) : new ProtobufExporter(config);
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
