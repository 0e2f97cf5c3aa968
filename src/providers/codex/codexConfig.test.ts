import { describe, expect, it } from "vitest";
import type { ProviderInstanceConfig } from "../../config/config.js";
import {
  LOOM_MCP_DIRECT_SERVER,
  LOOM_MCP_SERVER,
  appServerArgs,
  appServerEnv,
  loomMcpServers,
  modelProviderFlags,
  runtimePolicy,
  threadForkParams,
  threadResumeParams,
  threadStartParams,
  tomlString,
} from "./codexConfig.js";
import { DEFAULT_CODEX_MODELS, codexCapabilities, parseCodexOptions } from "./options.js";
import { DriverOptionsError } from "../kit/driverOptions.js";

const TOKEN = "tok_0123456789abcdef0123456789abcdef";
const MCP = { url: "http://127.0.0.1:4321/mcp", token: TOKEN };

function instance(options: Record<string, unknown>, models: readonly string[] | null = null): ProviderInstanceConfig {
  return { id: "codex", driver: "codex", enabled: true, displayName: null, models, options };
}

const withProvider = parseCodexOptions(
  instance({ modelProvider: { id: "local", baseUrl: "http://127.0.0.1:9999/v1", envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy-key-value" } }),
);

describe("Loom's MCP server in the codex thread config (spec 000, Codex V2)", () => {
  it("registers t3-code with every tool but the wait, and t3-code-direct with only the wait", () => {
    const servers = loomMcpServers(MCP);
    expect(Object.keys(servers)).toEqual([LOOM_MCP_SERVER, LOOM_MCP_DIRECT_SERVER]);
    expect(servers[LOOM_MCP_SERVER]).toEqual({
      url: MCP.url,
      http_headers: { Authorization: `Bearer ${TOKEN}` },
      default_tools_approval_mode: "approve",
      tool_timeout_sec: 600,
      disabled_tools: ["t3_thread_wait"],
    });
    expect(servers[LOOM_MCP_DIRECT_SERVER]).toEqual({
      url: MCP.url,
      http_headers: { Authorization: `Bearer ${TOKEN}` },
      default_tools_approval_mode: "approve",
      tool_timeout_sec: 600,
      enabled_tools: ["t3_thread_wait"],
      omit_tools_from: ["code_mode", "deferred"],
    });
  });

  it("injects the servers in thread/start, thread/resume and thread/fork alike", () => {
    const settings = { cwd: "/work", model: "m1", runtimeMode: "auto-accept-edits" as const, mcp: MCP };
    const expected = { mcp_servers: loomMcpServers(MCP) };
    const start = threadStartParams(settings);
    expect(start).toEqual({ cwd: "/work", model: "m1", approvalPolicy: "on-request", sandbox: "workspace-write", config: expected });
    expect(threadResumeParams("thr-1", settings)).toEqual({ ...start, threadId: "thr-1", excludeTurns: true });
    expect(threadForkParams("thr-1", settings)).toEqual({ ...start, threadId: "thr-1", excludeTurns: true });
  });

  it("a session without Loom tools gets no config override", () => {
    expect(threadStartParams({ cwd: "/w", model: null, runtimeMode: "full-access", mcp: null }).config).toBeNull();
  });
});

describe("runtime modes → approval policy and sandbox", () => {
  it.each([
    ["approval-required", "untrusted", "workspace-write"],
    ["auto-accept-edits", "on-request", "workspace-write"],
    ["full-access", "never", "danger-full-access"],
  ] as const)("%s → %s / %s", (mode, approvalPolicy, sandbox) => {
    expect(runtimePolicy(mode)).toEqual({ approvalPolicy, sandbox });
  });
});

describe("the command line and environment", () => {
  it("passes the model provider as -c flags with TOML values", () => {
    expect(modelProviderFlags(withProvider.modelProvider!)).toEqual([
      "-c",
      'model_provider="local"',
      "-c",
      'model_providers.local.name="local"',
      "-c",
      'model_providers.local.base_url="http://127.0.0.1:9999/v1"',
      "-c",
      'model_providers.local.env_key="LOOM_MODEL_KEY"',
      "-c",
      'model_providers.local.wire_api="responses"',
      "-c",
      "model_providers.local.supports_websockets=false",
      "-c",
      "model_providers.local.request_max_retries=0",
      "-c",
      "model_providers.local.stream_max_retries=0",
    ]);
    expect(appServerArgs(withProvider).slice(0, 3)).toEqual(["app-server", "-c", "check_for_update_on_startup=false"]);
    expect(appServerArgs(parseCodexOptions(instance({})))).toEqual(["app-server", "-c", "check_for_update_on_startup=false"]);
  });

  it("escapes TOML strings", () => {
    expect(tomlString('a "b" \\ c\n')).toBe('"a \\"b\\" \\\\ c\\n"');
  });

  it("puts the instance env and CODEX_HOME in the child's environment, over Loom's own", () => {
    const env = appServerEnv(withProvider, { PATH: "/bin", LOOM_MODEL_KEY: "old" }, "/tmp/home");
    expect(env).toEqual({ PATH: "/bin", LOOM_MODEL_KEY: "dummy-key-value", CODEX_HOME: "/tmp/home" });
  });

  it("never puts the session token on the command line or in the environment", () => {
    const args = appServerArgs(withProvider);
    const env = appServerEnv(withProvider, process.env, "/tmp/home");
    expect(JSON.stringify(args)).not.toContain(TOKEN);
    expect(JSON.stringify(env)).not.toContain(TOKEN);
    // It travels only in the thread config, over stdin.
    expect(JSON.stringify(threadStartParams({ cwd: "/w", model: null, runtimeMode: "full-access", mcp: MCP }))).toContain(`Bearer ${TOKEN}`);
  });
});

describe("instance options", () => {
  it("applies defaults", () => {
    expect(parseCodexOptions(instance({}))).toEqual({ binaryPath: null, codexHome: null, modelProvider: null, env: {}, requestTimeoutMs: 60_000 });
    expect(withProvider.modelProvider).toEqual({ id: "local", name: "local", baseUrl: "http://127.0.0.1:9999/v1", envKey: "LOOM_MODEL_KEY", wireApi: "responses" });
    expect(parseCodexOptions(instance({ modelProvider: { baseUrl: "https://models.example/v1" } })).modelProvider?.id).toBe("loom");
  });

  it("names every bad field", () => {
    const bad = () => parseCodexOptions(instance({ modelProvider: { baseUrl: "ftp://x", wireApi: "chat" }, env: { A: 1 }, binaryPat: "x" }));
    expect(bad).toThrow(DriverOptionsError);
    expect(bad).toThrow(/options\.modelProvider\.baseUrl: must be an http\(s\) URL/);
    expect(bad).toThrow(/options\.modelProvider\.wireApi: must be "responses"/);
    expect(bad).toThrow(/options\.env\.A: must be a string/);
    expect(bad).toThrow(/binaryPat/);
  });

  it("capabilities: steering, interrupt, restart and resume; no fork; all runtime modes; HTTP MCP", () => {
    expect(codexCapabilities(instance({}))).toEqual({
      steering: true,
      interrupt: true,
      restart: true,
      fork: false,
      resume: true,
      runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
      models: DEFAULT_CODEX_MODELS,
      mcpTransport: "http",
      curatedModels: true,
    });
    expect(codexCapabilities(instance({}, ["my-model"])).models).toEqual(["my-model"]);
  });
});
