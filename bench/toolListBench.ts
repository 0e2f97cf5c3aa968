import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, gzipSync } from "node:zlib";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import { startModelServer } from "../src/modelServer/server.js";
import { type LoomServer, startLoomServer } from "../src/server/loomServer.js";
import { fmt, printTable } from "./stats.js";

/**
 * What tools/list costs: the bytes of the answer an agent's MCP client reads
 * (raw HTTP body, identity encoding), split by part, and the bytes a model
 * pays for each request (Claude Code sends a tool as name, description and
 * input schema; outputSchema never reaches the model). Each variant of the
 * listing is derived from the very listing this run received, so the ratios
 * compare like with like:
 * - the failure envelope held once per tool under `$defs` and referenced by
 *   `$ref` (MCP resolves `$ref` within one tool's schema only, so no
 *   definition can be shared across tools);
 * - no failure branch at all (the most any sharing of the envelope could save);
 * - the least outputSchema that admits both shapes (any object, or a bare envelope);
 * - no outputSchema at all (the floor of the listing);
 * - the full listing under gzip and brotli (Node's zlib, default levels).
 * Then the same for a core-profile credential (docs/mcp.md, "Tool profiles"),
 * and the model-facing bytes as a real Claude Code (the Agent SDK's bundled
 * executable) sends them: one Loom thread on the claude driver against the
 * scripted model server, whose log holds the request body; Loom's tools
 * against Claude Code's own orchestration tools in that same request, once
 * on an instance of the full profile and once on one of the core profile.
 */

const MODEL_TOOL_PREFIX = "mcp__t3-code__";
/** Claude Code's own tools for delegating and steering agents. */
const CLAUDE_ORCHESTRATION_TOOLS = ["Agent", "Workflow", "SendMessage", "TaskStop", "ListAgents"];

type ListedOutputSchema = { anyOf: [Record<string, unknown>, Record<string, unknown>] } & Record<string, unknown>;

function bytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

function failureShared(tool: Tool): Tool {
  const output = tool.outputSchema as unknown as ListedOutputSchema;
  const [success, failure] = output.anyOf;
  return { ...tool, outputSchema: { type: "object", anyOf: [success, { $ref: "#/$defs/failure" }], $defs: { failure } } };
}

function withoutFailure(tool: Tool): Tool {
  return { ...tool, outputSchema: { type: "object", ...(tool.outputSchema as unknown as ListedOutputSchema).anyOf[0] } };
}

/** The least an outputSchema admitting both shapes can say: any object, or an `{ error }` with the failure's fields. */
const MINIMAL_OUTPUT_SCHEMA = {
  type: "object",
  anyOf: [
    { type: "object" },
    {
      type: "object",
      properties: { error: { type: "object", properties: { code: { type: "string" }, message: { type: "string" }, retryable: { type: "boolean" } }, required: ["code", "message", "retryable"] } },
      required: ["error"],
    },
  ],
};

function minimalOutput(tool: Tool): Tool {
  return { ...tool, outputSchema: MINIMAL_OUTPUT_SCHEMA as Tool["outputSchema"] };
}

function withoutOutput(tool: Tool): Tool {
  const { outputSchema: _dropped, ...rest } = tool;
  return rest;
}

/** A tool as Claude Code puts it in a model request. */
function modelFacing(tool: Tool): Record<string, unknown> {
  return { name: `${MODEL_TOOL_PREFIX}${tool.name}`, description: tool.description, input_schema: tool.inputSchema };
}

/** One JSON-RPC request on an open session; the raw body text (JSON or an SSE frame). */
async function rawPost(url: string, token: string, sessionId: string | null, body: unknown): Promise<{ text: string; sessionId: string | null }> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      accept: "application/json, text/event-stream",
      "accept-encoding": "identity",
      "content-type": "application/json",
      ...(sessionId === null ? {} : { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" }),
    },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`MCP ${JSON.stringify(body).slice(0, 60)} answered HTTP ${response.status}`);
  return { text: await response.text(), sessionId: response.headers.get("mcp-session-id") ?? sessionId };
}

async function rawToolsListBytes(url: string, token: string): Promise<number> {
  const init = await rawPost(url, token, null, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "loom-bench", version: "1.0.0" } },
  });
  if (init.sessionId === null) throw new Error("MCP initialize answered no session id");
  await rawPost(url, token, init.sessionId, { jsonrpc: "2.0", method: "notifications/initialized" });
  const listed = await rawPost(url, token, init.sessionId, { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
  if (!listed.text.includes('"tools"')) throw new Error("tools/list answered no tools");
  return Buffer.byteLength(listed.text);
}

export async function runToolListBench(): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-tools-"));
  const server = await startLoomServer({ stateDir, cwd: stateDir });
  const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
  const client = await LoomMcpClient.connect(server.mcpUrl, token, "loom-bench");
  try {
    const tools = await client.listTools();
    const wire = await rawToolsListBytes(server.mcpUrl, token);
    const list = (listed: readonly Tool[]) => bytes({ tools: listed });
    const full = list(tools);
    const outputs = tools.reduce((sum, tool) => sum + bytes(tool.outputSchema), 0);
    const envelopes = tools.reduce((sum, tool) => sum + bytes((tool.outputSchema as unknown as ListedOutputSchema).anyOf[1]), 0);
    const inputs = tools.reduce((sum, tool) => sum + bytes(tool.inputSchema), 0);
    const descriptions = tools.reduce((sum, tool) => sum + Buffer.byteLength(tool.description ?? ""), 0);
    const text = JSON.stringify({ tools });
    const ratio = (n: number) => (n / full).toFixed(3);
    printTable(`tools/list of ${tools.length} tools (owner; raw HTTP body ${fmt(wire)} B, identity encoding)`, [
      ["listing", "bytes", "ratio"],
      ["as served (baseline)", fmt(full), "1.000"],
      ["failure envelope once per tool under $defs, by $ref", fmt(list(tools.map(failureShared))), ratio(list(tools.map(failureShared)))],
      ["no failure branch (bound on any envelope sharing)", fmt(list(tools.map(withoutFailure))), ratio(list(tools.map(withoutFailure)))],
      ["least outputSchema admitting both shapes", fmt(list(tools.map(minimalOutput))), ratio(list(tools.map(minimalOutput)))],
      ["no outputSchema (floor)", fmt(list(tools.map(withoutOutput))), ratio(list(tools.map(withoutOutput)))],
      ["as served, gzip", fmt(gzipSync(text).length), ratio(gzipSync(text).length)],
      ["as served, brotli", fmt(brotliCompressSync(text).length), ratio(brotliCompressSync(text).length)],
    ]);
    const model = tools.reduce((sum, tool) => sum + bytes(modelFacing(tool)), 0);
    printTable("tools/list by part", [
      ["part", "bytes", "share"],
      ["output schemas", fmt(outputs), ratio(outputs)],
      ["  of which the failure envelope", fmt(envelopes), ratio(envelopes)],
      ["input schemas", fmt(inputs), ratio(inputs)],
      ["descriptions", fmt(descriptions), ratio(descriptions)],
      ["model-facing (name, description, input schema per tool)", fmt(model), ratio(model)],
    ]);
    await printCoreListing(server, tools);
  } finally {
    await client.close();
    await server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
  await printClaudeRequest();
}

/** tools/list for a core-profile agent credential against the owner's (full) listing. */
async function printCoreListing(server: LoomServer, full: readonly Tool[]): Promise<void> {
  const credential = await server.credentials.issue(
    { environmentId: server.environmentId, threadId: "thread:bench-core", providerInstanceId: "scripted", providerSessionId: "provider-session:bench-core" },
    { toolProfile: "core" },
  );
  const client = await LoomMcpClient.connect(server.mcpUrl, credential.token, "loom-bench-core");
  try {
    const core = await client.listTools();
    const model = (listed: readonly Tool[]) => listed.reduce((sum, tool) => sum + bytes(modelFacing(tool)), 0);
    const discovery = core.filter((tool) => tool.name === "loom_tools");
    printTable(`tools/list by tool profile (core: ${core.map((tool) => tool.name).join(", ")})`, [
      ["profile", "tools", "listing bytes", "model-facing bytes", "model-facing ratio"],
      ["full (owner; baseline)", String(full.length), fmt(bytes({ tools: full })), fmt(model(full)), "1.000"],
      ["core", String(core.length), fmt(bytes({ tools: core })), fmt(model(core)), (model(core) / model(full)).toFixed(3)],
      ["  of which loom_tools", String(discovery.length), fmt(bytes({ tools: discovery })), fmt(model(discovery)), (model(discovery) / model(full)).toFixed(3)],
    ]);
  } finally {
    await client.close();
  }
}

/** The `tools` of the first model request a real Claude Code under Loom sends, on an instance of the given tool profile. */
async function claudeRequestTools(toolProfile: "core" | "full"): Promise<readonly { name: string }[]> {
  const model = await startModelServer({ rules: [{ reply: { text: "done" } }] });
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-tools-claude-"));
  const configPath = join(stateDir, "config.json");
  writeFileSync(configPath, JSON.stringify({ providers: [{ id: "claude", driver: "claude", toolProfile, options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } }] }));
  const server = await startLoomServer({ stateDir, cwd: stateDir, configPath });
  const client = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim(), "loom-bench");
  try {
    const launched = await client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { message: "Say done.", title: "bench tools", target: { providerInstanceId: "claude" } });
    for (;;) {
      const waited = await client.ok<{ status: string; waitTimedOut: boolean }>("t3_thread_wait", { threadId: launched.threadId, runId: launched.runId });
      if (waited.waitTimedOut) continue;
      if (waited.status !== "completed") throw new Error(`the Claude thread ended ${waited.status}`);
      break;
    }
    const body = model.requests.map((request) => request.body as { tools?: { name: string }[] } | undefined).find((b) => Array.isArray(b?.tools));
    if (body?.tools === undefined) throw new Error("Claude Code sent no model request with tools");
    return body.tools;
  } finally {
    await client.close();
    await server.close();
    await model.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function printClaudeRequest(): Promise<void> {
  const full = await claudeRequestTools("full");
  const core = await claudeRequestTools("core");
  const sum = (picked: readonly { name: string }[]) => picked.reduce((total, tool) => total + bytes(tool), 0);
  const loomOf = (tools: readonly { name: string }[]) => tools.filter((tool) => tool.name.startsWith(MODEL_TOOL_PREFIX));
  const own = full.filter((tool) => CLAUDE_ORCHESTRATION_TOOLS.includes(tool.name));
  if (loomOf(full).length === 0 || loomOf(core).length === 0 || own.length === 0) {
    throw new Error(`the Claude request lacks Loom's tools or its own (${full.map((tool) => tool.name).join(", ")})`);
  }
  const baseline = sum(own);
  const row = (label: string, tools: readonly { name: string }[]) => [label, String(tools.length), fmt(sum(tools)), (sum(tools) / baseline).toFixed(2)];
  printTable("Tool definitions in a real Claude Code model request (the first one of a Loom thread on the claude driver)", [
    ["tools", "count", "bytes", "ratio"],
    row(`Claude Code's own orchestration tools (${CLAUDE_ORCHESTRATION_TOOLS.join(", ")}; baseline)`, own),
    row("Loom's tools, full profile", loomOf(full)),
    row("Loom's tools, core profile", loomOf(core)),
    row("every tool in the request, full profile", full),
    row("every tool in the request, core profile", core),
  ]);
}
