import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

/**
 * Loom's Pi extension (spec 000, "Pi V2"). The pi driver copies this file
 * into Loom's cache and starts `pi --mode rpc --extension <it>`; it runs
 * inside Pi, so it imports nothing but node:* (and Pi's types, erased).
 *
 * - Loom's MCP tools: registered as `mcp__t3-code__<tool>`, each calling the
 *   original tool over Streamable HTTP at T3_MCP_URL with T3_MCP_BEARER_TOKEN
 *   (read from the environment, then removed from it so Pi's shell commands
 *   never inherit it). Follow-up requests carry `mcp-protocol-version`.
 *   Calls have no timeout of their own: Loom caps its waits and sends
 *   progress, and Pi's cancellation (the tool's AbortSignal) ends the call.
 *   Each tool also gets a hidden alias `mcp__t3_code__<tool>`: registered
 *   (so the normalized name is taken) but kept out of Pi's active tools at
 *   session start, so the model is offered only the public names.
 * - Approvals: tools named in T3_PI_APPROVAL (bash, edit, write) ask first
 *   through `ctx.ui.confirm`, which Pi's RPC mode hands to Loom; the title
 *   starts with `[loom:command]` or `[loom:file-change]`.
 * - T3_PI_READ_ONLY=1 (plan mode): only read-only built-in tools and Loom's.
 * - T3_ORCHESTRATION_INSTRUCTIONS: appended to the system prompt of every turn, the first included.
 *
 * Pi loads extensions through their default export, hence the one default
 * export in the codebase.
 */

const PROTOCOL_VERSION = "2025-06-18";
const TOOL_PREFIX = "mcp__t3-code__";
/** The normalized namespace, reserved by hidden aliases. */
const ALIAS_PREFIX = "mcp__t3_code__";
const READ_ONLY_TOOLS = ["read", "grep", "find", "ls"];

interface JsonRpcMessage {
  readonly jsonrpc?: string;
  readonly id?: number | string;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string };
}

interface McpTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: Record<string, unknown>;
}

interface McpCallResult {
  readonly content?: readonly { readonly type: string; readonly text?: string }[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: boolean;
}

class McpHttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** A minimal Streamable HTTP MCP client: JSON or SSE answers, one session, re-opened once when Loom forgot it. */
class LoomMcpClient {
  private sessionId: string | null = null;
  private nextId = 1;

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  async listTools(): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const result = await this.call("tools/list", cursor === undefined ? {} : { cursor });
      tools.push(...((result.tools as McpTool[] | undefined) ?? []));
      cursor = typeof result.nextCursor === "string" ? result.nextCursor : undefined;
    } while (cursor !== undefined);
    return tools;
  }

  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal | undefined, onProgress: (message: string) => void): Promise<McpCallResult> {
    const token = `pi-${this.nextId}`;
    return (await this.call("tools/call", { name, arguments: args, _meta: { progressToken: token } }, signal, onProgress));
  }

  private async call(method: string, params: Record<string, unknown>, signal?: AbortSignal, onProgress?: (message: string) => void): Promise<Record<string, unknown>> {
    if (this.sessionId === null) await this.initialize();
    try {
      return await this.rpc(method, params, signal, onProgress);
    } catch (error) {
      // Loom restarted or expired the MCP session: open a new one and try once more.
      if (!(error instanceof McpHttpError) || error.status !== 404 || signal?.aborted === true) throw error;
      this.sessionId = null;
      await this.initialize();
      return this.rpc(method, params, signal, onProgress);
    }
  }

  private async initialize(): Promise<void> {
    const { headers } = await this.post({ jsonrpc: "2.0", id: this.nextId++, method: "initialize", params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "loom-pi-bridge", version: "1.0.0" } } });
    const id = headers["mcp-session-id"];
    this.sessionId = typeof id === "string" ? id : null;
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  private async rpc(method: string, params: Record<string, unknown>, signal?: AbortSignal, onProgress?: (message: string) => void): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const { answer } = await this.post({ jsonrpc: "2.0", id, method, params }, signal, onProgress, id);
    if (answer === null) throw new Error(`${method}: no answer from Loom`);
    if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.message}`);
    return answer.result ?? {};
  }

  /** One POST; resolves with the answer to `id` (JSON body or SSE stream), reporting progress on the way. */
  private post(message: JsonRpcMessage, signal?: AbortSignal, onProgress?: (message: string) => void, id?: number): Promise<{ headers: IncomingMessage["headers"]; answer: JsonRpcMessage | null }> {
    const body = JSON.stringify(message);
    const target = new URL(this.url);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${this.token}`,
      "content-length": String(Buffer.byteLength(body)),
    };
    if (this.sessionId !== null) {
      headers["mcp-session-id"] = this.sessionId;
      headers["mcp-protocol-version"] = PROTOCOL_VERSION;
    }
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(target, { method: "POST", headers, ...(signal === undefined ? {} : { signal }) }, (res) => {
        const status = res.statusCode ?? 0;
        let text = "";
        let answer: JsonRpcMessage | null = null;
        let buffer = "";
        const sse = (res.headers["content-type"] ?? "").includes("text/event-stream");
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          if (!sse) {
            text += chunk;
            return;
          }
          buffer += chunk.replace(/\r\n/g, "\n");
          let end: number;
          while ((end = buffer.indexOf("\n\n")) !== -1) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = event
              .split("\n")
              .filter((line) => line.startsWith("data:"))
              .map((line) => line.slice(5).trimStart())
              .join("\n");
            if (data === "") continue;
            const parsed = JSON.parse(data) as JsonRpcMessage;
            if (parsed.method === "notifications/progress" && onProgress !== undefined) {
              const note = parsed.params?.message;
              const progress = parsed.params?.progress;
              onProgress(typeof note === "string" ? note : `progress ${typeof progress === "number" ? progress : 0}`);
            } else if (parsed.id !== undefined && parsed.id === id) {
              answer = parsed;
              res.destroy();
              resolve({ headers: res.headers, answer });
            }
          }
        });
        res.on("end", () => {
          if (status >= 400) return reject(new McpHttpError(`Loom's MCP endpoint answered ${status}: ${text.slice(0, 300)}`, status));
          if (!sse && text.trim() !== "") answer = JSON.parse(text) as JsonRpcMessage;
          resolve({ headers: res.headers, answer });
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(body);
    });
  }
}

function resultText(result: McpCallResult): string {
  const text = (result.content ?? []).flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : [])).join("\n");
  return text !== "" ? text : JSON.stringify(result.structuredContent ?? {});
}

function approvalTitle(toolName: string, input: Record<string, unknown>): string {
  if (toolName === "bash") return `[loom:command] Run ${typeof input.command === "string" ? input.command : JSON.stringify(input)}`;
  const path = typeof input.path === "string" ? input.path : typeof input.file_path === "string" ? input.file_path : "a file";
  return `[loom:file-change] ${toolName === "write" ? "Write" : "Edit"} ${path}`;
}

export default async function loomPiBridge(pi: ExtensionAPI): Promise<void> {
  const url = process.env.T3_MCP_URL;
  const token = process.env.T3_MCP_BEARER_TOKEN;
  const instructions = process.env.T3_ORCHESTRATION_INSTRUCTIONS;
  const gated = new Set((process.env.T3_PI_APPROVAL ?? "").split(",").filter((name) => name !== ""));
  const readOnly = process.env.T3_PI_READ_ONLY === "1";
  delete process.env.T3_MCP_BEARER_TOKEN;
  delete process.env.T3_ORCHESTRATION_INSTRUCTIONS;

  if (gated.size > 0) {
    pi.on("tool_call", async (event, ctx) => {
      if (!gated.has(event.toolName)) return undefined;
      const input = event.input as Record<string, unknown>;
      const ok = await ctx.ui.confirm(approvalTitle(event.toolName, input), JSON.stringify(input, null, 2));
      return ok ? undefined : { block: true, reason: "Declined through Loom" };
    });
  }

  const names: string[] = [];
  const aliases = new Set<string>();
  if (url !== undefined && url !== "" && token !== undefined && token !== "") {
    const client = new LoomMcpClient(url, token);
    let tools: McpTool[] = [];
    try {
      tools = await client.listTools();
    } catch (error) {
      process.stderr.write(`loom bridge: could not list Loom's MCP tools: ${(error as Error).message}\n`);
    }
    for (const tool of tools) {
      const name = `${TOOL_PREFIX}${tool.name}`;
      names.push(name);
      const alias = `${ALIAS_PREFIX}${tool.name}`;
      aliases.add(alias);
      for (const registered of [name, alias]) {
        pi.registerTool({
          name: registered,
          label: tool.name,
          description: tool.description ?? tool.name,
          parameters: (tool.inputSchema ?? { type: "object", properties: {} }),
          async execute(_toolCallId, params, signal, onUpdate) {
            const result = await client.callTool(tool.name, params as Record<string, unknown>, signal, (message) => onUpdate?.({ content: [{ type: "text", text: message }], details: {} }));
            const text = resultText(result);
            if (result.isError === true) throw new Error(text);
            return { content: [{ type: "text", text }], details: result.structuredContent ?? {} };
          },
        });
      }
    }
  }

  // Pi activates every registered tool: the aliases are taken out again before the first turn.
  pi.on("session_start", () => {
    if (readOnly) pi.setActiveTools([...READ_ONLY_TOOLS, ...names]);
    else if (aliases.size > 0) pi.setActiveTools(pi.getActiveTools().filter((name) => !aliases.has(name)));
  });

  if (instructions !== undefined && instructions !== "") {
    // In the system prompt of every turn (the first included): a stable prefix keeps the model's prompt cache warm.
    pi.on("before_agent_start", (event) => ({ systemPrompt: `${event.systemPrompt}\n\n${instructions}` }));
  }
}
