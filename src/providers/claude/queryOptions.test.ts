import type { Options } from "@anthropic-ai/claude-agent-sdk";
import { describe, expect, it } from "vitest";
import type { RuntimeMode } from "../../contracts/modes.js";
import { parseClaudeOptions } from "./options.js";
import type { ClaudeSessionSettings } from "./queryOptions.js";
import { buildQueryOptions, describeQueryOptions, permissionModeFor } from "./queryOptions.js";

const TOKEN = "tok_5f0c1d9e2b7a4c3e8d6f0a1b2c3d4e5f";
const URL = "http://127.0.0.1:4321/mcp";

function settings(overrides: Partial<ClaudeSessionSettings> = {}, options: Record<string, unknown> = {}): ClaudeSessionSettings {
  return {
    cwd: "/work/project",
    model: "claude-sonnet-4-5",
    runtimeMode: "approval-required",
    interactionMode: "default",
    mcp: { url: URL, token: TOKEN },
    configDir: "/tmp/loom-claude-x",
    persist: false,
    options: parseClaudeOptions({ id: "claude", driver: "claude", enabled: true, displayName: null, models: null, options }),
    baseEnv: { PATH: "/usr/bin", HOME: "/root", CLAUDE_CONFIG_DIR: "/root/.claude" },
    isRoot: false,
    ...overrides,
  };
}

const hooks = {
  canUseTool: () => Promise.resolve({ behavior: "allow" as const }),
  abortController: new AbortController(),
  stderr: () => undefined,
  sessionId: "3f2b8c1e-5d4a-4e6f-9a7b-0c1d2e3f4a5b",
};

function build(overrides: Partial<ClaudeSessionSettings> = {}, options: Record<string, unknown> = {}): Options {
  return buildQueryOptions(settings(overrides, options), hooks);
}

describe("queryOptions", () => {
  it("injects Loom's MCP server as t3-code over HTTP with the bearer token in its headers only", () => {
    const options = build();
    expect(options.mcpServers).toEqual({ "t3-code": { type: "http", url: URL, headers: { Authorization: `Bearer ${TOKEN}` } } });
    expect(options.strictMcpConfig).toBe(true);
    expect(options.allowedTools).toEqual(["mcp__t3-code__*"]);
    // Over stdin, not the command line other users can read.
    expect(options.mcpServersDelivery).toBe("initialize");
    const { mcpServers: _servers, ...rest } = options;
    expect(JSON.stringify(rest)).not.toContain(TOKEN);
  });

  it("the summary that is logged says whether MCP is configured, never the token or URL", () => {
    const line = describeQueryOptions(build());
    expect(line).toContain("Loom MCP server configured");
    expect(line).not.toContain(TOKEN);
    expect(line).not.toContain(URL);
    expect(line).not.toContain("Bearer");
    expect(describeQueryOptions(build({ mcp: null }))).toContain("Loom MCP server not configured");
  });

  it("without an MCP endpoint there are no servers and no Loom tools", () => {
    const options = build({ mcp: null });
    expect(options.mcpServers).toBeUndefined();
    expect(options.allowedTools).toBeUndefined();
    expect(options.strictMcpConfig).toBe(true);
  });

  it("a kept config dir persists the session; a resume names the saved session instead of a new id", () => {
    const fresh = buildQueryOptions(settings({ persist: true }), hooks);
    expect(fresh).toMatchObject({ persistSession: true, sessionId: hooks.sessionId });
    expect(fresh.resume).toBeUndefined();
    const resumed = buildQueryOptions(settings({ persist: true }), { ...hooks, resume: "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b" });
    expect(resumed).toMatchObject({ persistSession: true, resume: "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b" });
    expect(resumed.sessionId).toBeUndefined();
  });

  it("isolates the session: no persisted transcript, no settings files, its own config dir", () => {
    const options = build();
    expect(options).toMatchObject({ cwd: "/work/project", model: "claude-sonnet-4-5", persistSession: false, settingSources: [] });
    expect(options.env).toMatchObject({
      PATH: "/usr/bin",
      CLAUDE_CONFIG_DIR: "/tmp/loom-claude-x",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      ENABLE_TOOL_SEARCH: "false",
      CLAUDE_CODE_ENABLE_TASKS: "false",
    });
    expect(options.canUseTool).toBe(hooks.canUseTool);
    expect(options.sessionId).toBe(hooks.sessionId);
    expect(options.pathToClaudeCodeExecutable).toBeUndefined();
    expect(build({ model: null }).model).toBeUndefined();
  });

  it("the instance env sits above Loom's defaults; CLAUDE_CONFIG_DIR is always the session's", () => {
    const options = build({}, { env: { ANTHROPIC_BASE_URL: "http://model", ANTHROPIC_API_KEY: "k", ENABLE_TOOL_SEARCH: "true", CLAUDE_CONFIG_DIR: "/elsewhere" } });
    expect(options.env).toMatchObject({ ANTHROPIC_BASE_URL: "http://model", ANTHROPIC_API_KEY: "k", ENABLE_TOOL_SEARCH: "true", CLAUDE_CONFIG_DIR: "/tmp/loom-claude-x" });
  });

  it("maps runtime modes to permission modes; plan interaction wins", () => {
    const modes: RuntimeMode[] = ["approval-required", "auto-accept-edits", "full-access"];
    expect(modes.map((mode) => permissionModeFor(mode, "default"))).toEqual(["default", "acceptEdits", "bypassPermissions"]);
    expect(modes.map((mode) => permissionModeFor(mode, "plan"))).toEqual(["plan", "plan", "plan"]);
  });

  it("approval-required asks before every Bash command, also the ones Claude reads as harmless", () => {
    expect(build().settings).toEqual({ permissions: { ask: ["Bash"] } });
    expect(build({ runtimeMode: "auto-accept-edits" }).settings).toBeUndefined();
  });

  it("full-access allows skipping permissions, and as root says it runs in a sandbox", () => {
    const asUser = build({ runtimeMode: "full-access" });
    expect(asUser).toMatchObject({ permissionMode: "bypassPermissions", allowDangerouslySkipPermissions: true });
    expect(asUser.env?.IS_SANDBOX).toBeUndefined();
    expect(build({ runtimeMode: "full-access", isRoot: true }).env?.IS_SANDBOX).toBe("1");
    expect(build({ runtimeMode: "approval-required", isRoot: true }).env?.IS_SANDBOX).toBeUndefined();
    expect(build({ runtimeMode: "full-access", isRoot: true }, { env: { IS_SANDBOX: "0" } }).env?.IS_SANDBOX).toBe("0");
  });

  it("uses options.executablePath for the Claude Code executable", () => {
    expect(build({}, { executablePath: "/opt/claude" }).pathToClaudeCodeExecutable).toBe("/opt/claude");
    expect(describeQueryOptions(build({}, { executablePath: "/opt/claude" }))).toContain("custom executable");
  });
});
