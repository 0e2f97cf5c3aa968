import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RuntimeMode } from "../../contracts/modes.js";
import { LoomHarness, script } from "../../testkit/loomHarness.js";
import type { ModelRule } from "../../modelServer/rules.js";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { AppServerProcess } from "./appServerProcess.js";
import { appServerArgs, appServerEnv, threadStartParams } from "./codexConfig.js";
import { parseCodexOptions } from "./options.js";
import { installedLauncher, resolveExecutable } from "./probe.js";
import type { ServerNotification, ServerRequest, TurnStartParams } from "./protocol.js";

/**
 * Records the codex app-server transcripts in fixtures/ that the mapper and
 * approval tests replay: the real codex 0.171.0, the scripted model server,
 * and a real Loom MCP endpoint (the owner token stands in for a session
 * token). Each fixture holds what the server wrote: notifications and
 * server→client requests, in order. Runs only with
 * Run only on purpose (it overwrites fixtures/):
 *
 *   npm run record:codex
 */


const FIXTURES = join(import.meta.dirname, "fixtures");
/** An unknown model gets codex's fallback metadata: plain function tools, no Code Mode. */
const MODEL = "loom-test-model";
const TURN_MS = 60_000;

interface Control {
  steer(text: string): void;
  interrupt(): void;
}

interface Scenario {
  readonly name: string;
  readonly runtimeMode: RuntimeMode;
  readonly prompt: string;
  readonly rules: (ctx: { busyThreadId: string; idleThreadId: string }) => readonly ModelRule[];
  /** The JSON-RPC result for a server request (approvals, questions). */
  readonly answer?: (request: ServerRequest) => unknown;
  readonly onNotification?: (notification: ServerNotification, control: Control) => void;
  /** A base URL path the model server does not serve, to record a failed turn. */
  readonly brokenEndpoint?: boolean;
  /** Extra turn/start fields outside the generated stable types (plan mode needs the experimental API). */
  readonly experimentalTurn?: Record<string, unknown>;
}

const call = (tool: string, args: Record<string, unknown>, when: ModelRule["when"] = { lastIsToolResult: false }): ModelRule => ({
  when,
  reply: { toolCall: { tool, arguments: args } },
  times: 1,
});
const afterTool = (text: string): ModelRule => ({ when: { lastIsToolResult: true }, reply: { text } });
const decide = (decision: string) => () => ({ decision });
const PATCH = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: notes.txt\n+one\n+two\n*** End Patch\nEOF\n";

const SCENARIOS: readonly Scenario[] = [
  {
    name: "mcp-tool-calls",
    runtimeMode: "full-access",
    prompt: "List the Loom threads, then wait for one.",
    rules: ({ idleThreadId }) => [
      call("t3_thread_list", { limit: 5 }),
      call("t3_thread_wait", { threadId: idleThreadId, timeoutMs: 1000 }, { lastIsToolResult: true }),
      afterTool("waited: {{lastToolResult}}"),
    ],
  },
  {
    name: "command-approved",
    runtimeMode: "approval-required",
    prompt: "Write a file with the shell.",
    rules: () => [call("exec_command", { cmd: "echo hi > out.txt && cat out.txt" }), afterTool("wrote it")],
    answer: decide("accept"),
  },
  {
    name: "command-declined",
    runtimeMode: "approval-required",
    prompt: "Touch a file.",
    rules: () => [call("exec_command", { cmd: "touch nope.txt" }), afterTool("it was declined")],
    answer: decide("decline"),
  },
  {
    name: "file-change-approved",
    runtimeMode: "approval-required",
    prompt: "Add notes.txt.",
    rules: () => [call("exec_command", { cmd: PATCH }), afterTool("added notes.txt")],
    answer: decide("accept"),
  },
  {
    name: "interrupted",
    runtimeMode: "full-access",
    prompt: "Wait for the busy thread.",
    rules: ({ busyThreadId }) => [call("t3_thread_wait", { threadId: busyThreadId, timeoutMs: 20_000 }), afterTool("never sent")],
    onNotification: (notification, control) => {
      if (notification.method === "item/started" && notification.params.item.type === "mcpToolCall") setTimeout(() => control.interrupt(), 300);
    },
  },
  {
    name: "steered",
    runtimeMode: "full-access",
    prompt: "Wait a little.",
    rules: ({ busyThreadId }) => [
      call("t3_thread_wait", { threadId: busyThreadId, timeoutMs: 1500 }),
      { when: { lastUserIncludes: "also say bye" }, reply: { text: "noted: {{lastUser}}" } },
    ],
    onNotification: (notification, control) => {
      if (notification.method === "item/started" && notification.params.item.type === "mcpToolCall") control.steer("also say bye");
    },
  },
  {
    name: "failed",
    runtimeMode: "full-access",
    prompt: "Say hi.",
    rules: () => [afterTool("unused")],
    brokenEndpoint: true,
  },
  {
    name: "user-input",
    runtimeMode: "full-access",
    prompt: "Ask me a question.",
    rules: () => [
      call("request_user_input", { questions: [{ id: "color", header: "Color", question: "Which color?", options: [{ label: "blue (Recommended)", description: "calm" }, { label: "red", description: "loud" }] }] }),
      afterTool("you chose: {{lastToolResult}}"),
    ],
    answer: () => ({ answers: { color: { answers: ["blue"] } } }),
    experimentalTurn: { collaborationMode: { mode: "plan", settings: { model: MODEL, reasoning_effort: null, developer_instructions: null } } },
  },
];

describe("record codex app-server transcripts into fixtures/", () => {
  let model: ModelServer;
  let harness: LoomHarness;
  let busyThreadId = "";
  let idleThreadId = "";

  beforeAll(async () => {
    model = await startModelServer();
    harness = await LoomHarness.start({ config: { providers: [{ id: "scripted", driver: "scripted" }] } });
    const idle = await harness.createThread({ title: "an idle thread", prompt: "hello" });
    idleThreadId = idle.threadId;
    await harness.waitForEnd(idle.runId!);
    busyThreadId = (await harness.createThread({ title: "a busy thread", prompt: script({ sleep: 120_000 }) })).threadId;
  });

  afterAll(async () => {
    await harness?.close();
    await model?.close();
  });

  for (const scenario of SCENARIOS) {
    it(scenario.name, async () => {
      const cwd = realpathSync(mkdtempSync(join(tmpdir(), "loom-codex-rec-")));
      const home = realpathSync(mkdtempSync(join(tmpdir(), "loom-codex-home-")));
      model.setRules(scenario.rules({ busyThreadId, idleThreadId }));
      const options = parseCodexOptions({
        id: "codex",
        driver: "codex",
        enabled: true,
        displayName: null,
        models: null,
        options: {
          modelProvider: { id: "loomtest", baseUrl: `${model.url}${scenario.brokenEndpoint === true ? "/missing" : ""}/v1`, envKey: "LOOM_MODEL_KEY" },
          env: { LOOM_MODEL_KEY: "dummy" },
        },
      });
      const executable = resolveExecutable(options, installedLauncher);
      const messages: unknown[] = [];
      let threadId = "";
      let turnId = "";
      let finish: () => void = () => undefined;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      const server: AppServerProcess = new AppServerProcess({
        command: executable.command,
        args: [...executable.prefixArgs, ...appServerArgs(options)],
        env: appServerEnv(options, process.env, home),
        cwd,
        requestTimeoutMs: 30_000,
        onNotification: (notification) => {
          messages.push(notification);
          scenario.onNotification?.(notification, control);
          if (notification.method === "turn/completed") finish();
        },
        onRequest: (request) => {
          messages.push(request);
          server.respond(request.id, scenario.answer?.(request) ?? { decision: "cancel" });
        },
        onExit: () => finish(),
      });
      const control: Control = {
        steer: (text) => void server.request("turn/steer", { threadId, expectedTurnId: turnId, input: [{ type: "text", text, text_elements: [] }] }),
        interrupt: () => void server.request("turn/interrupt", { threadId, turnId }),
      };
      try {
        await server.request("initialize", { clientInfo: { name: "loom", title: null, version: "0.1.0" }, capabilities: { experimentalApi: scenario.experimentalTurn !== undefined, requestAttestation: false } });
        server.notify("initialized");
        const started = await server.request<"thread/start", { thread: { id: string } }>(
          "thread/start",
          threadStartParams({ cwd, model: MODEL, runtimeMode: scenario.runtimeMode, mcp: { url: harness.server.mcpUrl, token: harness.ownerToken } }),
        );
        threadId = started.thread.id;
        const turnParams = { threadId, input: [{ type: "text", text: scenario.prompt, text_elements: [] }], ...scenario.experimentalTurn } as TurnStartParams;
        const turn = await server.request<"turn/start", { turn: { id: string } }>("turn/start", turnParams);
        turnId = turn.turn.id;
        await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, TURN_MS))]);
      } finally {
        await server.close();
        rmSync(home, { recursive: true, force: true });
        rmSync(cwd, { recursive: true, force: true });
      }
      // Paths and the endpoint vary between runs; the fixtures name them by role.
      const text = JSON.stringify({ scenario: scenario.name, codex: "0.171.0", runtimeMode: scenario.runtimeMode, prompt: scenario.prompt, messages }, null, 1)
        .replaceAll(cwd, "/workspace")
        .replaceAll(home, "/codex-home")
        .replaceAll(harness.dir, "/loom")
        .replaceAll(model.url, "http://model.invalid");
      expect(text).not.toContain(harness.ownerToken);
      expect(messages.some((message) => (message as { method?: string }).method === "turn/completed")).toBe(true);
      writeFileSync(join(FIXTURES, `${scenario.name}.json`), `${text}\n`);
    }, 90_000);
  }
});
