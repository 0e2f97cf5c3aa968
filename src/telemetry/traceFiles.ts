import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { OtlpProtocol, parseOtlpHeaders } from "../config/telemetry.js";
import type { TreeTrace } from "../traces/spanModel.js";
import { exportOnce, otlpExporter } from "./otlpExport.js";
import { loomResource, readableSpans } from "./readableSpans.js";

/**
 * A tree's trace after the fact (`loom trace --json`, `--otlp`): its ended
 * spans as an OTLP/JSON ExportTraceServiceRequest, or sent to a collector.
 * The spans and their ids are the live exporter's, so a collector that kept
 * the live ones sees the same spans again.
 */

type Env = Readonly<Record<string, string | undefined>>;

function serviceName(env: Env): string {
  return env.OTEL_SERVICE_NAME?.trim() || "loom";
}

/** The OTLP/JSON body a collector's /v1/traces accepts. */
export function otlpJsonOf(trace: TreeTrace, version: string, env: Env = process.env): string {
  const body = JsonTraceSerializer.serializeRequest(readableSpans(trace.spans, loomResource(serviceName(env), version)));
  return body === undefined ? "{}" : new TextDecoder().decode(body);
}

/** A collector URL as given: its base (traces go to /v1/traces), or a full path used as it is. */
export function tracesUrlOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname === "/" || parsed.pathname === "" ? `${parsed.origin}/v1/traces` : url;
}

/**
 * Send the trace's ended spans; resolves with how many went. The encoding
 * and headers come from the standard variables (OTEL_EXPORTER_OTLP_PROTOCOL,
 * OTEL_EXPORTER_OTLP_HEADERS and their TRACES_ forms) unless given.
 */
export async function exportTrace(trace: TreeTrace, url: string, version: string, options: { readonly protocol?: OtlpProtocol; readonly env?: Env } = {}): Promise<number> {
  const env = options.env ?? process.env;
  const headerName = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS === undefined ? "OTEL_EXPORTER_OTLP_HEADERS" : "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
  const headerText = env[headerName];
  const named = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  const protocol = options.protocol ?? (named === OtlpProtocol.json ? OtlpProtocol.json : OtlpProtocol.protobuf);
  const spans = readableSpans(trace.spans, loomResource(serviceName(env), version));
  if (spans.length === 0) return 0;
  await exportOnce(otlpExporter({ tracesUrl: tracesUrlOf(url), protocol, headers: headerText === undefined ? {} : parseOtlpHeaders(headerText, headerName) }), spans);
  return spans.length;
}
