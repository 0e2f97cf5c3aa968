/**
 * The wire shapes proven against the real CLIs: codex 0.171.0 (`codex exec`)
 * and the Claude Agent SDK 0.3.332 (`query()`, bundled claude binary).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type SDKMessage, query } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MODEL_KEY_ENV, type CodexMcpServer, claudeEnv, codexConfigToml } from "../testkit/agentConfig.js";
import type { ModelRule } from "./rules.js";
import { type ModelServer, startModelServer } from "./server.js";
import { type TinyMcpServer, startTinyMcpServer } from "../testkit/tinyMcpServer.js";

const CODEX = fileURLToPath(new URL("../../node_modules/.bin/codex", import.meta.url));

const echoRules: ModelRule[] = [
  { when: { toolAvailable: "echo_text", lastIsToolResult: false }, reply: { toolCall: { tool: "echo_text", arguments: { text: "ping" } } } },
  { when: { lastIsToolResult: true }, reply: { text: "tool said: {{lastToolResult}}" } },
];

const parallelEchoRules: ModelRule[] = [
  {
    when: { toolAvailable: "echo_text", lastIsToolResult: false },
    reply: { toolCalls: [{ tool: "echo_text", arguments: { text: "one" } }, { tool: "echo_text", arguments: { text: "two" } }] },
  },
  { when: { lastIsToolResult: true }, reply: { text: "tools answered" } },
];

/** The tool results of the model request that followed the parallel calls, by call id. */
function parallelResults(server: ModelServer): { callId: string; text: string }[] {
  const follow = server.requests.find((request) => (request.normalized?.lastMessage?.toolResults.length ?? 0) > 0);
  return (follow?.normalized?.lastMessage?.toolResults ?? []).map((result) => ({ callId: result.callId, text: result.text.trim().split("\n").at(-1) ?? "" }));
}

let dir: string;
let server: ModelServer;
let mcp: TinyMcpServer;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "loom-real-client-"));
  server = await startModelServer();
  mcp = await startTinyMcpServer();
});
afterEach(async () => {
  await server.close();
  await mcp.close();
  rmSync(dir, { recursive: true, force: true });
});

interface CodexRun {
  readonly code: number | null;
  readonly events: { type: string; item?: Record<string, unknown> }[];
  readonly stderr: string;
}

/** `codex exec --json` with stdin closed (else it waits for more input) and an isolated CODEX_HOME. */
function codexExec(prompt: string, mcpServers: readonly CodexMcpServer[] = []): Promise<CodexRun> {
  writeFileSync(join(dir, "config.toml"), codexConfigToml(server.url, mcpServers));
  const child = spawn(CODEX, ["exec", "--json", "--skip-git-repo-check", "--ephemeral", prompt], {
    cwd: dir,
    env: { ...process.env, CODEX_HOME: dir, [MODEL_KEY_ENV]: "dummy" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
  return new Promise((resolve) => {
    child.once("close", (code) => {
      clearTimeout(timer);
      const events = stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as CodexRun["events"][number]);
      resolve({ code, events, stderr });
    });
  });
}

async function claudeQuery(prompt: string, withMcp: boolean): Promise<SDKMessage[]> {
  const messages: SDKMessage[] = [];
  const options = {
    cwd: dir,
    env: claudeEnv(server.url, dir),
    persistSession: false,
    settingSources: [],
    model: "claude-sonnet-4-5",
    ...(withMcp ? { mcpServers: { tiny: { type: "http" as const, url: mcp.url } }, strictMcpConfig: true, allowedTools: ["mcp__tiny__*"] } : {}),
  };
  for await (const message of query({ prompt, options })) messages.push(message);
  return messages;
}

function assistantTexts(messages: readonly SDKMessage[]): string[] {
  return messages.flatMap((message) =>
    message.type === "assistant" ? message.message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])) : [],
  );
}

describe("codex exec against the model server", () => {
  it("prints the scripted text", async () => {
    server.setRules([{ when: { api: "responses" }, reply: { text: "hello from the model server" } }]);
    const run = await codexExec("say hi");
    const messages = run.events.filter((event) => event.item?.type === "agent_message").map((event) => event.item?.text);
    expect(messages, run.stderr).toEqual(["hello from the model server"]);
    expect(run.events.at(-1)?.type).toBe("turn.completed");
    const calls = server.requests.filter((request) => request.api === "responses");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ method: "POST", path: "/v1/responses", body: { model: "scripted", stream: true }, ruleIndex: 0 });
    expect(calls[0]?.normalized?.messages.at(-1)?.text).toBe("say hi");
    expect(calls[0]?.headers).not.toHaveProperty("authorization");
  });

  it("calls an MCP tool through its namespace and quotes the function_call_output", async () => {
    server.setRules(echoRules);
    const run = await codexExec("echo something", [{ name: "tiny", url: mcp.url }]);
    expect(mcp.calls, run.stderr).toEqual([{ tool: "echo_text", text: "ping" }]);
    const [first, second] = server.requests.filter((request) => request.api === "responses");
    expect(first?.normalized?.tools).toContain("mcp__tiny__echo_text");
    expect(first?.body).toMatchObject({ tools: expect.arrayContaining([expect.objectContaining({ type: "namespace", name: "mcp__tiny" })]) });
    expect(first?.reply).toMatchObject({ type: "toolCall", tool: { namespace: "mcp__tiny", callName: "echo_text" } });
    expect(second?.body).toMatchObject({ input: expect.arrayContaining([expect.objectContaining({ type: "function_call_output", call_id: "call_1" })]) });
    const text = run.events.find((event) => event.item?.type === "agent_message")?.item?.text;
    expect(text).toMatch(/^tool said: [\s\S]*echo: ping$/);
  });

  it("runs two tool calls of one reply and returns both outputs in the next request", async () => {
    server.setRules(parallelEchoRules);
    const run = await codexExec("echo twice", [{ name: "tiny", url: mcp.url }]);
    expect(mcp.calls.map((call) => call.text).sort(), run.stderr).toEqual(["one", "two"]);
    expect(parallelResults(server)).toEqual([
      { callId: "call_1", text: "echo: one" },
      { callId: "call_2", text: "echo: two" },
    ]);
  });
});

describe("Claude Agent SDK query() against the model server", () => {
  it("returns the scripted text", async () => {
    server.setRules([{ when: { api: "anthropic", requireTools: true }, reply: { text: "hello from the model server" } }]);
    const messages = await claudeQuery("say hi", false);
    expect(assistantTexts(messages)).toEqual(["hello from the model server"]);
    expect(messages.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "hello from the model server" });
    const calls = server.requests.filter((request) => request.api === "anthropic");
    expect(calls[0]).toMatchObject({ path: "/v1/messages", query: "?beta=true", body: { stream: true }, ruleIndex: 0 });
    expect(calls[0]?.normalized?.lastMessage?.text).toBe("say hi");
  });

  it("calls an MCP tool and quotes the tool_result", async () => {
    server.setRules(echoRules);
    const messages = await claudeQuery("echo something", true);
    expect(mcp.calls).toEqual([{ tool: "echo_text", text: "ping" }]);
    expect(assistantTexts(messages)).toEqual(["tool said: echo: ping"]);
    const [first] = server.requests.filter((request) => request.api === "anthropic");
    expect(first?.normalized?.tools).toContain("mcp__tiny__echo_text");
  });

  it("runs the tool_use blocks of one reply and returns both tool_results in the next request", async () => {
    server.setRules(parallelEchoRules);
    const messages = await claudeQuery("echo twice", true);
    expect(mcp.calls.map((call) => call.text).sort()).toEqual(["one", "two"]);
    expect(parallelResults(server)).toEqual([
      { callId: "call_1", text: "echo: one" },
      { callId: "call_2", text: "echo: two" },
    ]);
    expect(assistantTexts(messages)).toEqual(["tools answered"]);
  });
});
