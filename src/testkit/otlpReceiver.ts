import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import protobuf from "protobufjs";
import { pollUntil } from "./poll.js";

/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 for tests: it accepts
 * POST /v1/traces in both encodings (application/json, and
 * application/x-protobuf decoded with protobufjs against the OTLP trace
 * schema below) and keeps every span as one plain shape.
 */

/** The messages of opentelemetry-proto's trace service request that a receiver reads. */
const TRACE_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  repeated Event events = 11; uint32 dropped_events_count = 12; repeated Link links = 13; uint32 dropped_links_count = 14; Status status = 15; fixed32 flags = 16;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
`;

const RequestType = protobuf.parse(TRACE_PROTO, { keepCase: false }).root.lookupType("otlp.ExportTraceServiceRequest");

export type ReceivedValue = string | number | boolean | null;

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** "" for a span at the top. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP numbering: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly startTimeUnixNano: bigint;
  readonly endTimeUnixNano: bigint;
  readonly attributes: Readonly<Record<string, ReceivedValue>>;
  /** OTLP numbering: 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message: string };
  readonly links: readonly { readonly traceId: string; readonly spanId: string; readonly attributes: Readonly<Record<string, ReceivedValue>> }[];
  readonly resource: Readonly<Record<string, ReceivedValue>>;
  readonly encoding: "json" | "protobuf";
}

export interface ReceivedRequest {
  readonly headers: IncomingHttpHeaders;
  readonly encoding: "json" | "protobuf";
  readonly spanCount: number;
}

interface RawKeyValue {
  key: string;
  value?: Record<string, unknown>;
}

function valueOf(value: Record<string, unknown> | undefined): ReceivedValue {
  if (value === undefined) return null;
  if (typeof value.stringValue === "string") return value.stringValue;
  if (typeof value.boolValue === "boolean") return value.boolValue;
  if (value.intValue !== undefined && value.intValue !== null) return Number(value.intValue);
  if (typeof value.doubleValue === "number") return value.doubleValue;
  return null;
}

function attributesOf(list: readonly RawKeyValue[] | undefined): Record<string, ReceivedValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

/** Ids arrive as hex strings in OTLP/JSON, as bytes in protobuf. */
function idOf(raw: unknown): string {
  if (raw === undefined || raw === null) return "";
  if (typeof raw === "string") return raw.toLowerCase();
  return Buffer.from(raw as Uint8Array).toString("hex");
}

function nanos(raw: unknown): bigint {
  if (raw === undefined || raw === null) return 0n;
  if (typeof raw === "object" && "high" in raw && "low" in raw) {
    const long = raw as { high: number; low: number };
    return (BigInt(long.high >>> 0) << 32n) | BigInt(long.low >>> 0);
  }
  return BigInt(raw as string | number);
}

interface RawSpan {
  traceId?: unknown;
  spanId?: unknown;
  parentSpanId?: unknown;
  name?: string;
  kind?: number;
  startTimeUnixNano?: unknown;
  endTimeUnixNano?: unknown;
  attributes?: RawKeyValue[];
  status?: { code?: number; message?: string };
  links?: { traceId?: unknown; spanId?: unknown; attributes?: RawKeyValue[] }[];
}

function spansOf(body: { resourceSpans?: { resource?: { attributes?: RawKeyValue[] }; scopeSpans?: { spans?: RawSpan[] }[] }[] }, encoding: "json" | "protobuf"): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map(
        (span): ReceivedSpan => ({
          traceId: idOf(span.traceId),
          spanId: idOf(span.spanId),
          parentSpanId: idOf(span.parentSpanId),
          name: span.name ?? "",
          kind: span.kind ?? 0,
          startTimeUnixNano: nanos(span.startTimeUnixNano),
          endTimeUnixNano: nanos(span.endTimeUnixNano),
          attributes: attributesOf(span.attributes),
          status: { code: span.status?.code ?? 0, message: span.status?.message ?? "" },
          links: (span.links ?? []).map((link) => ({ traceId: idOf(link.traceId), spanId: idOf(link.spanId), attributes: attributesOf(link.attributes) })),
          resource,
          encoding,
        }),
      ),
    );
  });
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly requests: ReceivedRequest[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | null = null;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        if (req.method !== "POST" || req.url !== "/v1/traces") {
          res.writeHead(404).end();
          return;
        }
        const body = Buffer.concat(chunks);
        const json = (req.headers["content-type"] ?? "").includes("json");
        const encoding = json ? "json" : "protobuf";
        const decoded = json ? (JSON.parse(body.toString("utf8")) as Parameters<typeof spansOf>[0]) : (RequestType.toObject(RequestType.decode(body), { longs: String, bytes: Buffer }) as Parameters<typeof spansOf>[0]);
        const spans = spansOf(decoded, encoding);
        receiver!.spans.push(...spans);
        receiver!.requests.push({ headers: req.headers, encoding, spanCount: spans.length });
        res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" }).end(json ? "{}" : Buffer.alloc(0));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  /** The spans received so far, by span id (a repeat keeps the first). */
  byId(): Map<string, ReceivedSpan> {
    const map = new Map<string, ReceivedSpan>();
    for (const span of this.spans) if (!map.has(span.spanId)) map.set(span.spanId, span);
    return map;
  }

  /** Wait until a span satisfying `match` has arrived. */
  async waitFor(match: (span: ReceivedSpan) => boolean, timeoutMs = 20_000): Promise<ReceivedSpan> {
    const found = await pollUntil(() => this.spans.find(match), (span) => span !== undefined, "an exported span", timeoutMs);
    return found!;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
