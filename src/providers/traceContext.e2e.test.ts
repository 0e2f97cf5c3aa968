import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../modelServer/server.js";
import { LoomHarness } from "../testkit/loomHarness.js";
import { OtlpReceiver } from "../testkit/otlpReceiver.js";
import { processEnvironmentsWith } from "../testkit/processEnv.js";
import type { TraceSpan, TreeTrace } from "../traces/spanModel.js";

/**
 * Trace context out (docs/telemetry.md): the real Claude Code and the real
 * codex, under a Loom that exports traces to an OTLP receiver on 127.0.0.1,
 * against the scripted model server. The model runs a shell command that
 * prints the agent's TRACEPARENT and OTLP endpoint; the command's output item
 * in Loom's own state shows what the agent process was given, and the
 * receiver shows the spans the agent itself exported in Loom's trace.
 */

const TURN_MS = 90_000;
const PRINT = 'echo "tp=$TRACEPARENT ep=$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"';

let model: ModelServer;
let receiver: OtlpReceiver;
let harness: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  receiver = await OtlpReceiver.start();
  harness = await LoomHarness.start({
    config: {
      providers: [
        { id: "claude", driver: "claude", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } },
        {
          id: "codex",
          driver: "codex",
          models: ["loom-test-model"],
          options: { modelProvider: { id: "loomtest", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } },
        },
      ],
      telemetry: { endpoint: receiver.url, headers: { "x-collector-key": "secret-value" } },
    },
  });
});

afterEach(async () => {
  await harness.close();
  await receiver.close();
  await model.close();
});

async function readTrace(threadId: string): Promise<TreeTrace> {
  const res = await fetch(`${harness.server.url}/api/traces/${encodeURIComponent(threadId)}`, { headers: { authorization: `Bearer ${harness.ownerToken}` } });
  return (await res.json()) as TreeTrace;
}

/** Run the print command in the agent's shell; answer what it printed and the run's trace. */
async function printedBy(providerInstanceId: string, shellTool: { tool: string; arguments: Record<string, unknown> }) {
  model.setRules([
    { when: { lastIsToolResult: false }, reply: { toolCall: shellTool }, times: 1 },
    { when: { lastIsToolResult: true }, reply: { text: "printed" } },
  ]);
  const launched = await harness.launch({ message: "Print your trace context.", title: `${providerInstanceId} trace`, target: { providerInstanceId } });
  const run = await harness.waitForEnd(launched.runId!, TURN_MS);
  const items = harness.items(launched.threadId).filter((item) => item.runId === launched.runId);
  expect(run.status, JSON.stringify({ run, items }, null, 2)).toBe("completed");
  const command = items.find((item) => item.type === "command_execution");
  if (command?.type !== "command_execution") throw new Error(`no command item: ${JSON.stringify(items)}`);
  const trace = await readTrace(launched.threadId);
  const runSpan = trace.spans.find((span) => span.entityId === launched.runId)!;
  return { output: command.outputPreview, runSpan };
}

/** Spans the agent exported itself (its own service name) in the run's trace, directly under Loom's run span. */
async function agentSpanUnder(runSpan: TraceSpan, service: string) {
  const span = await receiver.waitFor((received) => received.resource["service.name"] === service && received.parentSpanId === runSpan.spanId, 60_000);
  expect(span.traceId).toBe(runSpan.traceId);
  return span;
}

describe("agent CLIs get the run's trace context", () => {
  it(
    "Claude Code: TRACEPARENT is the run's span; its own spans nest under it, sent with Loom's exporter settings",
    async () => {
      const { output, runSpan } = await printedBy("claude", { tool: "Bash", arguments: { command: PRINT, description: "print" } });
      const traceParent = `00-${runSpan.traceId}-${runSpan.spanId}-01`;
      // Claude Code hands its shell the trace context but not its OTEL_* variables.
      expect(output).toContain(`tp=${traceParent} `);
      const [env] = processEnvironmentsWith(`TRACEPARENT=${traceParent}`).filter((e) => e.CLAUDE_CONFIG_DIR !== undefined);
      expect(env).toMatchObject({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf",
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-collector-key=secret-value",
        OTEL_TRACES_EXPORTER: "otlp",
        CLAUDE_CODE_ENABLE_TELEMETRY: "1",
        CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: "1",
      });
      const interaction = await agentSpanUnder(runSpan, "claude-code");
      expect(interaction.name).toBe("claude_code.interaction");
      expect(receiver.requests.filter((request) => request.headers["x-collector-key"] === "secret-value").length).toBe(receiver.requests.length);
    },
    TURN_MS + 60_000,
  );

  it(
    "codex: TRACEPARENT is the run's span and the OTLP endpoint reaches its shell; its own spans nest under the run's",
    async () => {
      const { output, runSpan } = await printedBy("codex", { tool: "exec_command", arguments: { cmd: PRINT } });
      expect(output).toContain(`tp=00-${runSpan.traceId}-${runSpan.spanId}-01 ep=${receiver.url}/v1/traces`);
      await agentSpanUnder(runSpan, "codex-app-server");
      expect(receiver.requests.filter((request) => request.headers["x-collector-key"] === "secret-value").length).toBe(receiver.requests.length);
    },
    TURN_MS + 60_000,
  );
});
