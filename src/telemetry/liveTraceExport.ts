import type { TelemetrySettings } from "../config/telemetry.js";
import type { StoredEvent } from "../contracts/envelopes.js";
import { toDomainEvent } from "../contracts/events.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import type { Subscription } from "../store/eventStore.js";
import { Attr } from "../traces/spanAttributes.js";
import { type TraceSpan, isEnded } from "../traces/spanModel.js";
import { callerOfTree } from "../traces/treeContext.js";
import { spansEndedBy } from "../traces/treeSpans.js";
import { ExportWorker, batchConfig } from "./exportWorker.js";
import { resourceAttributes, spanRecordOf } from "./readableSpans.js";
import { traceSampler } from "./traceSampler.js";

/** Span ids remembered to drop a repeat (an entity updated after it ended); forgotten in one go past this many. */
const REMEMBERED_SPANS = 100_000;
/** Sampling decisions kept per trace; forgotten in one go past this many. */
const REMEMBERED_TRACES = 10_000;

export interface LiveTraceExportOptions {
  readonly orchestrator: Orchestrator;
  readonly settings: TelemetrySettings;
  readonly version: string;
  readonly log: (line: string) => void;
  /** How long ended spans wait to be sent together, and how many may wait (defaults: exportWorker.ts's, or OTEL_BSP_*). */
  readonly batch?: { readonly scheduledDelayMillis?: number; readonly maxQueueSize?: number };
}

/**
 * Live export (docs/telemetry.md): follows the orchestrator's committed log
 * from the position it starts at and hands every span an event ends, as
 * plain records, to the export worker (exportWorker.ts), which batches,
 * encodes and sends them off the event loop. The spans are the span model's,
 * so a restart continues with the same ids, and `loom trace --otlp` can send
 * any of them again. Export failures are logged (never with the headers);
 * the log is never held up by them.
 */
export class LiveTraceExport {
  private subscription: Subscription | null = null;
  private readonly worker: ExportWorker;
  private readonly sampled: (traceId: string, caller: Parameters<ReturnType<typeof traceSampler>>[1]) => boolean;
  /** always_on: every tree is exported, so no decision is asked for or kept. */
  private readonly samplesAll: boolean;
  private readonly decisions = new Map<string, boolean>();
  private readonly sent = new Set<string>();
  private readonly counts = { ended: 0, exported: 0 };

  constructor(private readonly options: LiveTraceExportOptions) {
    this.worker = new ExportWorker({
      settings: options.settings,
      resource: resourceAttributes(options.settings.serviceName, options.version),
      batch: batchConfig(options.batch),
      log: options.log,
      onExported: (count) => (this.counts.exported += count),
    });
    this.sampled = traceSampler(options.settings);
    this.samplesAll = options.settings.sampler === "always_on";
  }

  /** Follow the log after `from` (default: its current head); resolves once the subscription is live and the export worker has started. */
  async start(from: number = this.options.orchestrator.state.lastSequence): Promise<void> {
    this.subscription = this.options.orchestrator.follow(from, (event) => this.onEvent(event));
    await Promise.all([this.subscription.caughtUp, this.worker.whenStarted()]);
  }

  /** Whether the tree of `threadId` is exported (the sampler's decision for its trace). */
  isSampled(traceId: string, threadId: string): boolean {
    if (this.samplesAll) return true;
    const known = this.decisions.get(traceId);
    if (known !== undefined) return known;
    const decision = this.sampled(traceId, callerOfTree(this.options.orchestrator.state, threadId));
    if (this.decisions.size >= REMEMBERED_TRACES) this.decisions.clear();
    this.decisions.set(traceId, decision);
    return decision;
  }

  /** Spans handed to the worker so far, those the collector accepted (the rest wait, or were dropped by a full queue or a worker that died), and the worker's restarts. */
  stats(): { readonly ended: number; readonly exported: number; readonly workerRestarts: number } {
    return { ...this.counts, workerRestarts: this.worker.restarts };
  }

  /** The export worker (its state; tests end it as a crash would). */
  get exportWorker(): ExportWorker {
    return this.worker;
  }

  /** Send what is batched now (tests, shutdown). */
  flush(): Promise<void> {
    return this.worker.flush();
  }

  /** Stop following and send what is batched. */
  async stop(): Promise<void> {
    this.subscription?.close();
    this.subscription = null;
    await this.worker.stop();
  }

  private onEvent(stored: StoredEvent): void {
    const spans = spansEndedBy(this.options.orchestrator.state, toDomainEvent(stored));
    for (const span of spans) this.export(span);
  }

  private export(span: TraceSpan): void {
    if (!isEnded(span) || this.sent.has(span.spanId)) return;
    const threadId = span.attributes[Attr.threadId];
    if (typeof threadId === "string" && !this.isSampled(span.traceId, threadId)) return;
    if (this.sent.size >= REMEMBERED_SPANS) this.sent.clear();
    this.sent.add(span.spanId);
    this.counts.ended += 1;
    this.worker.add(spanRecordOf(span));
  }
}
