import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CanUseTool, type PermissionResult, type SDKMessage, query } from "@anthropic-ai/claude-agent-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RuntimeMode } from "../../contracts/modes.js";
import { LoomHarness } from "../../testkit/loomHarness.js";
import type { ModelRule } from "../../modelServer/rules.js";
import { type ModelServer, startModelServer } from "../../modelServer/server.js";
import { DEFAULT_CLAUDE_MODEL, parseClaudeOptions } from "./options.js";
import { buildQueryOptions } from "./queryOptions.js";
import { UserMessageStream } from "./userMessageStream.js";

/**
 * Records the SDK transcripts in fixtures/ that the mapper tests replay:
 * the real Claude Code, the scripted model server, and a real Loom MCP
 * endpoint (the owner token stands in for a session token). Runs only with
 * Run only on purpose (it overwrites fixtures/):
 *
 *   npm run record:claude
 *
 * thinking.json and api-error.json come from a probe against an inline stub
 * (the model server answers neither thinking blocks nor HTTP errors); see
 * fixtures/README.md.
 */


const FIXTURES = join(import.meta.dirname, "fixtures");

interface PermissionCall {
  readonly toolName: string;
  readonly input: Record<string, unknown>;
  readonly options: Record<string, unknown>;
}

interface Scenario {
  readonly name: string;
  readonly runtimeMode: RuntimeMode;
  readonly prompt: string;
  readonly rules: readonly ModelRule[];
  readonly answer?: (toolName: string, input: Record<string, unknown>) => PermissionResult;
  /** Acts on each message; returns a text to steer with, or "interrupt". */
  readonly onMessage?: (message: SDKMessage, control: { steer(text: string): void; interrupt(): void }) => void;
}

const allow = (_: string, input: Record<string, unknown>): PermissionResult => ({ behavior: "allow", updatedInput: input });
const afterTool = (text: string): ModelRule => ({ when: { lastIsToolResult: true }, reply: { text } });
const call = (tool: string, args: Record<string, unknown>): ModelRule => ({ when: { lastIsToolResult: false }, reply: { toolCall: { tool, arguments: args } }, times: 1 });

function firstToolUse(message: SDKMessage): boolean {
  return message.type === "assistant" && JSON.stringify(message.message.content).includes('"tool_use"');
}

const SCENARIOS: readonly Scenario[] = [
  {
    name: "mcp-thread-list",
    runtimeMode: "approval-required",
    prompt: "List the Loom threads.",
    rules: [{ ...call("t3_thread_list", { limit: 5 }), when: { toolAvailable: "t3_thread_list", lastIsToolResult: false } }, afterTool("threads: {{lastToolResult}}")],
  },
  { name: "bash-approved", runtimeMode: "approval-required", prompt: "Say hi.", rules: [call("Bash", { command: "echo hi", description: "say hi" }), afterTool("done")], answer: allow },
  {
    name: "bash-declined",
    runtimeMode: "approval-required",
    prompt: "Touch a file.",
    rules: [call("Bash", { command: "touch made.txt", description: "make a file" }), afterTool("it was declined")],
    answer: () => ({ behavior: "deny", message: "The user declined this tool call." }),
  },
  { name: "bash-failed", runtimeMode: "approval-required", prompt: "Fail.", rules: [call("Bash", { command: "echo oops >&2; exit 3", description: "fail" }), afterTool("it failed")], answer: allow },
  {
    name: "write-edit",
    runtimeMode: "auto-accept-edits",
    prompt: "Write and edit notes.txt.",
    rules: [
      call("Write", { file_path: "{{cwd}}/notes.txt", content: "one\ntwo\n" }),
      { when: { lastIsToolResult: true }, reply: { toolCall: { tool: "Edit", arguments: { file_path: "{{cwd}}/notes.txt", old_string: "two", new_string: "2\nthree" } } }, times: 1 },
      afterTool("edited"),
    ],
    answer: allow,
  },
  {
    name: "todo",
    runtimeMode: "approval-required",
    prompt: "Plan it.",
    rules: [
      call("TodoWrite", { todos: [{ content: "read the code", status: "completed", activeForm: "reading" }, { content: "fix the bug", status: "in_progress", activeForm: "fixing" }, { content: "write a test", status: "pending", activeForm: "writing" }] }),
      afterTool("planned"),
    ],
  },
  {
    name: "ask-user",
    runtimeMode: "approval-required",
    prompt: "Ask me.",
    rules: [
      call("AskUserQuestion", { questions: [{ question: "Which color?", header: "Color", options: [{ label: "red", description: "warm" }, { label: "blue", description: "cool" }], multiSelect: false }] }),
      afterTool("you chose: {{lastToolResult}}"),
    ],
    answer: (_, input) => ({ behavior: "allow", updatedInput: { ...input, answers: { "Which color?": "blue" } } }),
  },
  {
    name: "interrupted",
    runtimeMode: "full-access",
    prompt: "Sleep.",
    rules: [call("Bash", { command: "sleep 5", description: "sleep" }), afterTool("woke up")],
    onMessage: (message, control) => {
      if (firstToolUse(message)) setTimeout(() => control.interrupt(), 500);
    },
  },
  {
    name: "steered",
    runtimeMode: "full-access",
    prompt: "Nap.",
    rules: [call("Bash", { command: "sleep 2", description: "nap" }), afterTool("noted: {{lastUser}}")],
    onMessage: (message, control) => {
      if (firstToolUse(message)) control.steer("also say bye");
    },
  },
];

describe("record Claude SDK transcripts into fixtures/", () => {
  let model: ModelServer;
  let harness: LoomHarness;

  beforeAll(async () => {
    model = await startModelServer();
    harness = await LoomHarness.start({ config: { providers: [{ id: "scripted", driver: "scripted" }] } });
    await harness.createThread({ title: "an existing thread" });
  });

  afterAll(async () => {
    await harness?.close();
    await model?.close();
  });

  for (const scenario of SCENARIOS) {
    it(scenario.name, async () => {
      const cwd = mkdtempSync(join(tmpdir(), "loom-claude-rec-"));
      const configDir = mkdtempSync(join(tmpdir(), "loom-claude-cfg-"));
      const rules = JSON.parse(JSON.stringify(scenario.rules).replaceAll("{{cwd}}", cwd)) as ModelRule[];
      model.setRules(rules);
      const permissionRequests: PermissionCall[] = [];
      const canUseTool: CanUseTool = (toolName, input, options) => {
        const { signal: _signal, ...rest } = options;
        permissionRequests.push({ toolName, input, options: rest });
        return Promise.resolve((scenario.answer ?? allow)(toolName, input));
      };
      const options = buildQueryOptions(
        {
          cwd,
          model: DEFAULT_CLAUDE_MODEL,
          runtimeMode: scenario.runtimeMode,
          interactionMode: "default",
          mcp: { url: harness.server.mcpUrl, token: harness.ownerToken },
          configDir,
          persist: false,
          options: parseClaudeOptions({ id: "claude", driver: "claude", enabled: true, displayName: null, models: null, options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } }),
          baseEnv: process.env,
          isRoot: process.getuid?.() === 0,
        },
        { canUseTool, abortController: new AbortController(), stderr: () => undefined, sessionId: randomUUID() },
      );
      const input = new UserMessageStream();
      const q = query({ prompt: input, options });
      input.push(scenario.prompt, "00000000-0000-4000-8000-000000000001");
      const messages: SDKMessage[] = [];
      const control = {
        steer: (text: string) => input.push(text, "00000000-0000-4000-8000-000000000002"),
        interrupt: () => void q.interrupt(),
      };
      try {
        for await (const message of q) {
          messages.push(message);
          scenario.onMessage?.(message, control);
          if (message.type === "result") break;
        }
      } finally {
        input.close();
        q.close();
        rmSync(configDir, { recursive: true, force: true });
        rmSync(cwd, { recursive: true, force: true });
      }
      const text = JSON.stringify({ scenario: scenario.name, runtimeMode: scenario.runtimeMode, cwd, prompt: scenario.prompt, permissionRequests, messages }, null, 1);
      expect(text).not.toContain(harness.ownerToken);
      expect(messages.at(-1)?.type).toBe("result");
      writeFileSync(join(FIXTURES, `${scenario.name}.json`), `${text}\n`);
    }, 90_000);
  }
});
