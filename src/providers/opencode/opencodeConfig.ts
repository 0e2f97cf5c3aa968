import type { InteractionMode, RuntimeMode } from "../../contracts/modes.js";
import type { OpencodeOptions } from "./options.js";

/**
 * What `opencode serve` is started with (pure): the opencode.json Loom
 * writes for one session, and the process environment. Loom's MCP server is
 * a remote MCP server named `t3-code`; its bearer token reaches OpenCode
 * only through the environment variable the header names
 * (`{env:LOOM_MCP_TOKEN}`), so the file on disk holds no secret.
 */

export const LOOM_MCP_SERVER = "t3-code";
/** The variable OpenCode substitutes into the Authorization header. */
export const MCP_TOKEN_ENV = "LOOM_MCP_TOKEN";
/** HTTP basic auth of the opencode server (user "opencode"); random per session. */
export const SERVER_PASSWORD_ENV = "OPENCODE_SERVER_PASSWORD";
export const SERVER_USERNAME = "opencode";

export interface SessionConfigInput {
  readonly options: OpencodeOptions;
  readonly runtimeMode: RuntimeMode;
  /** "provider/model", or null for OpenCode's default. */
  readonly model: string | null;
  readonly mcp: { readonly url: string } | null;
}

type PermissionAction = "allow" | "ask" | "deny";

/**
 * OpenCode's permission rules per runtime mode. Loom's own tools never ask:
 * their calls are Loom operations with their own policy.
 */
export function permissionRules(runtimeMode: RuntimeMode): Record<string, PermissionAction> {
  const ask = (allowed: boolean): PermissionAction => (allowed ? "allow" : "ask");
  const edits = runtimeMode !== "approval-required";
  const everything = runtimeMode === "full-access";
  return {
    edit: ask(edits),
    bash: ask(everything),
    webfetch: ask(everything),
    external_directory: ask(everything),
    doom_loop: ask(everything),
    [`${LOOM_MCP_SERVER}_*`]: "allow",
  };
}

/** The agent a prompt runs with: OpenCode's read-only `plan` agent, or `build`. */
export function agentFor(interactionMode: InteractionMode): "plan" | "build" {
  return interactionMode === "plan" ? "plan" : "build";
}

/** "provider/model" split at the first slash; null when it has none. */
export function splitModel(model: string): { providerID: string; modelID: string } | null {
  const slash = model.indexOf("/");
  if (slash <= 0 || slash === model.length - 1) return null;
  return { providerID: model.slice(0, slash), modelID: model.slice(slash + 1) };
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The opencode.json of one session: the instance's extra config under Loom's keys. */
export function sessionConfig(input: SessionConfigInput): Record<string, unknown> {
  const { options } = input;
  const extra = options.config;
  const providers = { ...asRecord(extra.provider) };
  const custom = options.modelProvider;
  if (custom !== null) {
    const models = options.models.flatMap((model) => {
      const split = splitModel(model);
      return split !== null && split.providerID === custom.id ? [split.modelID] : [];
    });
    providers[custom.id] = {
      npm: custom.npm,
      name: custom.id,
      options: { baseURL: custom.baseUrl, ...(custom.envKey === null ? { apiKey: "loom" } : { apiKey: `{env:${custom.envKey}}` }) },
      models: Object.fromEntries(models.map((id) => [id, { name: id, tool_call: true }])),
    };
  }
  const mcp = { ...asRecord(extra.mcp) };
  if (input.mcp !== null) {
    mcp[LOOM_MCP_SERVER] = {
      type: "remote",
      url: input.mcp.url,
      headers: { Authorization: `Bearer {env:${MCP_TOKEN_ENV}}` },
      oauth: false,
      enabled: true,
      timeout: options.mcpTimeoutMs,
    };
  }
  const model = input.model ?? (typeof extra.model === "string" ? extra.model : null);
  return {
    $schema: "https://opencode.ai/config.json",
    ...extra,
    autoupdate: false,
    share: "disabled",
    ...(model === null ? {} : { model, small_model: typeof extra.small_model === "string" ? extra.small_model : model }),
    ...(Object.keys(providers).length === 0 ? {} : { provider: providers }),
    ...(Object.keys(mcp).length === 0 ? {} : { mcp }),
    permission: { ...asRecord(extra.permission), ...permissionRules(input.runtimeMode) },
  };
}

export interface SessionEnvInput {
  readonly options: OpencodeOptions;
  readonly baseEnv: NodeJS.ProcessEnv;
  readonly home: string;
  readonly configPath: string;
  readonly password: string;
  readonly mcpToken: string | null;
}

/**
 * The environment of `opencode serve`: Loom's own, the instance's `env`, a
 * HOME and XDG dirs of the session's own (so sessions never share OpenCode's
 * state, auth or caches), no network fetches at start.
 */
export function sessionEnv(input: SessionEnvInput): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...input.baseEnv, ...input.options.env };
  // A token of an enclosing Loom session must not leak into this one.
  delete env[MCP_TOKEN_ENV];
  return {
    ...env,
    HOME: input.home,
    XDG_CONFIG_HOME: `${input.home}/.config`,
    XDG_DATA_HOME: `${input.home}/.local/share`,
    XDG_CACHE_HOME: `${input.home}/.cache`,
    XDG_STATE_HOME: `${input.home}/.local/state`,
    OPENCODE_CONFIG: input.configPath,
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    [SERVER_PASSWORD_ENV]: input.password,
    ...(input.mcpToken === null ? {} : { [MCP_TOKEN_ENV]: input.mcpToken }),
  };
}

/** The Authorization header for the opencode server's basic auth. */
export function basicAuthHeader(password: string): string {
  return `Basic ${Buffer.from(`${SERVER_USERNAME}:${password}`).toString("base64")}`;
}
