import { describe, expect, it } from "vitest";
import { ConfigError } from "./configError.js";
import { parseConfigText } from "./config.js";
import { agentOtlpEnvironment, resolveTelemetry } from "./telemetry.js";

/** Trace export settings: the standard variables over the config file's section, typed errors that never quote a header value. */

function refusal(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("telemetry settings", () => {
  it("are off without an endpoint, and off again when disabled", () => {
    expect(resolveTelemetry(null, {})).toBeNull();
    expect(resolveTelemetry({ serviceName: "x" }, {})).toBeNull();
    expect(resolveTelemetry({ endpoint: "http://127.0.0.1:4318", enabled: false }, {})).toBeNull();
    expect(resolveTelemetry(null, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" })).toBeNull();
    expect(resolveTelemetry(null, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" })).toBeNull();
  });

  it("take the defaults of the SDK specification", () => {
    expect(resolveTelemetry(null, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toEqual({
      tracesUrl: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      headers: {},
      serviceName: "loom",
      sampler: "parentbased_always_on",
      samplerRatio: 1,
    });
  });

  it("let each variable win over its config key", () => {
    const file = { endpoint: "http://file:4318", protocol: "http/protobuf" as const, headers: { a: "1", b: "2" }, serviceName: "file", sampler: "always_off" as const, samplerArg: 0.1 };
    expect(
      resolveTelemetry(file, {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://env/custom/traces",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_HEADERS: "b=two%20words,c=3",
        OTEL_SERVICE_NAME: "env",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
      }),
    ).toEqual({ tracesUrl: "https://env/custom/traces", protocol: "http/json", headers: { a: "1", b: "two words", c: "3" }, serviceName: "env", sampler: "parentbased_traceidratio", samplerRatio: 0.25 });
    expect(resolveTelemetry({ ...file, tracesEndpoint: "http://file/t" }, {})).toMatchObject({ tracesUrl: "http://file/t", protocol: "http/protobuf", sampler: "always_off", samplerRatio: 0.1 });
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use http/protobuf or http/json"],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "thrift" }, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be one of http/protobuf, http/json"],
    [{ OTEL_TRACES_SAMPLER: "sometimes" }, "OTEL_TRACES_SAMPLER must be one of"],
    [{ OTEL_TRACES_SAMPLER_ARG: "2" }, "OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1"],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "ftp://x" }, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:// or https:// URL"],
  ])("refuse %o with invalid_config", (env, message) => {
    const error = refusal(() => resolveTelemetry(null, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", ...env }));
    expect(error.code).toBe("invalid_config");
    expect(error.message).toContain(message);
  });

  it("name a bad header entry without quoting any value", () => {
    const error = refusal(() => resolveTelemetry(null, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20s3cr3t,s3cr3t-only" }));
    expect(error.message).toBe("invalid telemetry settings: OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not name=value with an HTTP header name");
    const encoding = refusal(() => resolveTelemetry(null, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_HEADERS: "key=%E0%A4%A" }));
    expect(encoding.message).toBe("invalid telemetry settings: OTEL_EXPORTER_OTLP_HEADERS: the value of entry 1 (key) is not valid percent-encoding");
  });

  it("check the config file's section with the rest of the file", () => {
    const error = refusal(() => parseConfigText(JSON.stringify({ telemetry: { endpoint: "collector:4318", protocol: "grpc" } }), "/x/config.json", "/x"));
    expect(error.message).toContain("telemetry.endpoint: must be an http:// or https:// URL");
    expect(error.message).toContain("telemetry.protocol: must be one of http/protobuf, http/json");
    expect(parseConfigText(JSON.stringify({ telemetry: { endpoint: "http://c:4318" } }), "/x/config.json", "/x").telemetry).toEqual({ endpoint: "http://c:4318" });
  });

  it("hand agents the exporter variables, headers encoded as the variable expects", () => {
    const settings = resolveTelemetry({ endpoint: "http://c:4318", headers: { authorization: "Bearer a,b" } }, {})!;
    expect(agentOtlpEnvironment(settings)).toEqual({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "authorization=Bearer%20a%2Cb",
    });
  });
});
