import { AGENT_OTLP_VARIABLES } from "../../config/telemetry.js";
import type { RuntimeMode } from "../../contracts/modes.js";
import { assertNever } from "../adapter.js";
import type { CodexModelProvider, CodexOptions } from "./options.js";
import type { AskForApproval, JsonValue, SandboxMode, ThreadForkParams, ThreadResumeParams, ThreadStartParams } from "./protocol.js";

/**
 * What a codex session is started with, computed without I/O: the command
 * line, the child's environment, and the per-thread config that injects
 * Loom's MCP server (spec 000, "Codex V2").
 *
 * Where the session token goes: only into the `config` of thread/start,
 * thread/resume and thread/fork, which travel over the child's stdin. It is
 * never on the command line (visible in `ps`) nor in the environment.
 */

/** The MCP server key agents see (spec 000). */
export const LOOM_MCP_SERVER = "t3-code";
/** The same endpoint again, exposing only the blocking wait as a direct tool call. */
export const LOOM_MCP_DIRECT_SERVER = "t3-code-direct";
/** Tools served by the direct entry and hidden from the main one. */
export const DIRECT_TOOLS: readonly string[] = ["t3_thread_wait"];
/**
 * Codex otherwise puts MCP tools behind Code Mode or deferred tool search;
 * the direct entry must be a plain tool call, so a wait blocks the model
 * like Codex's own wait tools do.
 */
export const DIRECT_OMIT_TOOLS_FROM: readonly string[] = ["code_mode", "deferred"];
/** Loom caps its own waits (waits.maxWaitMs); codex must not give up first (its default is 60 s). */
export const LOOM_TOOL_TIMEOUT_SEC = 600;

export interface LoomMcpEndpoint {
  readonly url: string;
  readonly token: string;
}

/** `mcp_servers` entries for Loom's endpoint: every tool but the wait, and the wait alone. */
export function loomMcpServers(mcp: LoomMcpEndpoint): Record<string, JsonValue> {
  const common = {
    url: mcp.url,
    http_headers: { Authorization: `Bearer ${mcp.token}` },
    // Loom's tools run without asking: the MCP server enforces its own policy.
    default_tools_approval_mode: "approve",
    tool_timeout_sec: LOOM_TOOL_TIMEOUT_SEC,
  };
  return {
    [LOOM_MCP_SERVER]: { ...common, disabled_tools: [...DIRECT_TOOLS] },
    [LOOM_MCP_DIRECT_SERVER]: { ...common, enabled_tools: [...DIRECT_TOOLS], omit_tools_from: [...DIRECT_OMIT_TOOLS_FROM] },
  };
}

/** The `config` override map of a thread request (codex merges it over config.toml and -c flags). */
export function threadConfig(mcp: LoomMcpEndpoint | null): Record<string, JsonValue> | null {
  return mcp === null ? null : { mcp_servers: loomMcpServers(mcp) };
}

export interface RuntimePolicy {
  readonly approvalPolicy: AskForApproval;
  readonly sandbox: SandboxMode;
}

/**
 * Loom's runtime mode as codex's approval policy and sandbox:
 * - approval-required: "untrusted" asks before every command that is not
 *   known read-only and before every file change; what is approved runs in
 *   the workspace-write sandbox (a read-only sandbox would make an approved
 *   edit fail).
 * - auto-accept-edits: "on-request" in workspace-write: edits inside the
 *   workspace and sandboxed commands run without asking; leaving the sandbox
 *   (network, other folders) asks.
 * - full-access: "never" asks, no sandbox.
 */
export function runtimePolicy(mode: RuntimeMode): RuntimePolicy {
  switch (mode) {
    case "approval-required":
      return { approvalPolicy: "untrusted", sandbox: "workspace-write" };
    case "auto-accept-edits":
      return { approvalPolicy: "on-request", sandbox: "workspace-write" };
    case "full-access":
      return { approvalPolicy: "never", sandbox: "danger-full-access" };
    default:
      return assertNever(mode);
  }
}

export interface ThreadSettings {
  readonly cwd: string;
  /** Null: codex's default (or the config's `model`). */
  readonly model: string | null;
  readonly runtimeMode: RuntimeMode;
  readonly mcp: LoomMcpEndpoint | null;
}

function threadOverrides(settings: ThreadSettings) {
  const policy = runtimePolicy(settings.runtimeMode);
  return {
    cwd: settings.cwd,
    model: settings.model,
    approvalPolicy: policy.approvalPolicy,
    sandbox: policy.sandbox,
    config: threadConfig(settings.mcp),
  };
}

export function threadStartParams(settings: ThreadSettings): ThreadStartParams {
  return threadOverrides(settings);
}

/** Resuming re-injects the MCP server: a resumed thread keeps no config of its own (spec 000). */
export function threadResumeParams(threadId: string, settings: ThreadSettings): ThreadResumeParams {
  return { threadId, ...threadOverrides(settings), excludeTurns: true };
}

export function threadForkParams(threadId: string, settings: ThreadSettings): ThreadForkParams {
  return { threadId, ...threadOverrides(settings), excludeTurns: true };
}

/** A TOML basic string: JSON's escapes are valid TOML for every string JSON.stringify writes. */
export function tomlString(value: string): string {
  return JSON.stringify(value);
}

/** `-c key=value` flags for a custom model provider (REAL-AGENTS.md, codex row). */
export function modelProviderFlags(provider: CodexModelProvider): string[] {
  const key = `model_providers.${provider.id}`;
  const pairs: [string, string][] = [
    ["model_provider", tomlString(provider.id)],
    [`${key}.name`, tomlString(provider.name)],
    [`${key}.base_url`, tomlString(provider.baseUrl)],
    ...(provider.envKey === null ? [] : ([[`${key}.env_key`, tomlString(provider.envKey)]] as [string, string][])),
    [`${key}.wire_api`, tomlString(provider.wireApi)],
    [`${key}.supports_websockets`, "false"],
    // Loom reports a failed turn; codex retrying a local endpoint only hides the failure.
    [`${key}.request_max_retries`, "0"],
    [`${key}.stream_max_retries`, "0"],
  ];
  return pairs.flatMap(([name, value]) => ["-c", `${name}=${value}`]);
}

/** Arguments after the executable: `app-server` and config flags. Never holds a secret. */
export function appServerArgs(options: CodexOptions): string[] {
  return ["app-server", "-c", "check_for_update_on_startup=false", ...(options.modelProvider === null ? [] : modelProviderFlags(options.modelProvider))];
}

/**
 * The child's environment: Loom's own, Loom's trace context (TRACEPARENT,
 * and the OTLP exporter variables while Loom exports traces), the
 * instance's `env` on top, and CODEX_HOME. Loom's MCP token is not in it.
 */
export function appServerEnv(options: CodexOptions, base: NodeJS.ProcessEnv, codexHome: string, trace: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return { ...base, ...trace, ...options.env, CODEX_HOME: codexHome };
}

/** codex's name for an OTLP/HTTP encoding. */
const CODEX_OTLP_PROTOCOL: Readonly<Record<string, string>> = { "http/protobuf": "binary", "http/json": "json" };

/**
 * `-c otel.trace_exporter=...` when Loom exports traces: codex exports its
 * own spans only when its config names an exporter. The endpoint and the
 * encoding go on the command line; the headers (secrets) stay in the
 * environment (OTEL_EXPORTER_OTLP_TRACES_HEADERS), which codex's OTLP
 * exporter reads itself.
 */
export function otelTraceFlags(trace: Readonly<Record<string, string>>): string[] {
  const endpoint = trace[AGENT_OTLP_VARIABLES.endpoint];
  if (endpoint === undefined) return [];
  const protocol = CODEX_OTLP_PROTOCOL[trace[AGENT_OTLP_VARIABLES.protocol] ?? "http/protobuf"] ?? "binary";
  return ["-c", `otel.trace_exporter={ otlp-http = { endpoint = ${tomlString(endpoint)}, protocol = ${tomlString(protocol)} } }`];
}
