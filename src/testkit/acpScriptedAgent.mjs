#!/usr/bin/env node
/**
 * A small, real ACP agent for tests (no Grok CLI is installable here, and the
 * generic driver's contract tests need an agent that does exactly what they
 * say). It speaks ACP v1 over stdio with the official SDK's agent() builder.
 *
 * A prompt whose text is JSON `{ "acpScript": [ ...steps ] }` runs the steps
 * in order; any other prompt is answered "Echo: <text>". Steps:
 *
 *   { "chunk": "text" }                 agent_message_chunk
 *   { "thought": "text" }               agent_thought_chunk
 *   { "toolCall": { toolCallId, title, kind?, status?, rawInput?, content?, locations? } }
 *   { "toolUpdate": { toolCallId, status?, content?, rawOutput?, title? } }
 *   { "plan": [{ content, status, priority? }] }
 *   { "commands": [{ name, description, input? }] }      available_commands_update
 *   { "permission": { toolCall, options? }, "as": "p" }     session/request_permission
 *   { "ext": { method, params }, "as": "a" }                an extension request to the client
 *   { "mcp": { tool, arguments }, "as": "r" }               calls a tool on the session's HTTP MCP server
 *   { "waitForCancel": true }           the turn ends "cancelled" when session/cancel arrives
 *   { "sleep": ms }
 *   { "stop": "end_turn" | "refusal" | ... }   the prompt's stopReason (default end_turn)
 *   { "usage": { inputTokens, outputTokens } } reported with the prompt response
 *   { "exit": code }                    the process exits at once (a crash)
 *   { "fail": { code, message, data? } } the prompt fails with this JSON-RPC error (a model API's limit)
 *
 * `{{name}}` in a chunk is replaced by the JSON of what the step saved `as`
 * that name. Environment:
 *   LOOM_ACP_AGENT_CAPS  JSON: { commands? (sent as available_commands_update right after session/new answers, as agents do), loadSession?, failLoad? (session/load fails), fork?, http?, models?: string[], modes?: string[], authMethods?: string[], requireAuth?: boolean }
 *   LOOM_ACP_AGENT_LOG   a file; one JSON line per request received ({ method, params })
 */
import { appendFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";
import { setTimeout } from "node:timers";
import { URL } from "node:url";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const caps = JSON.parse(process.env.LOOM_ACP_AGENT_CAPS ?? "{}");
const logFile = process.env.LOOM_ACP_AGENT_LOG;

/** Records what the client sent, so a test can check (for example) the MCP headers. */
function record(method, params) {
  if (logFile) appendFileSync(logFile, `${JSON.stringify({ method, params })}\n`);
}

/** sessionId → { mcpServers, cancel: (() => void) | null, history: string[] } */
const sessions = new Map();
let authenticated = false;

function newSession(params, forkedFrom) {
  if (caps.requireAuth === true && !authenticated) throw acp.RequestError.authRequired();
  const sessionId = `scripted-${randomUUID()}`;
  const history = forkedFrom === undefined ? [] : [...(sessions.get(forkedFrom)?.history ?? [])];
  sessions.set(sessionId, { mcpServers: params.mcpServers ?? [], cancel: null, cancelled: false, history });
  const response = { sessionId };
  if (Array.isArray(caps.models)) {
    response.models = { currentModelId: caps.models[0], availableModels: caps.models.map((modelId) => ({ modelId, name: modelId })) };
  }
  if (Array.isArray(caps.modes)) {
    response.modes = { currentModeId: caps.modes[0], availableModes: caps.modes.map((id) => ({ id, name: id })) };
  }
  return response;
}

function session(sessionId) {
  const found = sessions.get(sessionId);
  if (found === undefined) throw acp.RequestError.resourceNotFound(sessionId);
  return found;
}

function render(text, saved) {
  return text.replace(/\{\{(\w+)\}\}/g, (_, name) => JSON.stringify(saved[name] ?? null));
}

async function callMcp(state, tool, args) {
  const server = state.mcpServers.find((entry) => entry.type === "http");
  if (server === undefined) return { error: "no http MCP server in this session" };
  const headers = Object.fromEntries((server.headers ?? []).map((header) => [header.name, header.value]));
  const client = new Client({ name: "acp-scripted-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }));
  try {
    const result = await client.callTool({ name: tool, arguments: args ?? {} });
    const text = (result.content ?? []).filter((part) => part.type === "text").map((part) => part.text).join("\n");
    return { isError: result.isError === true, text };
  } finally {
    await client.close();
  }
}

async function runScript(ctx, sessionId, steps) {
  const state = session(sessionId);
  const saved = {};
  let stopReason = "end_turn";
  let usage;
  const update = (payload) => ctx.client.notify("session/update", { sessionId, update: payload });
  for (const step of steps) {
    if (step.chunk !== undefined) await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: render(step.chunk, saved) } });
    else if (step.thought !== undefined) await update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: step.thought } });
    else if (step.toolCall !== undefined) await update({ sessionUpdate: "tool_call", ...step.toolCall });
    else if (step.toolUpdate !== undefined) await update({ sessionUpdate: "tool_call_update", ...step.toolUpdate });
    else if (step.commands !== undefined) await update({ sessionUpdate: "available_commands_update", availableCommands: step.commands });
    else if (step.plan !== undefined) await update({ sessionUpdate: "plan", entries: step.plan.map((entry) => ({ priority: "medium", ...entry })) });
    else if (step.permission !== undefined) {
      const options = step.permission.options ?? [
        { optionId: "allow", name: "Allow", kind: "allow_once" },
        { optionId: "always", name: "Always allow", kind: "allow_always" },
        { optionId: "reject", name: "Reject", kind: "reject_once" },
      ];
      const answer = await ctx.client.request("session/request_permission", { sessionId, toolCall: step.permission.toolCall, options });
      if (step.as !== undefined) saved[step.as] = answer.outcome;
    } else if (step.ext !== undefined) {
      const answer = await ctx.client.request(step.ext.method, { sessionId, ...step.ext.params });
      if (step.as !== undefined) saved[step.as] = answer;
    } else if (step.mcp !== undefined) {
      const result = await callMcp(state, step.mcp.tool, step.mcp.arguments);
      if (step.as !== undefined) saved[step.as] = result;
    } else if (step.waitForCancel === true) {
      await new Promise((resolve) => {
        state.cancel = resolve;
        if (state.cancelled || ctx.signal.aborted) resolve();
      });
      state.cancel = null;
      return { stopReason: "cancelled" };
    } else if (step.sleep !== undefined) await new Promise((resolve) => setTimeout(resolve, step.sleep));
    else if (step.stop !== undefined) stopReason = step.stop;
    else if (step.usage !== undefined) usage = { totalTokens: step.usage.inputTokens + step.usage.outputTokens, ...step.usage };
    else if (step.exit !== undefined) process.exit(step.exit);
    else if (step.fail !== undefined) throw new acp.RequestError(step.fail.code, step.fail.message, step.fail.data);
  }
  return usage === undefined ? { stopReason } : { stopReason, usage };
}

function promptText(prompt) {
  return prompt.filter((block) => block.type === "text").map((block) => block.text).join("\n");
}

function parseScript(text) {
  try {
    const parsed = JSON.parse(text);
    return Array.isArray(parsed?.acpScript) ? parsed.acpScript : null;
  } catch {
    return null;
  }
}

const sessionCapabilities = {};
if (caps.fork === true) sessionCapabilities.fork = {};

const app = acp
  .agent({ name: "acp-scripted-agent" })
  .onRequest("initialize", ({ params }) => {
    record("initialize", params);
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentInfo: { name: "acp-scripted-agent", version: "1.0.0" },
      agentCapabilities: {
        loadSession: caps.loadSession === true,
        mcpCapabilities: { http: caps.http !== false, sse: false },
        promptCapabilities: { image: false, audio: false, embeddedContext: false },
        sessionCapabilities,
      },
      authMethods: (caps.authMethods ?? []).map((id) => ({ id, name: id })),
    };
  })
  .onRequest("authenticate", ({ params }) => {
    record("authenticate", params);
    authenticated = true;
    return {};
  })
  .onRequest("session/new", ({ params, client }) => {
    record("session/new", params);
    const response = newSession(params);
    if (Array.isArray(caps.commands)) {
      // After the answer, as agents do; a prompt arriving first waits for it, so the order is the same on a loaded machine.
      const state = session(response.sessionId);
      state.commandsSent = new Promise((resolve) => {
        setTimeout(() => {
          Promise.resolve(client.notify("session/update", { sessionId: response.sessionId, update: { sessionUpdate: "available_commands_update", availableCommands: caps.commands } })).then(resolve, resolve);
        }, 0);
      });
    }
    return response;
  })
  .onRequest("session/load", async ({ params, client }) => {
    record("session/load", params);
    if (caps.loadSession !== true) throw acp.RequestError.methodNotFound("session/load");
    if (caps.failLoad === true) throw acp.RequestError.resourceNotFound(params.sessionId);
    const state = sessions.get(params.sessionId) ?? { mcpServers: [], cancel: null, history: [] };
    state.mcpServers = params.mcpServers ?? [];
    sessions.set(params.sessionId, state);
    for (const text of state.history) {
      await client.notify("session/update", { sessionId: params.sessionId, update: { sessionUpdate: "user_message_chunk", content: { type: "text", text } } });
    }
    return {};
  })
  .onRequest("session/fork", ({ params }) => {
    record("session/fork", params);
    if (caps.fork !== true) throw acp.RequestError.methodNotFound("session/fork");
    session(params.sessionId);
    return newSession(params, params.sessionId);
  })
  .onRequest("session/set_mode", ({ params }) => {
    record("session/set_mode", params);
    return {};
  })
  .onRequest("session/set_model", (params) => params, ({ params }) => {
    record("session/set_model", params);
    return {};
  })
  .onRequest("session/prompt", async (ctx) => {
    const { params } = ctx;
    record("session/prompt", params);
    const state = session(params.sessionId);
    await state.commandsSent;
    state.cancelled = false;
    const text = promptText(params.prompt);
    state.history.push(text);
    const steps = parseScript(text);
    if (steps === null) {
      await ctx.client.notify("session/update", { sessionId: params.sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `Echo: ${text}` } } });
      return { stopReason: "end_turn" };
    }
    return runScript(ctx, params.sessionId, steps);
  })
  .onNotification("session/cancel", ({ params }) => {
    record("session/cancel", params);
    const state = sessions.get(params.sessionId);
    if (state === undefined) return;
    state.cancelled = true;
    state.cancel?.();
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
process.exit(0);
