import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { TurnItem } from "../../contracts/turnItems.js";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";

/**
 * The real OpenCode 1.18.33 (`opencode serve`, driven through
 * @opencode-ai/sdk) under Loom, against the scripted model server (Chat
 * Completions through OpenCode's bundled openai-compatible provider). Loom
 * injects its MCP endpoint as the remote server `t3-code`; the model calls
 * Loom's tools through it. Pass or fail is read from Loom's state, never
 * from an exit code. OpenCode takes 7-20 s to start, so budgets are wide.
 */

const TURN_MS = 120_000;
const MODEL = "loom/scripted";

let model: ModelServer;
let harness: LoomHarness;

beforeEach(async () => {
  model = await startModelServer();
  harness = await LoomHarness.start({
    config: {
      providers: [
        {
          id: "opencode",
          driver: "opencode",
          models: [MODEL],
          options: { modelProvider: { id: "loom", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } },
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

function dump(threadId: string): string {
  return JSON.stringify({ runs: harness.runs(threadId), items: harness.items(threadId), requests: model.requests.map((r) => [r.api, r.ruleIndex, r.reply]) }, null, 2);
}

describe("opencode driver end to end", () => {
  it(
    "an opencode parent delegates to a scripted child with delegate_task (wait) and quotes the child's answer",
    async () => {
      const task = script({ say: "42" });
      model.setRules([
        { when: { toolAvailable: "delegate_task", lastIsToolResult: false, lastUserIncludes: "Delegate" }, reply: { toolCall: { tool: "delegate_task", arguments: { task, target: { providerInstanceId: "scripted" }, mode: "wait", clientRequestId: "oc-1" } } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "The child answered: {{lastToolResult}}" } },
      ]);
      const launched = await harness.launch({ message: "Delegate the question and report the answer.", title: "opencode parent", target: { providerInstanceId: "opencode" } });
      const run = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(run.status, dump(launched.threadId)).toBe("completed");

      const tasks = [...harness.state.tasks.values()].filter((t: DelegatedTask) => t.parentThreadId === launched.threadId);
      expect(tasks).toHaveLength(1);
      const child = tasks[0]!;
      expect(child).toMatchObject({ status: "completed", providerInstanceId: "scripted", mode: "wait", clientRequestId: "oc-1", parentRunId: launched.runId });
      expect(child.summary).toBe("42");
      expect(harness.assistantTexts(child.childThreadId)).toEqual(["42"]);

      const call = itemsOfRun(launched.threadId, launched.runId!).find((item) => item.type === "dynamic_tool");
      expect(call, dump(launched.threadId)).toMatchObject({ type: "dynamic_tool", toolName: "t3-code_delegate_task", status: "completed" });
      const final = harness.assistantTexts(launched.threadId, launched.runId!).at(-1) ?? "";
      expect(final).toMatch(/^The child answered: /);
      expect(final).toContain(child.childThreadId);
      // OpenCode offered Loom's tools under the MCP server's name, and the first prompt carried Loom's instructions.
      const offered = new Set(model.requests.flatMap((request) => request.normalized?.tools ?? []));
      expect(offered).toContain("t3-code_delegate_task");
      expect(model.requests.find((request) => request.ruleIndex === 0)?.normalized?.system).toContain("delegate_task runs a task");
    },
    TURN_MS + 60_000,
  );

  it(
    "opencode as the delegated child: a scripted parent delegates to it and gets its answer",
    async () => {
      model.setRules([{ when: { lastUserIncludes: "6 times 7" }, reply: { text: "42" } }]);
      const parentScript = script(
        { call: "delegate_task", args: { task: "What is 6 times 7? Answer with the number only.", target: { providerInstanceId: "opencode" }, mode: "wait", timeoutMs: 25_000, clientRequestId: "to-oc" }, as: "task" },
        { say: "child: {{task.summary}} ({{task.status}})" },
      );
      const launched = await harness.launch({ message: parentScript, title: "scripted parent", target: { providerInstanceId: "scripted" } });
      const run = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(run.status, dump(launched.threadId)).toBe("completed");
      const task = [...harness.state.tasks.values()].find((t: DelegatedTask) => t.parentThreadId === launched.threadId)!;
      // The parent's wait may time out while OpenCode starts; the task completes either way.
      const done = await harness.until(() => (harness.state.tasks.get(task.taskId)?.status === "completed" ? harness.state.tasks.get(task.taskId) : undefined), "the opencode child to finish", TURN_MS);
      expect(done).toMatchObject({ providerInstanceId: "opencode", summary: "42" });
      expect(harness.runs(task.childThreadId).map((r) => [r.kind, r.status])).toEqual([["delegated_task", "completed"]]);
      expect(harness.assistantTexts(task.childThreadId)).toEqual(["42"]);
      const userMessages = harness.items(task.childThreadId).flatMap((item) => (item.type === "user_message" ? [item.text] : []));
      expect(userMessages).toEqual(["What is 6 times 7? Answer with the number only."]);
    },
    TURN_MS + 60_000,
  );

  it(
    "approval-required: a shell command waits for approval routed through Loom; accepted, it runs",
    async () => {
      model.setRules([
        { when: { lastIsToolResult: false }, reply: { toolCall: { tool: "bash", arguments: { command: "echo hi > hi.txt && cat hi.txt", description: "write hi" } } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "the command ran: {{lastToolResult}}" } },
      ]);
      const launched = await harness.launch({ message: "Say hi in a file.", title: "opencode approval", target: { providerInstanceId: "opencode" }, runtimeMode: "approval-required" });
      const runId = launched.runId!;
      await harness.waitForRun(runId, "waiting_on_approval", TURN_MS);
      const request = harness.items(launched.threadId).find((item) => item.type === "approval_request" && item.runId === runId);
      if (request?.type !== "approval_request") throw new Error("no approval request");
      expect(request).toMatchObject({ requestKind: "command", status: "pending" });
      expect(request.title).toContain("echo hi > hi.txt");

      const answer = await harness.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { decision: "accept" } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const run = await harness.waitForEnd(runId, TURN_MS);
      expect(run.status, dump(launched.threadId)).toBe("completed");
      const command = itemsOfRun(launched.threadId, runId).find((item) => item.type === "command_execution");
      expect(command).toMatchObject({ type: "command_execution", exitCode: 0 });
      expect(command?.type === "command_execution" ? command.outputPreview : "").toContain("hi");
      expect(harness.assistantTexts(launched.threadId, runId).at(-1)).toContain("the command ran: hi");
    },
    TURN_MS + 60_000,
  );

  it(
    "a question from OpenCode's question tool is answered through Loom and reaches the model",
    async () => {
      const questions = [{ question: "Which colour?", header: "Colour", options: [{ label: "red", description: "warm" }, { label: "blue", description: "cold" }] }];
      model.setRules([
        { when: { lastIsToolResult: false }, reply: { toolCall: { tool: "question", arguments: { questions } } }, times: 1 },
        { when: { lastIsToolResult: true }, reply: { text: "answered: {{lastToolResult}}" } },
      ]);
      const launched = await harness.launch({ message: "Ask me a colour.", title: "opencode question", target: { providerInstanceId: "opencode" } });
      const runId = launched.runId!;
      await harness.waitForRun(runId, "waiting_on_user_input", TURN_MS);
      const request = harness.items(launched.threadId).find((item) => item.type === "user_input_request" && item.runId === runId);
      if (request?.type !== "user_input_request") throw new Error("no question");
      expect(request.questions).toEqual([expect.objectContaining({ id: "q1", question: "Which colour? (red / blue)" })]);

      const answer = await harness.dispatch("runtime-request.respond", { threadId: launched.threadId, requestId: request.requestId, response: { answers: { q1: ["blue"] } } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const run = await harness.waitForEnd(runId, TURN_MS);
      expect(run.status, dump(launched.threadId)).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, runId).at(-1)).toContain('"Which colour?"="blue"');
    },
    TURN_MS + 60_000,
  );

  it(
    "a message steered into a running OpenCode turn reaches the model in the same run",
    async () => {
      const busy = await harness.createThread({ title: "busy", prompt: script({ sleep: 120_000 }), target: { providerInstanceId: "scripted" } });
      await harness.waitForRun(busy.runId!, "running");
      model.setRules([
        { when: { lastIsToolResult: false, lastUserIncludes: "Wait" }, reply: { toolCall: { tool: "t3_thread_wait", arguments: { threadId: busy.threadId, timeoutMs: 4_000 } } }, times: 1 },
        { when: { lastUserIncludes: "also say bye" }, reply: { text: "noted: {{lastUser}}" } },
      ]);
      const launched = await harness.launch({ message: "Wait a little.", title: "opencode steer", target: { providerInstanceId: "opencode" } });
      await harness.until(() => model.requests.some((request) => request.reply?.type === "toolCall"), "the model to call t3_thread_wait", TURN_MS);
      const sent = await harness.owner.ok<{ delivery: string; runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "also say bye", mode: "steer" });
      expect(sent).toMatchObject({ delivery: "steered", runId: launched.runId });
      const run = await harness.waitForEnd(launched.runId!, TURN_MS);
      expect(run.status, dump(launched.threadId)).toBe("completed");
      expect(harness.assistantTexts(launched.threadId, launched.runId!).at(-1)).toBe("noted: also say bye");
      expect(harness.runs(launched.threadId)).toHaveLength(1);
    },
    TURN_MS + 60_000,
  );
});
