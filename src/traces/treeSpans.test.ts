import { describe, expect, it } from "vitest";
import type { Command } from "../contracts/commands.js";
import type { DomainEvent } from "../contracts/events.js";
import type { OrchestrationState } from "../core/state.js";
import { evolve, initialState } from "../core/state.js";
import { cmd } from "../core/testing/fixtures.js";
import { ROOT, ROOT_RUN, asks, delegate, fold, pendingRequestId, rootWithRun, setupContext, steps, turnEnds } from "../core/testing/delegationFixtures.js";
import { Attr } from "./spanAttributes.js";
import { spanIdOf, traceIdOfRoot } from "./spanIds.js";
import type { TraceSpan } from "./spanModel.js";
import { treeTrace, spansEndedBy } from "./treeSpans.js";
import { traceParentOfRun } from "./treeContext.js";

/**
 * The span model, given/when/then on folded decider histories: no I/O, no
 * SDK. What a live exporter sends event by event must be exactly the ended
 * spans a later read of the same log builds.
 */

const CHILD = "thread:t1";
const CHILD_RUN = "run:t1";
const TASK = "subagent:t1";
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

function source(state: OrchestrationState) {
  return { state, toolItems: (threadId: string) => state.turnItems.get(threadId) ?? [] };
}

function byEntity(spans: readonly TraceSpan[]): Map<string, TraceSpan> {
  return new Map(spans.map((span) => [span.entityId, span]));
}

const commandRan = cmd("provider-runtime.item-completed", {
  threadId: CHILD,
  runId: CHILD_RUN,
  driver: "scripted",
  nativeItemId: "cmd-1",
  item: { kind: "command_execution", command: "npm test", cwd: "/repo", exitCode: 1, outputPreview: "1 failed", outputTruncated: false, durationMs: 1500 },
});

const mcpCall = cmd("provider-runtime.item-completed", {
  threadId: ROOT,
  runId: ROOT_RUN,
  driver: "scripted",
  nativeItemId: "tool-1",
  item: { kind: "dynamic_tool", toolName: "mcp__t3-code__t3_thread_list", arguments: {}, result: {}, status: "completed" },
});

/** A root whose run delegates t1; the child runs a failing command, asks a question that is answered, and fails; the root waits on it. */
function delegationHistory(): DomainEvent[] {
  const ctx = setupContext();
  const start = steps(rootWithRun("plain"), [delegate("t1"), commandRan, mcpCall, asks(CHILD, CHILD_RUN, "native-q", "Which branch?")], ctx);
  const requestId = pendingRequestId(start, CHILD);
  return steps(
    start,
    [
      cmd("runtime-request.respond", { threadId: CHILD, requestId, response: { answers: { q1: ["main"] } } }),
      turnEnds(CHILD, CHILD_RUN, "failed", "the tests failed"),
      cmd("thread-wait.started", { threadId: ROOT, runId: ROOT_RUN, nodeId: "node:wait-1", label: "t3_thread_wait", waitingOn: CHILD }),
      cmd("thread-wait.ended", { threadId: ROOT, nodeId: "node:wait-1" }),
      turnEnds(ROOT, ROOT_RUN),
    ] as Command[],
    ctx,
  );
}

describe("the span model of a tree", () => {
  it("puts the child's runs under the delegation under the parent's run, with links both ways", () => {
    const state = fold(delegationHistory());
    const trace = treeTrace(source(state), CHILD);
    expect(trace).toMatchObject({ traceId: traceIdOfRoot(ROOT), rootThreadId: ROOT });
    const spans = byEntity(trace.spans);
    const root = spans.get(ROOT_RUN)!;
    const delegation = spans.get(TASK)!;
    const child = spans.get(CHILD_RUN)!;
    expect(root).toMatchObject({ spanId: spanIdOf(ROOT_RUN), parentSpanId: null, kind: "client", source: "run", name: "invoke_agent plain" });
    expect(delegation).toMatchObject({ parentSpanId: root.spanId, kind: "internal", name: "execute_tool delegate_task", links: [{ traceId: trace.traceId, spanId: child.spanId, kind: "delegated_to" }] });
    expect(child).toMatchObject({ parentSpanId: delegation.spanId, links: [{ traceId: trace.traceId, spanId: delegation.spanId, kind: "delegated_from" }] });
    expect(new Set(trace.spans.map((span) => span.traceId))).toEqual(new Set([trace.traceId]));
    expect(treeTrace(source(fold(delegationHistory())), ROOT)).toEqual(trace);
  });

  it("gives runs the GenAI attributes and failures an error status with their code", () => {
    const state = fold(delegationHistory());
    const child = byEntity(treeTrace(source(state), ROOT).spans).get(CHILD_RUN)!;
    expect(child.status).toEqual({ code: "error", message: `${state.runs.get(CHILD_RUN)!.failure!.code}: the tests failed` });
    expect(child.attributes).toMatchObject({
      [Attr.operationName]: "invoke_agent",
      [Attr.providerName]: "scripted",
      [Attr.requestModel]: "m1",
      [Attr.threadId]: CHILD,
      [Attr.runId]: CHILD_RUN,
      [Attr.rootThreadId]: ROOT,
      [Attr.runStatus]: "failed",
      [Attr.errorType]: state.runs.get(CHILD_RUN)!.failure!.code,
    });
  });

  it("makes tool call items execute_tool spans: a command spans its reported duration, an MCP tool is an extension", () => {
    const spans = treeTrace(source(fold(delegationHistory())), ROOT).spans;
    const shell = spans.find((span) => span.name === "execute_tool shell")!;
    expect(shell).toMatchObject({ parentSpanId: spanIdOf(CHILD_RUN), status: { code: "error" }, attributes: { [Attr.toolName]: "shell", [Attr.exitCode]: 1, [Attr.toolStatus]: "failed" } });
    expect(shell.endTimeMs! - shell.startTimeMs).toBe(1500);
    const tool = spans.find((span) => span.attributes[Attr.toolName] === "mcp__t3-code__t3_thread_list")!;
    expect(tool).toMatchObject({ parentSpanId: spanIdOf(ROOT_RUN), attributes: { [Attr.toolType]: "extension", [Attr.operationName]: "execute_tool" } });
  });

  it("records questions and waits with their outcome", () => {
    const spans = treeTrace(source(fold(delegationHistory())), ROOT).spans;
    const question = spans.find((span) => span.source === "question")!;
    expect(question).toMatchObject({ name: "question", parentSpanId: spanIdOf(CHILD_RUN), attributes: { [Attr.requestOutcome]: "answered", [Attr.requestStatus]: "resolved" } });
    expect(question.endTimeMs).not.toBeNull();
    const wait = spans.find((span) => span.source === "wait")!;
    expect(wait).toMatchObject({ name: `wait t3_thread_wait ${CHILD}`, parentSpanId: spanIdOf(ROOT_RUN), attributes: { [Attr.waitOutcome]: "completed" } });
  });

  it("sends live, event by event, exactly the ended spans a later read builds", () => {
    const history = delegationHistory();
    const state = initialState();
    const live = new Map<string, TraceSpan>();
    for (const event of history) {
      evolve(state, event);
      for (const span of spansEndedBy(state, event)) if (!live.has(span.spanId)) live.set(span.spanId, span);
    }
    const later = treeTrace(source(state), ROOT).spans.filter((span) => span.endTimeMs !== null);
    expect(later.length).toBeGreaterThan(5);
    expect(new Map(later.map((span) => [span.spanId, span]))).toEqual(live);
  });
});

describe("forks", () => {
  it("puts a fork's runs in its source's tree, at the top", () => {
    const ctx = setupContext();
    const history = steps(
      rootWithRun("plain"),
      [
        turnEnds(ROOT, ROOT_RUN),
        cmd("thread.fork", { sourceThreadId: ROOT, sourceRunOrdinal: 1, threadId: "thread:fork", providerInstanceId: "plain", model: "m1", runtimeMode: "full-access", interactionMode: "default" }),
        cmd("message.dispatch", { threadId: "thread:fork", text: "go on", messageId: "message:fork", runId: "run:fork" }),
        turnEnds("thread:fork", "run:fork"),
      ] as Command[],
      ctx,
    );
    const state = fold(history);
    const spans = byEntity(treeTrace(source(state), ROOT).spans);
    expect(spans.get("run:fork")).toMatchObject({ traceId: traceIdOfRoot(ROOT), parentSpanId: null });
  });
});

describe("trace context in", () => {
  const newRoot = (traceParent: string) => [
    cmd("thread.create", { threadId: "thread:called", projectId: "project:9", title: "called", modelSelection: { providerInstanceId: "plain", model: null } }),
    { ...cmd("message.dispatch", { threadId: "thread:called", text: "go", messageId: "message:called", runId: "run:called" }), traceParent },
  ] as Command[];

  it("a root started by a traced call joins the caller's trace under the caller's span", () => {
    const state = fold(steps([], newRoot(`00-${CALLER_TRACE}-${CALLER_SPAN}-01`), setupContext()));
    expect(state.runs.get("run:called")!.traceParent).toBe(`00-${CALLER_TRACE}-${CALLER_SPAN}-01`);
    const trace = treeTrace(source(state), "thread:called");
    expect(trace.traceId).toBe(CALLER_TRACE);
    expect(byEntity(trace.spans).get("run:called")).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN, remoteParent: true, kind: "server" });
    expect(traceParentOfRun(state, "run:called", true)).toBe(`00-${CALLER_TRACE}-${spanIdOf("run:called")}-01`);
  });

  it("a delegation called from inside the tree's trace hangs under the caller's span; one from another trace links to it", () => {
    const tree = traceIdOfRoot(ROOT);
    const inside = `00-${tree}-${CALLER_SPAN}-01`;
    const outside = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
    const state = fold(steps(rootWithRun("plain"), [{ ...delegate("t1"), traceParent: inside }, { ...delegate("t2"), traceParent: outside }], setupContext()));
    const spans = byEntity(treeTrace(source(state), ROOT).spans);
    expect(spans.get("subagent:t1")).toMatchObject({ traceId: tree, parentSpanId: CALLER_SPAN, remoteParent: true, kind: "server" });
    expect(spans.get("subagent:t2")).toMatchObject({ traceId: tree, parentSpanId: spanIdOf(ROOT_RUN), remoteParent: false, kind: "internal" });
    expect(spans.get("subagent:t2")!.links).toContainEqual({ traceId: CALLER_TRACE, spanId: CALLER_SPAN, kind: "caller" });
  });
});
