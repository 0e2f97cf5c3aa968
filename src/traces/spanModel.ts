/**
 * The span model (docs/telemetry.md): a tree's work as OpenTelemetry spans,
 * derived from the recorded log alone, so the same spans come out live, after
 * a restart and on every later read. Plain data: the telemetry exporter turns
 * it into OTLP, `loom trace` prints it. (The web UI's waterfall reads the
 * same recorded runs, waits and requests directly: src/app/trees/treeGlance.ts.)
 */

/** OpenTelemetry span kinds (the OTLP names, lower case). */
export const SpanKind = {
  internal: "internal",
  server: "server",
  client: "client",
} as const;
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];

/** OpenTelemetry status codes: `error` carries a message (a failure code and its text). */
export const SpanStatusCode = {
  unset: "unset",
  ok: "ok",
  error: "error",
} as const;
export type SpanStatusCode = (typeof SpanStatusCode)[keyof typeof SpanStatusCode];

export interface SpanStatus {
  readonly code: SpanStatusCode;
  readonly message?: string;
}

export type SpanAttributeValue = string | number | boolean;
export type SpanAttributes = Readonly<Record<string, SpanAttributeValue>>;

/** Why two spans are linked (attribute `loom.link.kind` on the link). */
export const SpanLinkKind = {
  /** From a delegation to the first run of the child it started. */
  delegatedTo: "delegated_to",
  /** From a child's first run back to the delegation that started it. */
  delegatedFrom: "delegated_from",
  /** To the span of a caller in another trace whose call started the work. */
  caller: "caller",
} as const;
export type SpanLinkKind = (typeof SpanLinkKind)[keyof typeof SpanLinkKind];

export interface SpanLink {
  readonly traceId: string;
  readonly spanId: string;
  readonly kind: SpanLinkKind;
}

/** What a span stands for in Loom: the entity it is derived from. */
export const SpanSource = {
  run: "run",
  attempt: "attempt",
  tool: "tool",
  delegation: "delegation",
  workflow: "workflow",
  workflowStep: "workflow_step",
  approval: "approval",
  question: "question",
  request: "request",
  wait: "wait",
} as const;
export type SpanSource = (typeof SpanSource)[keyof typeof SpanSource];

export interface TraceSpan {
  /** 32 lower-case hex digits. */
  readonly traceId: string;
  /** 16 lower-case hex digits. */
  readonly spanId: string;
  /** Null for a span at the top of the trace. */
  readonly parentSpanId: string | null;
  /** The parent is a caller's span outside Loom (an inbound traceparent), not one of this model's. */
  readonly remoteParent: boolean;
  readonly name: string;
  readonly kind: SpanKind;
  readonly source: SpanSource;
  /** The Loom entity id the span is derived from (a run, an item, a task ...). */
  readonly entityId: string;
  /** Epoch milliseconds. */
  readonly startTimeMs: number;
  /** Null while the work goes on: such a span is read, never exported. */
  readonly endTimeMs: number | null;
  readonly status: SpanStatus;
  readonly attributes: SpanAttributes;
  readonly links: readonly SpanLink[];
}

/** A tree's trace: every span of the root thread's tree, parents before children where times allow. */
export interface TreeTrace {
  readonly traceId: string;
  readonly rootThreadId: string;
  readonly spans: readonly TraceSpan[];
}

export function isEnded(span: TraceSpan): span is TraceSpan & { readonly endTimeMs: number } {
  return span.endTimeMs !== null;
}
