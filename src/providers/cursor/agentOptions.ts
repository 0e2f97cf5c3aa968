import type { AgentOptions, McpServerConfig, SDKCustomTool, SendOptions } from "@cursor/sdk";
import type { InteractionMode, RuntimeMode } from "../../contracts/modes.js";
import type { CursorOptions } from "./options.js";

/**
 * What the SDK is called with (pure). Loom's MCP endpoint is the http MCP
 * server `t3-code` with the session's bearer token in its Authorization
 * header, on Agent.create and on every send (spec 000, "Cursor Agent SDK
 * V2"). Only `describeAgentOptions` output may be logged: it names the
 * header, never its value.
 */

export const LOOM_MCP_SERVER = "t3-code";
/** Built-in tools a narrower runtime mode than full-access removes (Cursor has no approval callback). */
export const WRITE_TOOLS = ["shell", "edit", "delete"] as const;

export interface AgentOptionsInput {
  readonly options: CursorOptions;
  readonly apiKey: string | null;
  readonly model: string;
  readonly cwd: string;
  readonly mcp: { readonly url: string; readonly token: string } | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  readonly customTools: Record<string, SDKCustomTool>;
}

export function loomMcpServers(mcp: AgentOptionsInput["mcp"]): Record<string, McpServerConfig> | undefined {
  return mcp === null ? undefined : { [LOOM_MCP_SERVER]: { type: "http", url: mcp.url, headers: { Authorization: `Bearer ${mcp.token}` } } };
}

export function agentOptions(input: AgentOptionsInput): AgentOptions {
  const mcpServers = loomMcpServers(input.mcp);
  return {
    ...(input.apiKey === null ? {} : { apiKey: input.apiKey }),
    model: { id: input.model },
    name: "Loom",
    mode: input.interactionMode === "plan" ? "plan" : "agent",
    ...(input.runtimeMode === "full-access" ? {} : { disallowedTools: [...WRITE_TOOLS] }),
    ...(mcpServers === undefined ? {} : { mcpServers }),
    local: {
      cwd: input.cwd,
      settingSources: [...input.options.settingSources],
      ...(input.options.sandbox ? { sandboxOptions: { enabled: true } } : {}),
      customTools: input.customTools,
    },
  };
}

export function sendOptions(input: Pick<AgentOptionsInput, "mcp" | "interactionMode">): SendOptions {
  const mcpServers = loomMcpServers(input.mcp);
  return { mode: input.interactionMode === "plan" ? "plan" : "agent", ...(mcpServers === undefined ? {} : { mcpServers }) };
}

/** The options as a log line may show them: which MCP servers and header names, never the key or the token. */
export function describeAgentOptions(options: AgentOptions | SendOptions): Record<string, unknown> {
  const described: Record<string, unknown> = {};
  if ("apiKey" in options) described.apiKey = options.apiKey === undefined ? "absent" : "[redacted]";
  if ("model" in options && options.model !== undefined) described.model = options.model.id;
  if (options.mode !== undefined) described.mode = options.mode;
  if ("disallowedTools" in options && options.disallowedTools !== undefined) described.disallowedTools = options.disallowedTools;
  if ("local" in options && options.local !== undefined && "cwd" in options.local) {
    described.local = { cwd: options.local.cwd, settingSources: options.local.settingSources, customTools: Object.keys(options.local.customTools ?? {}) };
  }
  described.mcpServers = Object.fromEntries(
    Object.entries(options.mcpServers ?? {}).map(([name, server]) => [name, "url" in server ? { type: server.type ?? "http", url: server.url, headers: Object.keys(server.headers ?? {}) } : { type: "stdio" }]),
  );
  return described;
}
