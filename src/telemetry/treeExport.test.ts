import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type BudgetHolder, holderSpend, taskHolder, treeThreads } from "../core/budgets/budgets.js";
import { OtlpProtocol } from "../config/telemetry.js";
import { Attr } from "../traces/spanAttributes.js";
import type { TraceSpan, TreeTrace } from "../traces/spanModel.js";
import { DELEGATION_PROVIDERS, delegateStep, launchParent, onlyTask, waitForResult } from "../testkit/delegationHarness.js";
import type { LoomHarness } from "../testkit/loomHarness.js";
import { LoomHarness as Harness, script } from "../testkit/loomHarness.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { OtlpReceiver, type ReceivedSpan } from "../testkit/otlpReceiver.js";
import { LOOM_VERSION } from "../version.js";
import { exportTrace } from "./traceFiles.js";

/**
 * Live trace export end to end: a real server whose scripted agents delegate
 * over real MCP, exporting to an OTLP/HTTP receiver on 127.0.0.1 in each
 * encoding. The receiver decodes what arrived; the spans are checked against
 * the span model the owner route serves, against the budget ledger, and
 * against an export of the same tree after a restart.
 */

const COST_PER_TOKEN = 0.001;
const PROVIDERS = DELEGATION_PROVIDERS.map((p) => ({ ...p, options: { ...p.options, costPerTokenUsd: COST_PER_TOKEN } }));

let receiver: OtlpReceiver;
let h: LoomHarness;

afterEach(async () => {
  await h.close();
  await receiver.close();
});

async function readTrace(harness: LoomHarness, threadId: string): Promise<TreeTrace> {
  const res = await fetch(`${harness.server.url}/api/traces/${encodeURIComponent(threadId)}`, { headers: { authorization: `Bearer ${harness.ownerToken}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as TreeTrace;
}

const KIND_NUMBER = { internal: 1, server: 2, client: 3 } as const;
const STATUS_NUMBER = { unset: 0, ok: 1, error: 2 } as const;

/** What a received span must match of its model span. */
function expectSame(received: ReceivedSpan | undefined, span: TraceSpan): void {
  expect(received, `span ${span.name} (${span.spanId}) was exported`).toBeDefined();
  expect(received).toMatchObject({
    traceId: span.traceId,
    parentSpanId: span.parentSpanId ?? "",
    name: span.name,
    kind: KIND_NUMBER[span.kind],
    startTimeUnixNano: BigInt(span.startTimeMs) * 1_000_000n,
    endTimeUnixNano: BigInt(span.endTimeMs!) * 1_000_000n,
    status: { code: STATUS_NUMBER[span.status.code] },
    attributes: span.attributes,
  });
  expect(received!.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId, kind: l.attributes[Attr.linkKind] }))).toEqual(span.links.map((l) => ({ traceId: l.traceId, spanId: l.spanId, kind: l.kind })));
}

function sumOf(spans: readonly TraceSpan[], key: string): number {
  return spans.reduce((sum, span) => sum + (typeof span.attributes[key] === "number" ? (span.attributes[key]) : 0), 0);
}

describe.each([OtlpProtocol.json, OtlpProtocol.protobuf])("live export over %s", (protocol) => {
  beforeEach(async () => {
    receiver = await OtlpReceiver.start();
    h = await Harness.start({ config: { providers: PROVIDERS, telemetry: { endpoint: receiver.url, protocol, headers: { authorization: "Bearer collector-secret" }, serviceName: "loom-test" } } });
  });

  it("sends one trace per tree: runs, attempts, tool calls and the delegation, with GenAI attributes, links both ways, and the ledger's spend", async () => {
    const parent = await launchParent(h, [{ run: "echo traced" }, delegateStep([{ say: "the child answers at some length" }], { mode: "wait", clientRequestId: "child" }), { say: "parent done" }]);
    await h.waitForEnd(parent.runId, 20_000);
    const task = await waitForResult(h, onlyTask(h, parent.threadId).taskId, 20_000);
    await h.waitForEnd(task.childRunId!, 20_000);
    const trace = await readTrace(h, parent.threadId);
    await h.server.traces.live!.flush();

    const received = receiver.byId();
    const ended = trace.spans.filter((span) => span.endTimeMs !== null);
    expect(new Set(ended.map((span) => span.source))).toEqual(new Set(["run", "attempt", "tool", "delegation", "wait"]));
    expect(ended).toHaveLength(trace.spans.length);
    for (const span of ended) expectSame(received.get(span.spanId), span);
    expect(new Set([...received.values()].map((span) => span.traceId))).toEqual(new Set([trace.traceId]));
    expect(receiver.requests.every((request) => request.encoding === (protocol === OtlpProtocol.json ? "json" : "protobuf"))).toBe(true);
    expect(receiver.requests[0]!.headers.authorization).toBe("Bearer collector-secret");
    expect([...received.values()][0]!.resource["service.name"]).toBe("loom-test");

    const byEntity = new Map(trace.spans.map((span) => [span.entityId, span]));
    const parentRun = byEntity.get(parent.runId)!;
    const delegation = byEntity.get(task.taskId)!;
    const childRun = byEntity.get(task.childRunId!)!;
    expect(parentRun).toMatchObject({ parentSpanId: null, name: "invoke_agent a", kind: "client", status: { code: "ok" } });
    expect(parentRun.attributes).toMatchObject({ [Attr.operationName]: "invoke_agent", [Attr.providerName]: "scripted", [Attr.requestModel]: "scripted-1", [Attr.threadId]: parent.threadId, [Attr.runId]: parent.runId });
    expect(delegation).toMatchObject({ parentSpanId: parentRun.spanId, name: "execute_tool delegate_task", links: [{ spanId: childRun.spanId, kind: "delegated_to" }] });
    expect(delegation.attributes).toMatchObject({ [Attr.toolName]: "delegate_task", [Attr.taskId]: task.taskId, [Attr.childThreadId]: task.childThreadId });
    expect(childRun).toMatchObject({ parentSpanId: delegation.spanId, name: "invoke_agent b", links: [{ spanId: delegation.spanId, kind: "delegated_from" }] });
    const shell = trace.spans.find((span) => span.name === "execute_tool shell")!;
    expect(shell).toMatchObject({ parentSpanId: parentRun.spanId, attributes: { [Attr.toolName]: "shell", [Attr.exitCode]: 0, [Attr.toolStatus]: "completed" } });
    const mcpCall = trace.spans.find((span) => span.attributes[Attr.toolName] === "delegate_task" && span.source === "tool")!;
    expect(mcpCall.parentSpanId).toBe(parentRun.spanId);
    // delegate_task in wait mode blocks the parent agent: a recorded wait under its run.
    expect(trace.spans.find((span) => span.source === "wait")).toMatchObject({ parentSpanId: parentRun.spanId, attributes: { [Attr.waitOutcome]: "completed" } });
    const attempt = trace.spans.find((span) => span.source === "attempt" && span.parentSpanId === childRun.spanId)!;
    expect(attempt.name).toBe("attempt 1");

    // Tokens and cost per subtree are the budget ledger's spend.
    const state = h.state;
    const now = new Date().toISOString();
    const agents = (threads: readonly string[]) => trace.spans.filter((span) => span.source === "run" && threads.includes(span.attributes[Attr.threadId] as string));
    const childSpend = holderSpend(state, taskHolder(state.tasks.get(task.taskId)!), now);
    const childAgents = agents(treeThreads(state, task.childThreadId));
    expect(sumOf(childAgents, Attr.inputTokens) + sumOf(childAgents, Attr.outputTokens)).toBe(childSpend.tokens);
    expect(sumOf(childAgents, Attr.costUsd)).toBeCloseTo(childSpend.costUsd, 10);
    const root: BudgetHolder = { kind: "thread", id: parent.threadId, label: "root", title: "root", budget: {}, exceeded: null, top: parent.threadId, since: now };
    const rootSpend = holderSpend(state, root, now);
    const allAgents = agents(treeThreads(state, parent.threadId));
    expect(sumOf(allAgents, Attr.inputTokens) + sumOf(allAgents, Attr.outputTokens)).toBe(rootSpend.tokens);
    expect(rootSpend.tokens).toBeGreaterThan(childSpend.tokens);
    expect(sumOf(allAgents, Attr.costUsd)).toBeCloseTo(rootSpend.costUsd, 10);
    expect(rootSpend.costUsd).toBeCloseTo(rootSpend.tokens * COST_PER_TOKEN, 10);

    // After a restart the same tree reads the same, and exporting it again sends what the live export sent.
    h = await h.restart();
    expect(await readTrace(h, parent.threadId)).toEqual(trace);
    const again = await OtlpReceiver.start();
    try {
      const sent = await exportTrace(await readTrace(h, task.childThreadId), again.url, LOOM_VERSION, { protocol, env: { OTEL_SERVICE_NAME: "loom-test" } });
      expect(sent).toBe(ended.length);
      const exported = again.byId();
      for (const span of ended) {
        const { encoding: _live, ...live } = received.get(span.spanId)!;
        const { encoding: _later, ...later } = exported.get(span.spanId)!;
        expect(later).toEqual(live);
      }
    } finally {
      await again.close();
    }
  }, 60_000);
});

describe("trace context in over MCP", () => {
  it("a t3_thread_launch call with a traceparent header puts the tree in the caller's trace, under its span", async () => {
    receiver = await OtlpReceiver.start();
    h = await Harness.start({ config: { providers: PROVIDERS, telemetry: { endpoint: receiver.url, protocol: OtlpProtocol.json } } });
    const caller = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" };
    const client = new Client({ name: "traced-caller", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(h.server.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${h.ownerToken}`, traceparent: `00-${caller.traceId}-${caller.spanId}-01` } } }));
    try {
      const result = await client.callTool({ name: "t3_thread_launch", arguments: { title: "traced", message: script({ say: "hi" }), target: { providerInstanceId: "a" } } });
      const { threadId, runId } = result.structuredContent as { threadId: string; runId: string };
      expect(h.state.runs.get(runId)!.traceParent).toBe(`00-${caller.traceId}-${caller.spanId}-01`);
      await h.waitForEnd(runId);
      await h.server.traces.live!.flush();
      const trace = await readTrace(h, threadId);
      expect(trace.traceId).toBe(caller.traceId);
      const run = receiver.byId().get(trace.spans.find((span) => span.entityId === runId)!.spanId);
      expect(run).toMatchObject({ traceId: caller.traceId, parentSpanId: caller.spanId, kind: KIND_NUMBER.server });
    } finally {
      await client.close();
    }
  });
});

describe("the export worker", () => {
  it("a worker that dies is reported and started again, and the spans that end afterwards are exported", async () => {
    receiver = await OtlpReceiver.start();
    const lines: string[] = [];
    h = await Harness.start({ config: { providers: PROVIDERS, telemetry: { endpoint: receiver.url, protocol: OtlpProtocol.protobuf } }, log: (line) => lines.push(line) });
    const live = h.server.traces.live!;
    const first = await launchParent(h, [{ say: "before" }]);
    await h.waitForEnd(first.runId);
    await live.flush();
    expect(receiver.byId().size).toBe(2);

    await live.exportWorker.killWorker();
    expect(live.stats().workerRestarts).toBe(1);
    expect(lines.some((line) => line.startsWith("telemetry: the export worker died"))).toBe(true);
    const second = await launchParent(h, [{ say: "after" }]);
    await h.waitForEnd(second.runId);
    await live.flush();
    const trace = await readTrace(h, second.threadId);
    const received = receiver.byId();
    for (const span of trace.spans) expectSame(received.get(span.spanId), span);
    expect(live.stats()).toMatchObject({ ended: 4, exported: 4 });
  });
});

describe("off by default", () => {
  it("opens no live exporter without an endpoint, and still reads the trace", async () => {
    receiver = await OtlpReceiver.start();
    h = await Harness.start({ config: { providers: PROVIDERS } });
    expect(h.server.traces.live).toBeNull();
    const parent = await launchParent(h, [{ say: "untraced" }]);
    await h.waitForEnd(parent.runId);
    const trace = await readTrace(h, parent.threadId);
    expect(trace.spans.map((span) => span.name)).toEqual(["invoke_agent a", "attempt 1"]);
    expect(h.server.traces.traceEnvironment(parent.runId)).toEqual({ TRACEPARENT: `00-${trace.traceId}-${trace.spans[0]!.spanId}-01` });
  });
});
