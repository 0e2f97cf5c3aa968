import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { OtlpProtocol } from "../config/telemetry.js";
import type { TreeTrace } from "../traces/spanModel.js";
import { LOOM_VERSION } from "../version.js";
import { COMMON, type Output, oneOf } from "./args.js";
import { UsageError } from "./errors.js";
import { OwnerApi } from "./ownerApi.js";
import { formatWaterfall } from "./traceOutput.js";

/**
 * `loom trace THREAD`: the tree's spans from the running server (GET
 * /api/traces/:threadId, docs/telemetry.md) as a waterfall, written as
 * OTLP/JSON, or exported to a collector after the fact.
 */
export const TRACE_USAGE = `  loom trace THREAD [--json FILE] [--otlp URL [--protocol http/protobuf|http/json]]`;

export const TRACE_HELP = `Usage:
${TRACE_USAGE}

Prints the spans of the tree THREAD belongs to (its root thread's whole
tree) as an indented waterfall: name, a bar placing the span in the trace's
time, duration, status, tokens and cost. THREAD is a thread id or a unique
prefix of one. Spans still running are shown with a light bar.

  --json FILE   write the ended spans as an OTLP/JSON ExportTraceServiceRequest
                (what a collector's /v1/traces accepts); "-" writes to stdout.
  --otlp URL    send the ended spans to an OTLP/HTTP collector: URL is its base
                (spans go to URL/v1/traces) or the full traces URL. Headers come
                from OTEL_EXPORTER_OTLP_HEADERS; the encoding from --protocol,
                else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf.

The spans and their ids are those the server exports live, so a tree sent
again after a restart lands on the same trace. Takes --state-dir DIR. Exit
codes: 0 done; 1 the server or the collector refused; 2 usage error; 3 no
server is running for the state dir.
`;

export async function runTrace(argv: readonly string[], out: Output = (t) => process.stdout.write(t)): Promise<number> {
  const { values, positionals: args } = parseArgs({
    args: [...argv],
    options: { ...COMMON, json: { type: "string" }, otlp: { type: "string" }, protocol: { type: "string" } },
    allowPositionals: true,
  });
  if (values.help === true) {
    out(TRACE_HELP);
    return 0;
  }
  if (args.length !== 1) throw new UsageError(`loom trace takes THREAD, got ${args.length === 0 ? "none" : args.map((a) => JSON.stringify(a)).join(" ")}`);
  const ref = args[0]!;
  const protocol = oneOf("protocol", values.protocol, Object.values(OtlpProtocol));
  if (protocol !== undefined && values.otlp === undefined) throw new UsageError("--protocol goes with --otlp URL");
  if (values.otlp !== undefined && !URL.canParse(values.otlp)) throw new UsageError(`--otlp must be an http:// or https:// URL, got "${values.otlp}"`);
  if (values.otlp !== undefined && !/^https?:$/.test(new URL(values.otlp).protocol)) throw new UsageError(`--otlp must be an http:// or https:// URL, got "${values.otlp}"`);
  const api = OwnerApi.connect(values["state-dir"]);
  const threadId = await api.resolveThread(ref);
  const trace = await api.get<TreeTrace>(`/api/traces/${encodeURIComponent(threadId)}`);
  if (values.json === undefined && values.otlp === undefined) {
    out(formatWaterfall(trace));
    return 0;
  }
  // The SDK is loaded only for the commands that need it.
  const files = await import("../telemetry/traceFiles.js");
  if (values.json !== undefined) {
    const body = `${files.otlpJsonOf(trace, LOOM_VERSION)}\n`;
    if (values.json === "-") out(body);
    else {
      writeFileSync(resolve(values.json), body);
      out(`wrote ${trace.spans.filter((span) => span.endTimeMs !== null).length} span(s) of trace ${trace.traceId} to ${values.json}\n`);
    }
  }
  if (values.otlp !== undefined) {
    const sent = await files.exportTrace(trace, values.otlp, LOOM_VERSION, protocol === undefined ? {} : { protocol });
    out(`sent ${sent} span(s) of trace ${trace.traceId} to ${files.tracesUrlOf(values.otlp)}\n`);
  }
  return 0;
}
