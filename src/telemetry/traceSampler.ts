import { ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, type Sampler, SamplingDecision, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-base";
import type { SamplerKind, TelemetrySettings } from "../config/telemetry.js";
import type { TraceParent } from "../contracts/traceContext.js";

/**
 * The configured sampler (OTEL_TRACES_SAMPLER, docs/telemetry.md), decided
 * once per trace so a tree is exported whole or not at all. Loaded only
 * when export is on.
 */

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
