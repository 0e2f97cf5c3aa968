import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { BufferConfig } from "@opentelemetry/sdk-trace-base";
import { OtlpProtocol, type TelemetrySettings } from "../config/telemetry.js";
import { Attr } from "../traces/spanAttributes.js";
import type { SpanRecord } from "./readableSpans.js";

/**
 * Encoding and sending spans off the server's event loop (docs/telemetry.md,
 * "Live export"). The live exporter hands ended spans over as SpanRecords,
 * plain data posted in batches; a worker thread makes them the SDK's
 * ReadableSpans, batches them in the SDK's BatchSpanProcessor and sends them
 * with the SDK's OTLP/HTTP exporter in the configured encoding, so the
 * protobuf or JSON encoder and the HTTP client never run on the event loop.
 *
 * Stopping flushes: the worker's batch is sent before it exits. A worker
 * that dies is reported to the log and started again (the spans it held are
 * lost, as they would be in a crash of the server: `loom trace --otlp` sends
 * them again); one that dies before it ever started is not, and live export
 * stops.
 */

/**
 * Loom's batch limits where OTEL_BSP_* set none: a tree ends spans in bursts
 * (a fan-out's children end together), so the queue holds more than the
 * SDK's 2,048 before it drops, and a batch is sent as soon as 1,024 wait.
 */
const BATCH_DEFAULTS = { maxQueueSize: 16_384, maxExportBatchSize: 1_024 } as const;

/** The live exporter's batch limits (OTEL_BSP_* tune them, read by the SDK where these leave them unset; a full queue drops spans, the SDK's rule). */
export function batchConfig(options: { readonly scheduledDelayMillis?: number; readonly maxQueueSize?: number } = {}, env: Readonly<Record<string, string | undefined>> = process.env): BufferConfig {
  return {
    ...(env.OTEL_BSP_MAX_QUEUE_SIZE === undefined ? { maxQueueSize: BATCH_DEFAULTS.maxQueueSize } : {}),
    ...(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE === undefined ? { maxExportBatchSize: BATCH_DEFAULTS.maxExportBatchSize } : {}),
    ...options,
  };
}

/** Records posted to the worker in one message at most; fewer wait at most one turn of the event loop. */
export const POST_EVERY_SPANS = 512;

/** The SDK packages the worker loads, resolved from here (the worker has no module of its own next to this one). */
const PACKAGES = {
  sdk: "@opentelemetry/sdk-trace-base",
  resources: "@opentelemetry/resources",
  core: "@opentelemetry/core",
  [OtlpProtocol.protobuf]: "@opentelemetry/exporter-trace-otlp-proto",
  [OtlpProtocol.json]: "@opentelemetry/exporter-trace-otlp-http",
} as const;

interface WorkerSetup {
  readonly modules: { readonly sdk: string; readonly resources: string; readonly core: string; readonly exporter: string };
  readonly url: string;
  /** Secret: held in the worker's memory only. */
  readonly headers: Readonly<Record<string, string>>;
  readonly resource: Readonly<Record<string, string>>;
  readonly batch: BufferConfig;
  readonly linkKindAttribute: string;
}

type ToWorker = { readonly type: "spans"; readonly spans: readonly SpanRecord[] } | { readonly type: "flush"; readonly id: number } | { readonly type: "stop" };
type FromWorker =
  | { readonly type: "ready" }
  | { readonly type: "exported"; readonly count: number }
  | { readonly type: "failed"; readonly count: number; readonly message: string }
  | { readonly type: "flushed"; readonly id: number }
  | { readonly type: "stopped" };

// Run with `eval`, as a script or as a module (a worker's eval follows the process's --input-type), so
// it imports only dynamically. Its ReadableSpan is readableSpans.ts's `readableOf`, step for step: the
// trace tests compare what this worker sent with what `loom trace --otlp` sends for the same spans.
const WORKER_SOURCE = `
(async () => {
const { parentPort, workerData } = await import("node:worker_threads");
const require = (await import("node:module")).createRequire(workerData.modules.sdk);
const { BatchSpanProcessor } = require(workerData.modules.sdk);
const { resourceFromAttributes } = require(workerData.modules.resources);
const { ExportResultCode } = require(workerData.modules.core);
const { OTLPTraceExporter } = require(workerData.modules.exporter);
const resource = resourceFromAttributes(workerData.resource);
const scope = { name: "loom" };
const SAMPLED = 1;
const inner = new OTLPTraceExporter({ url: workerData.url, headers: workerData.headers });
const exporter = {
  export(spans, done) {
    inner.export(spans, (result) => {
      if (result.error === undefined && result.code === ExportResultCode.SUCCESS) parentPort.postMessage({ type: "exported", count: spans.length });
      else parentPort.postMessage({ type: "failed", count: spans.length, message: result.error?.message ?? "refused" });
      done(result);
    });
  },
  shutdown: () => inner.shutdown(),
  forceFlush: () => inner.forceFlush(),
};
const processor = new BatchSpanProcessor(exporter, workerData.batch);
function hrTime(ms) {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}
function readable(record) {
  const links = record.links.map((link) => ({ context: { traceId: link.traceId, spanId: link.spanId, traceFlags: SAMPLED }, attributes: { [workerData.linkKindAttribute]: link.kind } }));
  const span = {
    name: record.name,
    kind: record.kind,
    spanContext: () => ({ traceId: record.traceId, spanId: record.spanId, traceFlags: SAMPLED }),
    startTime: hrTime(record.startTimeMs),
    endTime: hrTime(record.endTimeMs),
    duration: hrTime(record.endTimeMs - record.startTimeMs),
    status: record.status,
    attributes: record.attributes,
    links,
    events: [],
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
  if (record.parentSpanId !== null) span.parentSpanContext = { traceId: record.traceId, spanId: record.parentSpanId, traceFlags: SAMPLED, isRemote: record.remoteParent };
  return span;
}
parentPort.on("message", (message) => {
  if (message.type === "spans") for (const record of message.spans) processor.onEnd(readable(record));
  else if (message.type === "flush") processor.forceFlush().finally(() => parentPort.postMessage({ type: "flushed", id: message.id }));
  else if (message.type === "stop") processor.shutdown().finally(() => parentPort.postMessage({ type: "stopped" }));
});
parentPort.postMessage({ type: "ready" });
})();
`;

export interface ExportWorkerOptions {
  readonly settings: Pick<TelemetrySettings, "tracesUrl" | "protocol" | "headers">;
  readonly resource: Readonly<Record<string, string>>;
  readonly batch: BufferConfig;
  readonly log: (line: string) => void;
  /** Spans the collector accepted (reported by the worker). */
  readonly onExported: (count: number) => void;
}

/** The main thread's side of the export worker: posts records in batches, flushes, stops, and restarts a worker that died. */
export class ExportWorker {
  private worker: Worker | null = null;
  private started = false;
  private stopping = false;
  private pending: SpanRecord[] = [];
  private postScheduled = false;
  private nextFlush = 0;
  private readonly flushes = new Map<number, () => void>();
  private stopped: (() => void) | null = null;
  private restartCount = 0;
  private readonly startWaiters: (() => void)[] = [];

  constructor(private readonly options: ExportWorkerOptions) {
    this.spawn();
  }

  /** Resolves once the first worker has loaded the SDK and takes spans, or failed to start (spans handed over before then wait in its queue). */
  whenStarted(): Promise<void> {
    if (this.started || this.worker === null) return Promise.resolve();
    return new Promise((resolve) => this.startWaiters.push(resolve));
  }

  /** Workers started again after one died. */
  get restarts(): number {
    return this.restartCount;
  }

  /** Whether a worker is there to take spans (false once one failed to start, or after stop). */
  get running(): boolean {
    return this.worker !== null && !this.stopping;
  }

  /** Hand an ended span over; it is posted with others within a turn of the event loop. */
  add(record: SpanRecord): void {
    if (!this.running) return;
    this.pending.push(record);
    if (this.pending.length >= POST_EVERY_SPANS) this.postPending();
    else if (!this.postScheduled) {
      this.postScheduled = true;
      setImmediate(() => this.postPending());
    }
  }

  /** Resolves once the worker has sent (or failed to send) every span handed over so far. */
  flush(): Promise<void> {
    const worker = this.worker;
    if (worker === null || this.stopping) return Promise.resolve();
    this.postPending();
    const id = this.nextFlush++;
    worker.ref();
    return new Promise((resolve) => {
      this.flushes.set(id, resolve);
      this.send({ type: "flush", id });
    });
  }

  /** Send what the worker holds, then end it. */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (worker === null || this.stopping) return;
    this.postPending();
    this.stopping = true;
    worker.ref();
    await new Promise<void>((resolve) => {
      this.stopped = resolve;
      this.send({ type: "stop" });
    });
    this.worker = null;
    await worker.terminate();
  }

  /** End the current worker as a crash would (it is started again, as after any death). */
  async killWorker(): Promise<void> {
    await this.worker?.terminate();
  }

  private spawn(): void {
    const { settings } = this.options;
    const resolve = createRequire(import.meta.url).resolve;
    const setup: WorkerSetup = {
      modules: { sdk: resolve(PACKAGES.sdk), resources: resolve(PACKAGES.resources), core: resolve(PACKAGES.core), exporter: resolve(PACKAGES[settings.protocol]) },
      url: settings.tracesUrl,
      headers: { ...settings.headers },
      resource: this.options.resource,
      batch: this.options.batch,
      linkKindAttribute: Attr.linkKind,
    };
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: setup });
    worker.unref();
    this.worker = worker;
    this.started = false;
    let failure = "it exited";
    worker.on("message", (message: FromWorker) => this.onMessage(message));
    worker.on("error", (error) => (failure = error.message));
    worker.on("exit", () => {
      if (this.worker === worker) this.onDied(failure);
    });
  }

  private onMessage(message: FromWorker): void {
    switch (message.type) {
      case "ready":
        this.started = true;
        for (const resolve of this.startWaiters.splice(0)) resolve();
        return;
      case "exported":
        this.options.onExported(message.count);
        return;
      case "failed":
        this.options.log(`telemetry: exporting ${message.count} span(s) to ${this.options.settings.tracesUrl} failed: ${message.message}`);
        return;
      case "flushed":
        this.settleFlush(message.id);
        return;
      case "stopped":
        this.stopped?.();
        this.stopped = null;
        return;
    }
  }

  private onDied(failure: string): void {
    const wasStarted = this.started;
    this.worker = null;
    this.pending = [];
    for (const id of [...this.flushes.keys()]) this.settleFlush(id);
    this.stopped?.();
    this.stopped = null;
    if (this.stopping) return;
    if (!wasStarted) {
      for (const resolve of this.startWaiters.splice(0)) resolve();
      this.options.log(`telemetry: live export stopped: the export worker could not start: ${failure}`);
      return;
    }
    this.restartCount += 1;
    this.options.log(`telemetry: the export worker died (${failure}); the spans it held were not sent; starting it again`);
    this.spawn();
  }

  private settleFlush(id: number): void {
    this.flushes.get(id)?.();
    this.flushes.delete(id);
    if (this.flushes.size === 0 && this.stopped === null) this.worker?.unref();
  }

  private postPending(): void {
    this.postScheduled = false;
    if (this.pending.length === 0) return;
    const spans = this.pending;
    this.pending = [];
    this.send({ type: "spans", spans });
  }

  private send(message: ToWorker): void {
    this.worker?.postMessage(message);
  }
}
