import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import { EXTENSION_FILE } from "./extensionFile.js";

/**
 * The real Pi 0.73.1 (`pi --mode rpc`, pure JS) under Loom, against the
 * scripted model server (Chat Completions, provider "loom" in a models.json
 * of the session's own). Loom's extension, written into the state dir's
 * cache, registers Loom's MCP tools as `mcp__t3-code__*` and routes
 * approvals through Pi's RPC dialogs. Pass or fail is read from Loom's
 * state, never from an exit code.
 */

const TURN_MS = 90_000;
const MODEL = "loom/scripted";
/** Longer than the 60-second request timeout of Pi's native MCP, which Loom's bridge avoids (spec 000, "Pi V2"). */
const LONG_WAIT_MS = 65_000;

let model: ModelServer;
let harness: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  harness = await LoomHarness.start({
    config: {
      providers: [
        { id: "pi", driver: "pi", models: [MODEL], options: { modelProvider: { id: "loom", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } } },
        { id: "scripted", driver: "scripted" },
      ],
      // Above the default 30 s cap, so one wait can outlast the 60 s a native MCP client of Pi's would allow.
      waits: { maxWaitMs: LONG_WAIT_MS * 2 },
    },
  });
});

afterEach(async () => {
  await harness.close();
  await model.close();
});

function itemsOfRun(threadId: string, runId: string): TurnItem[] {
  return harness.items(threadId).filter((item) => item.runId === runId);
}

function dump(threadId: string): string {
  return JSON.stringify({ runs: harness.runs(threadId), items: harness.items(threadId), requests: model.requests.map((r) => [r.api, r.ruleIndex, r.reply]) }, null, 2);
}

function extension(): string {
  return readFileSync(join(harness.server.stateDir.root, "cache", "pi", EXTENSION_FILE), "utf8");
}

describe("pi driver end to end", () => {
  it(
    "a pi parent delegates to a scripted child with delegate_task (wait) through Loom's extension and quotes the answer",
    async () => {
      const task = script({ say: "42" });
      model.setRules([
        { when: { toolAvailable: "delegate_task", lastIsToolResult: false, lastUserIncludes: "Delegate" }, reply: { toolCall: { tool: "delegate_task", arguments: { task, target: { providerInstanceId: "scripted" }, mode: "wait", clientRequestId: "pi-1" } } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "The child answered: {{lastToolResult}}" } },
      ]);
      const launched = await harness.launch({ message: "Delegate the question and report the answer.", title: "pi parent", target: { providerInstanceId: "pi" } });
      const run = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(run.status, dump(launched.threadId)).toBe("completed");

      const tasks = [...harness.state.tasks.values()].filter((t: DelegatedTask) => t.parentThreadId === launched.threadId);
      expect(tasks, dump(launched.threadId) + JSON.stringify(model.requests.map((r) => r.normalized?.tools))).toHaveLength(1);
      const child = tasks[0]!;
      expect(child).toMatchObject({ status: "completed", providerInstanceId: "scripted", mode: "wait", clientRequestId: "pi-1", parentRunId: launched.runId, summary: "42" });
      const call = itemsOfRun(launched.threadId, launched.runId!).find((item) => item.type === "dynamic_tool");
      expect(call, dump(launched.threadId)).toMatchObject({ type: "dynamic_tool", toolName: "mcp__t3-code__delegate_task", status: "completed" });
      const final = harness.assistantTexts(launched.threadId, launched.runId!).at(-1) ?? "";
      expect(final).toMatch(/^The child answered: /);
      expect(final).toContain(child.childThreadId);

      // Pi saw Loom's tools under mcp__t3-code__ and Loom's instructions in the first turn.
      const first = model.requests.find((request) => request.ruleIndex === 0)!;
      expect(first.normalized?.tools).toContain("mcp__t3-code__delegate_task");
      // The hidden mcp__t3_code__ aliases are registered but never offered to the model.
      expect(model.requests.flatMap((request) => request.normalized?.tools ?? []).filter((name) => name.startsWith("mcp__t3_code__"))).toEqual([]);
      expect(extension()).toContain("mcp__t3_code__");
      expect(JSON.stringify(first.body)).toContain("delegate_task runs a task");
      // The extension lives in the state dir's cache and holds no secret.
      expect(extension()).toContain("mcp__t3-code__");
      expect(extension()).not.toMatch(/Bearer [A-Za-z0-9_-]{20,}/);
    },
    TURN_MS + 30_000,
  );

  it(
    "pi as the delegated child: a scripted parent delegates to it and gets its answer",
    async () => {
      model.setRules([{ when: { lastUserIncludes: "6 times 7" }, reply: { text: "42" } }]);
      const parentScript = script(
        { call: "delegate_task", args: { task: "What is 6 times 7? Answer with the number only.", target: { providerInstanceId: "pi" }, mode: "wait", timeoutMs: 25_000, clientRequestId: "to-pi" }, as: "task" },
        { say: "child: {{task.summary}}" },
      );
      const launched = await harness.launch({ message: parentScript, title: "scripted parent", target: { providerInstanceId: "scripted" } });
      await harness.waitForEnd(launched.runId!, TURN_MS);
      const task = [...harness.state.tasks.values()].find((t: DelegatedTask) => t.parentThreadId === launched.threadId)!;
      const done = await harness.until(() => (harness.state.tasks.get(task.taskId)?.status === "completed" ? harness.state.tasks.get(task.taskId) : undefined), "the pi child to finish", TURN_MS);
      expect(done).toMatchObject({ providerInstanceId: "pi", summary: "42" });
      expect(harness.runs(task.childThreadId).map((r) => [r.kind, r.status])).toEqual([["delegated_task", "completed"]]);
      expect(harness.assistantTexts(task.childThreadId)).toEqual(["42"]);
      expect(harness.assistantTexts(launched.threadId, launched.runId!).at(-1)).toBe("child: 42");
    },
    TURN_MS + 30_000,
  );

  it(
    "approval-required: Pi's bash call waits for an approval routed through Loom; declined, it does not run",
    async () => {
      model.setRules([
        { when: { lastIsToolResult: false }, reply: { toolCall: { tool: "bash", arguments: { command: "echo hi > hi.txt" } } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "tool said: {{lastToolResult}}" } },
      ]);
      const launched = await harness.launch({ message: "Write hi.", title: "pi approval", target: { providerInstanceId: "pi" }, runtimeMode: "approval-required" });
      const runId = launched.runId!;
      await harness.waitForRun(runId, "waiting_on_approval", TURN_MS);
      const request = harness.items(launched.threadId).find((item) => item.type === "approval_request" && item.runId === runId);
      if (request?.type !== "approval_request") throw new Error("no approval request");
      expect(request).toMatchObject({ requestKind: "command", title: "Run echo hi > hi.txt", status: "pending" });

      const answer = await harness.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { decision: "decline" } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const run = await harness.waitForEnd(runId, TURN_MS);
      expect(run.status, dump(launched.threadId)).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, runId).at(-1)).toContain("Declined through Loom");
      expect(() => readFileSync(join(harness.dir, "hi.txt"))).toThrow();
    },
    TURN_MS + 30_000,
  );

  it(
    "a Loom tool call longer than 60 seconds completes inside Pi: the bridge sets no tool timeout",
    async () => {
      const busy = await harness.createThread({ title: "busy", prompt: script({ sleep: LONG_WAIT_MS * 3 }), target: { providerInstanceId: "scripted" } });
      await harness.waitForRun(busy.runId!, "running");
      model.setRules([
        { when: { lastIsToolResult: false, lastUserIncludes: "Wait long" }, reply: { toolCall: { tool: "t3_thread_wait", arguments: { threadId: busy.threadId, timeoutMs: LONG_WAIT_MS } } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "waited: {{lastToolResult}}" } },
      ]);
      const started = Date.now();
      const launched = await harness.launch({ message: "Wait long for the busy thread.", title: "pi long wait", target: { providerInstanceId: "pi" } });
      const run = await harness.waitForEnd(launched.runId!, LONG_WAIT_MS + TURN_MS);
      expect(run.status, dump(launched.threadId)).toBe("completed");
      // The wait ran its full length (Loom's own timeout), not cut off by a tool timeout in Pi or the bridge.
      expect(Date.now() - started, JSON.stringify(itemsOfRun(launched.threadId, launched.runId!))).toBeGreaterThanOrEqual(LONG_WAIT_MS);
      const call = itemsOfRun(launched.threadId, launched.runId!).find((item) => item.type === "dynamic_tool");
      expect(call, dump(launched.threadId)).toMatchObject({ type: "dynamic_tool", toolName: "mcp__t3-code__t3_thread_wait", status: "completed" });
      expect(harness.assistantTexts(launched.threadId, launched.runId!).at(-1)).toMatch(/^waited: .*"waitTimedOut":\s*true/s);
      expect(harness.run(busy.runId!).status).toBe("running");
    },
    LONG_WAIT_MS + TURN_MS * 2,
  );

  it(
    "a message steered into a running Pi turn reaches the model in the same run",
    async () => {
      const busy = await harness.createThread({ title: "busy", prompt: script({ sleep: 120_000 }), target: { providerInstanceId: "scripted" } });
      await harness.waitForRun(busy.runId!, "running");
      model.setRules([
        { when: { lastIsToolResult: false, lastUserIncludes: "Wait" }, reply: { toolCall: { tool: "t3_thread_wait", arguments: { threadId: busy.threadId, timeoutMs: 4_000 } } }, times: 1 },
        { when: { lastUserIncludes: "also say bye" }, reply: { text: "noted: {{lastUser}}" } },
      ]);
      const launched = await harness.launch({ message: "Wait a little.", title: "pi steer", target: { providerInstanceId: "pi" } });
      await harness.until(() => model.requests.some((request) => request.reply?.type === "toolCall"), "the model to call t3_thread_wait", TURN_MS);
      await harness.waitForRun(launched.runId!, "running", TURN_MS);
      const sent = await harness.owner.ok<{ delivery: string; runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "also say bye", mode: "steer" });
      expect(sent).toMatchObject({ delivery: "steered", runId: launched.runId });
      const run = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(run.status, dump(launched.threadId)).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, launched.runId!).at(-1)).toBe("noted: also say bye");
      expect(harness.runs(launched.threadId)).toHaveLength(1);
    },
    TURN_MS + 30_000,
  );
});
