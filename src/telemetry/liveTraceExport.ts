import { ExportResultCode } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { BatchSpanProcessor, SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { TelemetrySettings } from "../config/telemetry.js";
import type { StoredEvent } from "../contracts/envelopes.js";
import { toDomainEvent } from "../contracts/events.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import type { Subscription } from "../store/eventStore.js";
import { Attr } from "../traces/spanAttributes.js";
import type { TraceSpan } from "../traces/spanModel.js";
import { callerOfTree } from "../traces/treeContext.js";
import { spansEndedBy } from "../traces/treeSpans.js";
import { batchProcessor, otlpExporter, traceSampler } from "./otlpExport.js";
import { loomResource, toReadableSpan } from "./readableSpans.js";

/** Span ids remembered to drop a repeat (an entity updated after it ended); forgotten in one go past this many. */
const REMEMBERED_SPANS = 100_000;
/** Sampling decisions kept per trace; forgotten in one go past this many. */
const REMEMBERED_TRACES = 10_000;

export interface LiveTraceExportOptions {
  readonly orchestrator: Orchestrator;
  readonly settings: TelemetrySettings;
  readonly version: string;
  readonly log: (line: string) => void;
  /** The exporter to use instead of the settings' OTLP one (benchmarks). */
  readonly exporter?: SpanExporter;
  /** How long ended spans wait to be sent together, and how many may wait (defaults: otlpExport.ts's, or OTEL_BSP_*). */
  readonly batch?: { readonly scheduledDelayMillis?: number; readonly maxQueueSize?: number };
}

/**
 * Live export (docs/telemetry.md): follows the orchestrator's committed log
 * from the position it starts at and hands every span an event ends to a
 * batching OTLP exporter. The spans are the span model's, so a restart
 * continues with the same ids, and `loom trace --otlp` can send any of
 * them again. Export failures are logged (never with the headers); the log
 * is never held up by them.
 */
export class LiveTraceExport {
  private subscription: Subscription | null = null;
  private readonly processor: BatchSpanProcessor;
  private readonly resource: Resource;
  private readonly sampled: (traceId: string, caller: Parameters<ReturnType<typeof traceSampler>>[1]) => boolean;
  private readonly decisions = new Map<string, boolean>();
  private readonly sent = new Set<string>();
  private readonly counts = { ended: 0, exported: 0 };

  constructor(private readonly options: LiveTraceExportOptions) {
    const inner = options.exporter ?? otlpExporter(options.settings);
    const exporter = reportingExporter(inner, options.settings.tracesUrl, options.log, (count) => (this.counts.exported += count));
    this.processor = batchProcessor(exporter, options.batch);
    this.resource = loomResource(options.settings.serviceName, options.version);
    this.sampled = traceSampler(options.settings);
  }

  /** Follow the log after `from` (default: its current head); resolves once the subscription is live. */
  async start(from: number = this.options.orchestrator.state.lastSequence): Promise<void> {
    this.subscription = this.options.orchestrator.follow(from, (event) => this.onEvent(event));
    await this.subscription.caughtUp;
  }

  /** Whether the tree of `threadId` is exported (the sampler's decision for its trace). */
  isSampled(traceId: string, threadId: string): boolean {
    const known = this.decisions.get(traceId);
    if (known !== undefined) return known;
    const decision = this.sampled(traceId, callerOfTree(this.options.orchestrator.state, threadId));
    if (this.decisions.size >= REMEMBERED_TRACES) this.decisions.clear();
    this.decisions.set(traceId, decision);
    return decision;
  }

  /** Spans handed to the batch so far, and those the collector accepted (the rest wait, or were dropped by a full queue). */
  stats(): { readonly ended: number; readonly exported: number } {
    return { ...this.counts };
  }

  /** Send what is batched now (tests, shutdown). */
  flush(): Promise<void> {
    return this.processor.forceFlush();
  }

  /** Stop following and send what is batched. */
  async stop(): Promise<void> {
    this.subscription?.close();
    this.subscription = null;
    await this.processor.shutdown();
  }

  private onEvent(stored: StoredEvent): void {
    const spans = spansEndedBy(this.options.orchestrator.state, toDomainEvent(stored));
    for (const span of spans) this.export(span);
  }

  private export(span: TraceSpan & { readonly endTimeMs: number | null }): void {
    if (span.endTimeMs === null || this.sent.has(span.spanId)) return;
    const threadId = span.attributes[Attr.threadId];
    if (typeof threadId === "string" && !this.isSampled(span.traceId, threadId)) return;
    if (this.sent.size >= REMEMBERED_SPANS) this.sent.clear();
    this.sent.add(span.spanId);
    this.counts.ended += 1;
    this.processor.onEnd(toReadableSpan({ ...span, endTimeMs: span.endTimeMs }, this.resource));
  }
}

/** The exporter, counting what it sent and reporting a failed export to the log by the URL and the count only. */
function reportingExporter(inner: SpanExporter, url: string, log: (line: string) => void, exported: (count: number) => void): SpanExporter {
  return {
    export: (spans, done) =>
      inner.export(spans, (result) => {
        if (result.error !== undefined || result.code !== ExportResultCode.SUCCESS) log(`telemetry: exporting ${spans.length} span(s) to ${url} failed: ${result.error?.message ?? "refused"}`);
        else exported(spans.length);
        done(result);
      }),
    shutdown: () => inner.shutdown(),
    ...(inner.forceFlush === undefined ? {} : { forceFlush: () => inner.forceFlush!() }),
  };
}
