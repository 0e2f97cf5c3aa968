import { readFileSync, readdirSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ThreadReadOutput } from "../../contracts/tools/threadTools.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import type { NormalizedProviderEvent } from "../events.js";
import { LoomHarness } from "../../testkit/loomHarness.js";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { pollUntil } from "../../testkit/poll.js";
import { createClaudeDriver } from "./driver.js";

/**
 * The real Claude Code (bundled with the Agent SDK) under Loom, against the
 * scripted model server: Loom injects its MCP endpoint, the model calls
 * t3_thread_list through it, and Loom's own state shows the call and the
 * reply. Success is read from Loom's state, never from an exit code.
 */

const TURN_MS = 90_000;

let model: ModelServer;
let harness: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  harness = await LoomHarness.start({
    config: { providers: [{ id: "claude", driver: "claude", options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } }] },
  });
});

afterEach(async () => {
  await harness.close();
  await model.close();
});

function itemsOfRun(threadId: string, runId: string): TurnItem[] {
  return harness.items(threadId).filter((item) => item.runId === runId);
}

describe("claude driver end to end", () => {
  it(
    "the model calls t3_thread_list through the injected MCP server and quotes it",
    async () => {
      model.setRules([
        { when: { toolAvailable: "t3_thread_list", lastIsToolResult: false }, reply: { toolCall: { tool: "t3_thread_list", arguments: {} } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "threads: {{lastToolResult}}" } },
      ]);
      const launched = await harness.launch({ message: "List the threads.", title: "claude e2e", target: { providerInstanceId: "claude" } });
      expect(launched.runId).not.toBeNull();
      const run = await harness.waitForEnd(launched.runId!, TURN_MS);
      const items = itemsOfRun(launched.threadId, launched.runId!);
      expect(run.status, JSON.stringify({ run, items }, null, 2)).toBe("completed");

      const tool = items.find((item) => item.type === "dynamic_tool");
      expect(tool).toMatchObject({ type: "dynamic_tool", toolName: "mcp__t3-code__t3_thread_list", status: "completed" });
      const texts = harness.assistantTexts(launched.threadId, launched.runId!);
      expect(texts.at(-1)).toMatch(/^threads: /);
      // The quoted tool result is Loom's thread list, which holds this very thread.
      expect(texts.at(-1)).toContain(launched.threadId);

      // The model server saw the Loom tool offered under its MCP name.
      const offered = model.requests.flatMap((request) => request.normalized?.tools ?? []);
      expect(offered).toContain("mcp__t3-code__t3_thread_list");
    },
    TURN_MS + 30_000,
  );

  it(
    "approval-required: a Bash call waits for approval, the owner accepts over HTTP, the command runs",
    async () => {
      model.setRules([
        { when: { lastIsToolResult: false }, reply: { toolCall: { tool: "Bash", arguments: { command: "echo hi", description: "say hi" } } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "the command said: {{lastToolResult}}" } },
      ]);
      const launched = await harness.launch({
        message: "Say hi in the shell.",
        title: "claude approval",
        target: { providerInstanceId: "claude" },
        runtimeMode: "approval-required",
      });
      const runId = launched.runId!;
      await harness.waitForRun(runId, "waiting_on_approval", TURN_MS);
      const request = harness.items(launched.threadId).find((item) => item.type === "approval_request" && item.runId === runId);
      expect(request).toMatchObject({ type: "approval_request", requestKind: "command", status: "pending" });
      if (request?.type !== "approval_request") throw new Error("no approval request");
      expect(request.title).toContain("echo hi");

      const answer = await harness.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { decision: "accept" } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);

      const run = await harness.waitForEnd(runId, TURN_MS);
      const items = itemsOfRun(launched.threadId, runId);
      expect(run.status, JSON.stringify({ run, items }, null, 2)).toBe("completed");
      const command = items.find((item) => item.type === "command_execution");
      expect(command).toMatchObject({ type: "command_execution", command: "echo hi", status: "completed", outputPreview: "hi" });
      // Claude Code appends a <system-reminder> to tool results; the template quotes it too.
      expect(harness.assistantTexts(launched.threadId, runId).at(-1)).toMatch(/^the command said: hi\b/);
    },
    TURN_MS + 30_000,
  );

  it(
    "AskUserQuestion waits on user input; the answer given through Loom reaches the model",
    async () => {
      const question = { question: "Which color?", header: "Color", options: [{ label: "red", description: "warm" }, { label: "blue", description: "cool" }], multiSelect: false };
      model.setRules([
        { when: { lastIsToolResult: false }, reply: { toolCall: { tool: "AskUserQuestion", arguments: { questions: [question] } } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "answer: {{lastToolResult}}" } },
      ]);
      const launched = await harness.launch({ message: "Ask me.", title: "claude question", target: { providerInstanceId: "claude" }, runtimeMode: "approval-required" });
      const runId = launched.runId!;
      await harness.waitForRun(runId, "waiting_on_user_input", TURN_MS);
      const request = harness.items(launched.threadId).find((item) => item.type === "user_input_request" && item.runId === runId);
      if (request?.type !== "user_input_request") throw new Error("no user input request");
      expect(request.questions.map((q) => q.question)).toEqual(["Which color?\nOptions: red (warm); blue (cool)"]);
      const answer = await harness.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { answers: { q1: ["blue"] } } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const run = await harness.waitForEnd(runId, TURN_MS);
      expect(run.status).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, runId).at(-1)).toContain('"Which color?"="blue"');
    },
    TURN_MS + 30_000,
  );

  it(
    "an interrupt through Loom stops a running command and ends the run interrupted",
    async () => {
      model.setRules([{ when: { lastIsToolResult: false }, reply: { toolCall: { tool: "Bash", arguments: { command: "sleep 30", description: "wait" } } }, times: 1 }]);
      const launched = await harness.launch({ message: "Wait.", title: "claude interrupt", target: { providerInstanceId: "claude" } });
      const runId = launched.runId!;
      await harness.until(() => model.requests.some((request) => request.reply?.type === "toolCall"), "the model to call Bash", TURN_MS);
      await harness.waitForRun(runId, "running", TURN_MS);
      const interrupted = await harness.dispatch("run.interrupt", { threadId: launched.threadId, runId });
      expect(interrupted.status, JSON.stringify(interrupted.body)).toBe(200);
      const run = await harness.waitForEnd(runId, 30_000);
      expect(run).toMatchObject({ status: "interrupted", endReason: "interrupted_by_user" });
    },
    TURN_MS + 30_000,
  );

  it(
    "a steer through Loom is folded into the running turn: one run, and the model saw the message",
    async () => {
      model.setRules([
        { when: { lastIsToolResult: false }, reply: { toolCall: { tool: "Bash", arguments: { command: "sleep 3", description: "nap" } } }, times: 1 },
        { when: { lastIsToolResult: true, anyMessageIncludes: "also say bye" }, reply: { text: "saw the steer" } },
        { when: { lastIsToolResult: true }, reply: { text: "no steer" } },
      ]);
      const launched = await harness.launch({ message: "Nap.", title: "claude steer", target: { providerInstanceId: "claude" } });
      const runId = launched.runId!;
      await harness.until(() => model.requests.some((request) => request.reply?.type === "toolCall"), "the model to call Bash", TURN_MS);
      await harness.waitForRun(runId, "running", TURN_MS);
      const sent = await harness.owner.ok<{ delivery: string; runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "also say bye", mode: "steer" });
      expect(sent).toMatchObject({ delivery: "steered", runId });
      const run = await harness.waitForEnd(runId, TURN_MS);
      expect(run.status).toBe("completed");
      expect(harness.runs(launched.threadId)).toHaveLength(1);
      expect(harness.assistantTexts(launched.threadId, runId).at(-1)).toBe("saw the steer");
    },
    TURN_MS + 30_000,
  );

  it(
    "plan interaction mode: ExitPlanMode asks to approve the plan, which the owner accepts",
    async () => {
      model.setRules([
        { when: { lastIsToolResult: false }, reply: { toolCall: { tool: "ExitPlanMode", arguments: { plan: "1. read the code\n2. fix the bug" } } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "plan approved" } },
      ]);
      const launched = await harness.launch({ message: "Plan it.", title: "claude plan", target: { providerInstanceId: "claude" }, interactionMode: "plan" });
      const runId = launched.runId!;
      await harness.waitForRun(runId, "waiting_on_approval", TURN_MS);
      const request = harness.items(launched.threadId).find((item) => item.type === "approval_request" && item.runId === runId);
      if (request?.type !== "approval_request") throw new Error("no approval request");
      expect(request).toMatchObject({ requestKind: "permission", title: "Approve the plan and leave plan mode" });
      expect(request.detail).toContain("1. read the code");
      await harness.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { decision: "accept" } });
      const run = await harness.waitForEnd(runId, TURN_MS);
      expect(run.status).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, runId).at(-1)).toBe("plan approved");
    },
    TURN_MS + 30_000,
  );

  it(
    "the session token reaches Claude Code only in the MCP headers: not in log lines, events or any command line",
    async () => {
      model.setRules([
        { when: { toolAvailable: "t3_thread_list", lastIsToolResult: false }, reply: { toolCall: { tool: "t3_thread_list", arguments: {} } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "listed" } },
      ]);
      const logs: string[] = [];
      const events: NormalizedProviderEvent[] = [];
      const driver = createClaudeDriver({ log: (line) => logs.push(line) });
      // The owner token authenticates on Loom's MCP endpoint like a session token does.
      const token = harness.ownerToken;
      const session = await driver.openSession({
        instance: { id: "claude", driver: "claude", enabled: true, displayName: null, models: null, options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } },
        threadId: "thread:direct",
        providerSessionId: "provider-session:direct",
        cwd: harness.dir,
        runtimeMode: "approval-required",
        interactionMode: "default",
        model: "claude-sonnet-4-5",
        mcp: { url: harness.server.mcpUrl, token },
        onEvent: (event) => events.push(event),
      });
      try {
        expect(commandLinesContaining(token)).toEqual([]);
        await session.startTurn({ runId: "run-direct", input: "List the threads." });
        await harness.until(() => events.find((event) => event.type === "turn.completed"), "the direct turn to end", TURN_MS);
      } finally {
        await session.stop();
      }
      expect(events.at(-1)).toEqual({ type: "turn.completed", runId: "run-direct", status: "completed", error: null });
      expect(events).toContainEqual(expect.objectContaining({ item: expect.objectContaining({ kind: "dynamic_tool", toolName: "mcp__t3-code__t3_thread_list", status: "completed" }) }));
      expect(logs.some((line) => line.includes("Loom MCP server configured"))).toBe(true);
      expect(logs.some((line) => line.includes("Loom MCP server connected"))).toBe(true);
      expect(logs.join("\n")).not.toContain(token);
      expect(JSON.stringify(events)).not.toContain(token);
    },
    TURN_MS + 30_000,
  );

  it(
    "Claude Code runs under the session id the driver asked for: both turns report it, with usage and cost",
    async () => {
      model.setRules([{ reply: { text: "ok" } }]);
      const logs: string[] = [];
      const events: NormalizedProviderEvent[] = [];
      const session = await createClaudeDriver({ log: (line) => logs.push(line) }).openSession({
        instance: { id: "claude", driver: "claude", enabled: true, displayName: null, models: null, options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } },
        threadId: "thread:native",
        providerSessionId: "provider-session:native",
        cwd: harness.dir,
        runtimeMode: "full-access",
        interactionMode: "default",
        model: "claude-sonnet-4-5",
        mcp: null,
        onEvent: (event) => events.push(event),
      });
      try {
        for (const runId of ["run-a", "run-b"]) {
          await session.startTurn({ runId, input: "Say ok." });
          await harness.until(() => events.find((event) => event.type === "turn.completed" && event.runId === runId), `turn ${runId} to end`, TURN_MS);
        }
      } finally {
        await session.stop();
      }
      const started = events.filter((event) => event.type === "turn.started");
      expect(started).toHaveLength(2);
      const sessionId = started[0]?.type === "turn.started" ? started[0].nativeThreadId : undefined;
      expect(sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(started[1]).toMatchObject({ nativeThreadId: sessionId });
      // Claude Code reported the id it was given (the driver logs a mismatch).
      expect(logs.filter((line) => line.includes("Claude Code runs session"))).toEqual([]);
      const usage = events.filter((event) => event.type === "usage");
      expect(usage.map((event) => event.runId)).toEqual(["run-a", "run-b"]);
      for (const event of usage) {
        expect(event).toMatchObject({ cachedInputTokens: expect.any(Number), costUsd: expect.any(Number) });
        expect(event.type === "usage" ? event.costUsd : -1).toBeGreaterThanOrEqual(0);
      }
    },
    2 * TURN_MS,
  );
});

const VERDICT = { type: "object", properties: { winner: { type: "integer" }, rationale: { type: "string" } }, required: ["winner", "rationale"], additionalProperties: false };

/**
 * A thread's output schema held by Claude Code itself (docs/delegation.md,
 * "Native enforcement"): Loom starts it with `outputFormat`, the model answers
 * through Claude Code's StructuredOutput tool, and the checked value is the
 * thread's structuredResult. A follow-up that owes no structured result
 * restarts Claude Code without the schema and continues the same conversation.
 */
describe("claude: output schemas held by Claude Code", () => {
  it(
    "a structured thread answers through StructuredOutput; its follow-up continues the conversation without the schema",
    async () => {
      model.setRules([
        { when: { toolAvailable: "StructuredOutput", lastIsToolResult: false }, reply: { toolCall: { tool: "StructuredOutput", arguments: { winner: 2, rationale: "shorter" } } } },
        // Claude Code sends the follow-up in the user turn that carries the StructuredOutput tool's result.
        { when: { anyMessageIncludes: "And why?" }, reply: { text: "Because it is shorter." } },
      ]);
      const launched = await harness.launch({ message: "Pick the better attempt.", title: "claude schema", target: { providerInstanceId: "claude" }, outputSchema: VERDICT });
      const first = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(first.status, JSON.stringify(harness.items(launched.threadId), null, 2)).toBe("completed");

      const read = await pollUntil(
        () => harness.owner.ok<ThreadReadOutput>("t3_thread_read", { threadId: launched.threadId }),
        (r) => r.structuredResult !== undefined || r.structuredResultError != null,
        "the structured result",
      );
      expect(read.structuredResult).toEqual({ winner: 2, rationale: "shorter" });
      // Claude Code checked the value itself: one model request, one run, no repair turn.
      const schemaRequests = model.requests.filter((request) => request.normalized?.tools.includes("StructuredOutput"));
      expect(schemaRequests).toHaveLength(1);
      expect(harness.runs(launched.threadId)).toHaveLength(1);
      expect(harness.assistantTexts(launched.threadId, launched.runId!).at(-1)).toBe('{"winner":2,"rationale":"shorter"}');

      const sent = await harness.owner.ok<{ runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "And why?" });
      const second = await harness.waitForEnd(sent.runId, TURN_MS);
      expect(second.status).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, sent.runId).at(-1)).toBe("Because it is shorter.");
      const followUp = model.requests.at(-1)!.normalized!;
      // Restarted without the schema, on the saved session: the earlier turn is in the conversation.
      expect(followUp.tools).not.toContain("StructuredOutput");
      expect(followUp.messages.some((message) => message.text.includes("Pick the better attempt."))).toBe(true);
      expect(followUp.messages.some((message) => message.toolCalls.some((call) => call.name === "StructuredOutput"))).toBe(true);
    },
    TURN_MS * 3,
  );
});

/** Processes whose command line holds `secret` (Linux /proc; empty elsewhere). */
function commandLinesContaining(secret: string): string[] {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(secret);
    } catch {
      return false;
    }
  });
}
