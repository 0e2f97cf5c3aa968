import type { CanUseTool, McpServerConfig, Options, PermissionMode } from "@anthropic-ai/claude-agent-sdk";
import type { InteractionMode, RuntimeMode } from "../../contracts/modes.js";
import { AGENT_OTLP_VARIABLES } from "../../config/telemetry.js";
import { assertNever } from "../adapter.js";
import type { ClaudeOptions } from "./options.js";

/**
 * Building the SDK `query()` options for one session (pure). The Loom MCP
 * endpoint goes in `mcpServers` with the session's bearer token in its
 * headers, and nowhere else: not in the environment, not on the command line
 * (`mcpServersDelivery: "initialize"` sends it over stdin), never in a log
 * line (`describeQueryOptions` is the only thing that is logged).
 */

/** The server key agents see (spec 000, Claude Agent SDK V2). */
export const LOOM_MCP_SERVER = "t3-code";
export const LOOM_MCP_TOOLS = `mcp__${LOOM_MCP_SERVER}__*`;

export interface ClaudeSessionSettings {
  readonly cwd: string;
  readonly model: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly interactionMode: InteractionMode;
  readonly mcp: { readonly url: string; readonly token: string } | null;
  /** CLAUDE_CONFIG_DIR for this session: options.configDir, the thread's kept folder, or a per-session temp dir. */
  readonly configDir: string;
  /** Claude Code saves its sessions in configDir (persistSession), so a later session can resume them: not in a temp dir. */
  readonly persist: boolean;
  readonly options: ClaudeOptions;
  /** The Loom process's own environment (inherited by the agent, below the instance env). */
  readonly baseEnv: Readonly<Record<string, string | undefined>>;
  /** TRACEPARENT and, while Loom exports traces, the OTLP exporter variables (OpenSessionInput.traceEnvironment); secrets inside. */
  readonly traceEnvironment?: Readonly<Record<string, string>>;
  /** Whether Loom runs as root: Claude Code refuses bypassPermissions as root outside a sandbox. */
  readonly isRoot: boolean;
}

/** What the session supplies for each launch of Claude Code. */
export interface ClaudeQueryHooks {
  readonly canUseTool: CanUseTool;
  readonly abortController: AbortController;
  readonly stderr: (data: string) => void;
  /**
   * The Claude Code session id to run under (`--session-id`, a UUID), fresh
   * per launch: the session knows the native id before Claude Code reports it.
   */
  readonly sessionId: string;
  /** Continue this saved Claude Code session (`resume`) instead of starting `sessionId`. */
  readonly resume?: string | null;
  /**
   * The JSON schema every turn of this launch must answer with
   * (`outputFormat`): Claude Code then offers the model a StructuredOutput
   * tool, checks its input against the schema and ends the turn on it.
   */
  readonly outputSchema?: Readonly<Record<string, unknown>> | null;
}

/**
 * Loom's runtime mode as a Claude permission mode. Plan interaction wins: in
 * Claude's plan mode nothing is executed until the plan is approved.
 */
export function permissionModeFor(runtimeMode: RuntimeMode, interactionMode: InteractionMode): PermissionMode {
  if (interactionMode === "plan") return "plan";
  switch (runtimeMode) {
    case "approval-required":
      return "default";
    case "auto-accept-edits":
      return "acceptEdits";
    case "full-access":
      return "bypassPermissions";
    default:
      return assertNever(runtimeMode);
  }
}

/**
 * The agent's environment. The SDK's `env` replaces the child's environment,
 * so Loom's is the base. Claude Code defaults and Loom's trace context sit
 * below the instance's `env` (which may change them); CLAUDE_CONFIG_DIR is
 * always the session's. Given an OTLP endpoint, Claude Code's session
 * tracing is turned on (docs/providers/claude.md, Telemetry).
 */
export function buildEnv(settings: ClaudeSessionSettings, permissionMode: PermissionMode): Record<string, string | undefined> {
  const defaults: Record<string, string> = {
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    // Otherwise MCP tools hide behind a ToolSearch round trip.
    ENABLE_TOOL_SEARCH: "false",
    // Task* tools replace TodoWrite by default; TodoWrite's whole list maps to one todo_list item.
    CLAUDE_CODE_ENABLE_TASKS: "false",
    CLAUDE_AGENT_SDK_CLIENT_APP: "loom",
  };
  if (permissionMode === "bypassPermissions" && settings.isRoot) {
    // "--dangerously-skip-permissions cannot be used with root/sudo privileges" otherwise.
    defaults.IS_SANDBOX = "1";
  }
  const trace = settings.traceEnvironment ?? {};
  const tracing = trace[AGENT_OTLP_VARIABLES.endpoint] === undefined ? {} : CLAUDE_TRACING;
  return { ...settings.baseEnv, ...defaults, ...tracing, ...trace, ...settings.options.env, CLAUDE_CONFIG_DIR: settings.configDir };
}

/** Claude Code exports its own spans (a trace per turn, continuing TRACEPARENT) only with these. */
const CLAUDE_TRACING: Readonly<Record<string, string>> = { CLAUDE_CODE_ENABLE_TELEMETRY: "1", CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: "1" };

/** Loom's endpoint as Claude Code's MCP server config, with the session's bearer token (never log it). */
export function loomMcpServer(mcp: { readonly url: string; readonly token: string }): McpServerConfig {
  return { type: "http", url: mcp.url, headers: { Authorization: `Bearer ${mcp.token}` } };
}

export function buildQueryOptions(settings: ClaudeSessionSettings, hooks: ClaudeQueryHooks): Options {
  const permissionMode = permissionModeFor(settings.runtimeMode, settings.interactionMode);
  const options: Options = {
    cwd: settings.cwd,
    env: buildEnv(settings, permissionMode),
    persistSession: settings.persist,
    settingSources: [],
    permissionMode,
    canUseTool: hooks.canUseTool,
    abortController: hooks.abortController,
    stderr: hooks.stderr,
  };
  // `sessionId` cannot go with `resume` (unless forking): a resumed session keeps its own id.
  if (hooks.resume != null) options.resume = hooks.resume;
  else options.sessionId = hooks.sessionId;
  if (settings.model !== null) options.model = settings.model;
  if (hooks.outputSchema != null) options.outputFormat = { type: "json_schema", schema: { ...hooks.outputSchema } };
  if (permissionMode === "bypassPermissions") options.allowDangerouslySkipPermissions = true;
  if (permissionMode === "default") {
    // Claude Code runs commands it reads as harmless (echo, ls, ...) without
    // asking; approval-required means every command is approved by a person.
    options.settings = { permissions: { ask: ["Bash"] } };
  }
  if (settings.options.executablePath !== null) options.pathToClaudeCodeExecutable = settings.options.executablePath;
  if (settings.mcp !== null) {
    options.mcpServers = { [LOOM_MCP_SERVER]: loomMcpServer(settings.mcp) };
    options.mcpServersDelivery = "initialize";
    options.strictMcpConfig = true;
    options.allowedTools = [LOOM_MCP_TOOLS];
  } else {
    options.strictMcpConfig = true;
  }
  return options;
}

/**
 * A one-line summary of the options that is safe to log: it says whether
 * the Loom MCP server is configured, never its URL headers or token.
 */
export function describeQueryOptions(options: Options): string {
  const mcp = options.mcpServers?.[LOOM_MCP_SERVER] !== undefined ? "configured" : "not configured";
  const parts = [
    `permission mode ${options.permissionMode ?? "unset"}`,
    `model ${options.model ?? "default"}`,
    `Loom MCP server ${mcp}`,
    options.pathToClaudeCodeExecutable === undefined ? "bundled executable" : "custom executable",
    ...(options.outputFormat === undefined ? [] : ["output schema"]),
  ];
  return parts.join(", ");
}
