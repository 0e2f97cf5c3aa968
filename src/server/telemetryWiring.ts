import { agentOtlpEnvironment, resolveTelemetry, type TelemetrySettings } from "../config/telemetry.js";
import type { LoomConfig } from "../config/config.js";
import type { Orchestrator } from "../engine/orchestrator.js";
import type { LiveTraceExport } from "../telemetry/liveTraceExport.js";
import { traceIdOfThread, traceParentOfRun } from "../traces/treeContext.js";

/**
 * Trace export as one start-up step (docs/telemetry.md). Off: nothing of the
 * OpenTelemetry SDK is loaded and nothing follows the log; agents still get
 * their run's TRACEPARENT. On: the live exporter follows the log, and agents
 * also get the OTLP exporter variables.
 */
export interface TraceWiring {
  /** The agent process environment for a run's session (OpenSessionInput.traceEnvironment). */
  traceEnvironment(runId: string): Readonly<Record<string, string>>;
  /** The live exporter, while export is on. */
  readonly live: LiveTraceExport | null;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The settings, with their header values handed to the log as secrets; throws ConfigError for a bad value. */
export function telemetrySettings(config: LoomConfig, addSecret: (secret: string) => void, env: Readonly<Record<string, string | undefined>> = process.env): TelemetrySettings | null {
  const settings = resolveTelemetry(config.telemetry, env);
  for (const value of Object.values(settings?.headers ?? {})) if (value.length > 0) addSecret(value);
  return settings;
}

export async function openTraceWiring(settings: TelemetrySettings | null, options: { readonly orchestrator: Orchestrator; readonly version: string; readonly log: (line: string) => void }): Promise<TraceWiring> {
  const { orchestrator } = options;
  // Spans that end while the server starts (runs the restart ended) are exported once the exporter starts.
  const from = orchestrator.state.lastSequence;
  let live: LiveTraceExport | null = null;
  if (settings !== null) {
    const { LiveTraceExport } = await import("../telemetry/liveTraceExport.js");
    live = new LiveTraceExport({ orchestrator, settings, version: options.version, log: options.log });
  }
  const exporterEnv = settings === null ? {} : agentOtlpEnvironment(settings);
  return {
    live,
    traceEnvironment(runId) {
      const state = orchestrator.state;
      const threadId = state.runs.get(runId)?.threadId;
      const sampled = live === null || threadId === undefined || live.isSampled(traceIdOfThread(state, threadId), threadId);
      const traceParent = traceParentOfRun(state, runId, sampled);
      return { ...(traceParent === null ? {} : { TRACEPARENT: traceParent }), ...exporterEnv };
    },
    async start() {
      await live?.start(from);
      if (settings !== null) options.log(`loom: exporting traces to ${settings.tracesUrl} (${settings.protocol}, sampler ${settings.sampler})`);
    },
    async stop() {
      await live?.stop();
    },
  };
}
