import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TurnItem } from "../../contracts/turnItems.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import type { NormalizedProviderEvent } from "../events.js";
import { createCodexDriver } from "./driver.js";

/**
 * The real codex 0.171.0 (`codex app-server`) under Loom, against the
 * scripted model server: Loom injects its MCP endpoint into the codex thread,
 * the model calls Loom's tools through it, and Loom's own state shows the
 * calls and the replies. Success is read from Loom's state, never from an
 * exit code.
 */

const TURN_MS = 60_000;
/** An unknown model gets codex's fallback metadata: plain function tools, which the model server reads. */
const MODEL = "loom-test-model";

let model: ModelServer;
let harness: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  harness = await LoomHarness.start({
    config: {
      providers: [
        {
          id: "codex",
          driver: "codex",
          models: [MODEL],
          options: { modelProvider: { id: "loomtest", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } },
        },
        { id: "scripted", driver: "scripted" },
      ],
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

/** A scripted thread whose run sleeps, so t3_thread_wait on it blocks. */
async function busyThread(): Promise<string> {
  const busy = await harness.createThread({ title: "busy", prompt: script({ sleep: 120_000 }), target: { providerInstanceId: "scripted" } });
  await harness.waitForRun(busy.runId!, "running");
  return busy.threadId;
}

/** Resolves once the model server has answered with a call to `tool`. */
function toolCalled(tool: string): Promise<void> {
  return harness
    .until(() => model.requests.some((request) => request.reply?.type === "toolCall" && request.reply.tool.callName === tool), `the model to call ${tool}`, TURN_MS)
    .then(() => new Promise((resolve) => setTimeout(resolve, 300)));
}

describe("codex driver end to end", () => {
  it(
    "a codex thread calls t3_thread_list through the injected MCP server and quotes it",
    async () => {
      model.setRules([
        { when: { toolAvailable: "t3_thread_list", lastIsToolResult: false }, reply: { toolCall: { tool: "t3_thread_list", arguments: {} } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "threads: {{lastToolResult}}" } },
      ]);
      const launched = await harness.launch({ message: "List the threads.", title: "codex e2e", target: { providerInstanceId: "codex" } });
      expect(launched.runId).not.toBeNull();
      const run = await harness.waitForEnd(launched.runId!, TURN_MS);
      const items = itemsOfRun(launched.threadId, launched.runId!);
      expect(run.status, JSON.stringify({ run, items }, null, 2)).toBe("completed");

      const tool = items.find((item) => item.type === "dynamic_tool");
      expect(tool).toMatchObject({ type: "dynamic_tool", toolName: "t3-code.t3_thread_list", status: "completed" });
      const texts = harness.assistantTexts(launched.threadId, launched.runId!);
      expect(texts.at(-1)).toMatch(/^threads: /);
      // The quoted tool result is Loom's thread list, which holds this very thread.
      expect(texts.at(-1)).toContain(launched.threadId);

      // Codex offered Loom's tools in two namespaces: the wait only as a direct tool.
      const offered = new Set(model.requests.flatMap((request) => request.normalized?.tools ?? []));
      expect(offered).toContain("mcp__t3_code__t3_thread_list");
      expect(offered).toContain("mcp__t3_code_direct__t3_thread_wait");
      expect(offered).not.toContain("mcp__t3_code__t3_thread_wait");
      expect(offered).not.toContain("mcp__t3_code_direct__t3_thread_list");
    },
    TURN_MS + 30_000,
  );

  it(
    "approval-required: a shell command waits for approval, the owner accepts over HTTP, the command runs",
    async () => {
      model.setRules([
        { when: { lastIsToolResult: false }, reply: { toolCall: { tool: "exec_command", arguments: { cmd: "echo hi > hi.txt && cat hi.txt" } } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "the command ran" } },
      ]);
      const launched = await harness.launch({ message: "Say hi in a file.", title: "codex approval", target: { providerInstanceId: "codex" }, runtimeMode: "approval-required" });
      const runId = launched.runId!;
      await harness.waitForRun(runId, "waiting_on_approval", TURN_MS);
      const request = harness.items(launched.threadId).find((item) => item.type === "approval_request" && item.runId === runId);
      if (request?.type !== "approval_request") throw new Error("no approval request");
      expect(request).toMatchObject({ requestKind: "command", status: "pending" });
      expect(request.title).toContain("echo hi > hi.txt");

      const answer = await harness.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { decision: "accept" } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const run = await harness.waitForEnd(runId, TURN_MS);
      const items = itemsOfRun(launched.threadId, runId);
      expect(run.status, JSON.stringify({ run, items }, null, 2)).toBe("completed");
      const command = items.find((item) => item.type === "command_execution");
      expect(command).toMatchObject({ type: "command_execution", status: "completed", exitCode: 0 });
      expect(command?.type === "command_execution" ? command.outputPreview : "").toContain("hi");
      expect(harness.assistantTexts(launched.threadId, runId).at(-1)).toBe("the command ran");
    },
    TURN_MS + 30_000,
  );

  it(
    "t3_thread_interrupt stops a codex turn blocked in t3_thread_wait",
    async () => {
      const busyId = await busyThread();
      model.setRules([
        { when: { lastIsToolResult: false }, reply: { toolCall: { tool: "t3_thread_wait", arguments: { threadId: busyId, timeoutMs: 25_000 } } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "the wait ended" } },
      ]);
      const launched = await harness.launch({ message: "Wait for the busy thread.", title: "codex interrupt", target: { providerInstanceId: "codex" } });
      await toolCalled("t3_thread_wait");
      expect(harness.run(launched.runId!).status).toBe("running");

      const outcome = await harness.owner.ok<{ outcome: string }>("t3_thread_interrupt", { threadId: launched.threadId });
      expect(outcome.outcome).toBe("interrupt_requested");
      const run = await harness.waitForEnd(launched.runId!, 20_000);
      expect(run, JSON.stringify(itemsOfRun(launched.threadId, launched.runId!), null, 2)).toMatchObject({ status: "interrupted", endReason: "interrupted_by_user" });
      expect(harness.assistantTexts(launched.threadId, launched.runId!)).not.toContain("the wait ended");
    },
    TURN_MS + 30_000,
  );

  it(
    "a message steered into a running codex turn reaches the model in the same run",
    async () => {
      const busyId = await busyThread();
      model.setRules([
        { when: { lastIsToolResult: false }, reply: { toolCall: { tool: "t3_thread_wait", arguments: { threadId: busyId, timeoutMs: 2_000 } } }, times: 1 },
        { when: { lastUserIncludes: "also say bye" }, reply: { text: "noted: {{lastUser}}" } },
      ]);
      const launched = await harness.launch({ message: "Wait a little.", title: "codex steer", target: { providerInstanceId: "codex" } });
      await toolCalled("t3_thread_wait");
      const sent = await harness.owner.ok<{ delivery: string; runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "also say bye", mode: "steer" });
      expect(sent).toMatchObject({ delivery: "steered", runId: launched.runId });

      const run = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(run.status).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, launched.runId!).at(-1)).toBe("noted: also say bye");
    },
    TURN_MS + 30_000,
  );

  it(
    "a direct session: each turn.started names codex's thread and its own turn; usage reports cached input",
    async () => {
      model.setRules([{ reply: { text: "ok" } }]);
      const events: NormalizedProviderEvent[] = [];
      const session = await createCodexDriver().openSession({
        instance: {
          id: "codex",
          driver: "codex",
          enabled: true,
          displayName: null,
          models: [MODEL],
          options: { modelProvider: { id: "loomtest", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } },
        },
        threadId: "thread:native",
        providerSessionId: "provider-session:native",
        cwd: harness.dir,
        runtimeMode: "full-access",
        interactionMode: "default",
        model: MODEL,
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
      const started = events.flatMap((event) => (event.type === "turn.started" ? [event] : []));
      expect(started).toHaveLength(2);
      const [a, b] = started;
      expect(a?.nativeThreadId).toMatch(/^[0-9a-f-]{36}$/);
      expect(b?.nativeThreadId).toBe(a?.nativeThreadId);
      expect(a?.nativeTurnId).toMatch(/^[0-9a-f-]{36}$/);
      expect(b?.nativeTurnId).toMatch(/^[0-9a-f-]{36}$/);
      expect(b?.nativeTurnId).not.toBe(a?.nativeTurnId);
      const usage = events.filter((event) => event.type === "usage");
      expect(usage.length).toBeGreaterThan(0);
      for (const event of usage) expect(event).toMatchObject({ inputTokens: expect.any(Number), cachedInputTokens: expect.any(Number) });
    },
    2 * TURN_MS,
  );
});
