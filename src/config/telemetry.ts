import { z } from "zod";
import { ConfigError, ConfigErrorCode } from "./configError.js";

/**
 * Trace export (docs/telemetry.md): the config file's `telemetry` section and
 * the standard OpenTelemetry variables, resolved into one setting. A variable
 * wins over the file key it stands for. Off unless an endpoint is set, and off
 * again with `enabled: false`, OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 * Header values are secrets: no message here ever quotes one.
 */

export const OtlpProtocol = { protobuf: "http/protobuf", json: "http/json" } as const;
export type OtlpProtocol = (typeof OtlpProtocol)[keyof typeof OtlpProtocol];
const PROTOCOLS: readonly string[] = Object.values(OtlpProtocol);

/** OTEL_TRACES_SAMPLER's values (the SDK environment specification). */
export const SamplerKind = {
  alwaysOn: "always_on",
  alwaysOff: "always_off",
  traceIdRatio: "traceidratio",
  parentBasedAlwaysOn: "parentbased_always_on",
  parentBasedAlwaysOff: "parentbased_always_off",
  parentBasedTraceIdRatio: "parentbased_traceidratio",
} as const;
export type SamplerKind = (typeof SamplerKind)[keyof typeof SamplerKind];
const SAMPLERS: readonly string[] = Object.values(SamplerKind);

const UrlSchema = z
  .string({ error: "must be a string" })
  .refine((value) => /^https?:\/\/[^\s]+$/.test(value) && URL.canParse(value), { error: "must be an http:// or https:// URL" });

export const TelemetrySchema = z.strictObject({
  /** false turns export off whatever the environment says. */
  enabled: z.boolean({ error: "must be true or false" }).optional(),
  /** The collector's base URL (OTEL_EXPORTER_OTLP_ENDPOINT): traces go to <endpoint>/v1/traces. */
  endpoint: UrlSchema.optional(),
  /** The full traces URL (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), used as it is. */
  tracesEndpoint: UrlSchema.optional(),
  protocol: z.enum(OtlpProtocol, { error: `must be one of ${PROTOCOLS.join(", ")}` }).optional(),
  /** Sent with every export (OTEL_EXPORTER_OTLP_HEADERS): secrets, never logged. */
  headers: z.record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: "must be an HTTP header name" }), z.string({ error: "must be a string" })).optional(),
  serviceName: z.string({ error: "must be a string" }).trim().min(1, { error: "must not be empty" }).optional(),
  sampler: z.enum(SamplerKind, { error: `must be one of ${SAMPLERS.join(", ")}` }).optional(),
  /** The ratio of a *traceidratio sampler, 0 to 1. */
  samplerArg: z.number({ error: "must be a number" }).min(0, { error: "must be at least 0" }).max(1, { error: "must be at most 1" }).optional(),
});
export type TelemetryFileConfig = z.output<typeof TelemetrySchema>;

export interface TelemetrySettings {
  /** Where spans are sent: the full traces URL. */
  readonly tracesUrl: string;
  readonly protocol: OtlpProtocol;
  /** Secrets: never logged, never in the event log. */
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  readonly sampler: SamplerKind;
  /** The ratio of a *traceidratio sampler. */
  readonly samplerRatio: number;
}

export const DEFAULT_SERVICE_NAME = "loom";

type Env = Readonly<Record<string, string | undefined>>;

function invalid(message: string): ConfigError {
  return new ConfigError(ConfigErrorCode.invalid, `invalid telemetry settings: ${message}`);
}

function variable(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function checkedUrl(value: string, source: string): string {
  if (!UrlSchema.safeParse(value).success) throw invalid(`${source} must be an http:// or https:// URL`);
  return value;
}

/** `key=value,key2=value2` with percent-encoded values (the OTLP exporter's header format). */
export function parseOtlpHeaders(text: string, source: string): Record<string, string> {
  const headers: Record<string, string> = {};
  text.split(",").forEach((entry, index) => {
    if (entry.trim() === "") return;
    const at = entry.indexOf("=");
    const key = at <= 0 ? "" : entry.slice(0, at).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) throw invalid(`${source}: entry ${index + 1} is not name=value with an HTTP header name`);
    try {
      headers[key] = decodeURIComponent(entry.slice(at + 1).trim());
    } catch {
      throw invalid(`${source}: the value of entry ${index + 1} (${key}) is not valid percent-encoding`);
    }
  });
  return headers;
}

function protocolOf(env: Env, file: TelemetryFileConfig): OtlpProtocol {
  const name = variable(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") === undefined ? "OTEL_EXPORTER_OTLP_PROTOCOL" : "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
  const value = variable(env, name);
  if (value === undefined) return file.protocol ?? OtlpProtocol.protobuf;
  if (value === "grpc") throw invalid(`${name}=grpc is not supported: use http/protobuf or http/json`);
  if (!PROTOCOLS.includes(value)) throw invalid(`${name} must be one of ${PROTOCOLS.join(", ")}`);
  return value as OtlpProtocol;
}

function samplerOf(env: Env, file: TelemetryFileConfig): { sampler: SamplerKind; samplerRatio: number } {
  const kind = variable(env, "OTEL_TRACES_SAMPLER")?.toLowerCase();
  if (kind !== undefined && !SAMPLERS.includes(kind)) throw invalid(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}`);
  const arg = variable(env, "OTEL_TRACES_SAMPLER_ARG");
  const ratio = arg === undefined ? (file.samplerArg ?? 1) : Number(arg);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw invalid("OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1");
  return { sampler: (kind as SamplerKind | undefined) ?? file.sampler ?? SamplerKind.parentBasedAlwaysOn, samplerRatio: ratio };
}

function tracesUrlOf(env: Env, file: TelemetryFileConfig): string | null {
  const traces = variable(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (traces !== undefined) return checkedUrl(traces, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (file.tracesEndpoint !== undefined) return file.tracesEndpoint;
  const base = variable(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  const endpoint = base === undefined ? file.endpoint : checkedUrl(base, "OTEL_EXPORTER_OTLP_ENDPOINT");
  return endpoint === undefined ? null : `${endpoint.replace(/\/+$/, "")}/v1/traces`;
}

/**
 * The trace export settings, or null when export is off. Throws ConfigError
 * (invalid_config) for a value it cannot use, naming the variable or key.
 */
export function resolveTelemetry(file: TelemetryFileConfig | null, env: Env): TelemetrySettings | null {
  const section = file ?? {};
  if (section.enabled === false) return null;
  if (variable(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return null;
  if (variable(env, "OTEL_TRACES_EXPORTER")?.toLowerCase() === "none") return null;
  const tracesUrl = tracesUrlOf(env, section);
  if (tracesUrl === null) return null;
  const headerName = variable(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS") === undefined ? "OTEL_EXPORTER_OTLP_HEADERS" : "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
  const headerText = variable(env, headerName);
  return {
    tracesUrl,
    protocol: protocolOf(env, section),
    headers: { ...section.headers, ...(headerText === undefined ? {} : parseOtlpHeaders(headerText, headerName)) },
    serviceName: variable(env, "OTEL_SERVICE_NAME") ?? section.serviceName ?? DEFAULT_SERVICE_NAME,
    ...samplerOf(env, section),
  };
}

/** The variable an agent CLI's OTLP exporter reads for each setting (docs/telemetry.md, "Agent CLIs"). */
export const AGENT_OTLP_VARIABLES = {
  endpoint: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  protocol: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
  headers: "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  exporter: "OTEL_TRACES_EXPORTER",
} as const;

/**
 * The OTLP exporter variables an agent CLI gets while Loom exports traces,
 * so its spans reach the same collector. Holds the headers: never log it.
 */
export function agentOtlpEnvironment(settings: TelemetrySettings): Record<string, string> {
  const headers = Object.entries(settings.headers).map(([key, value]) => `${key}=${encodeURIComponent(value)}`).join(",");
  return {
    [AGENT_OTLP_VARIABLES.endpoint]: settings.tracesUrl,
    [AGENT_OTLP_VARIABLES.protocol]: settings.protocol,
    OTEL_EXPORTER_OTLP_PROTOCOL: settings.protocol,
    [AGENT_OTLP_VARIABLES.exporter]: "otlp",
    ...(headers === "" ? {} : { [AGENT_OTLP_VARIABLES.headers]: headers }),
  };
}
