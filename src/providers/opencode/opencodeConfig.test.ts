import { describe, expect, it } from "vitest";
import { opencodeOptions } from "./options.js";
import { agentFor, basicAuthHeader, MCP_TOKEN_ENV, permissionRules, sessionConfig, sessionEnv, splitModel } from "./opencodeConfig.js";

const options = opencodeOptions.parse({
  id: "oc",
  driver: "opencode",
  enabled: true,
  displayName: null,
  models: ["loom/m1", "other/x"],
  options: { modelProvider: { baseUrl: "http://127.0.0.1:9/v1", envKey: "KEY" }, config: { mcp: { docs: { type: "remote", url: "http://d" } }, permission: { read: "deny" } }, env: { KEY: "k" } },
});

describe("opencode session config", () => {
  it("names Loom's MCP server t3-code with the token only as an {env:} reference, and the custom provider with the instance's models", () => {
    const config = sessionConfig({ options, runtimeMode: "auto-accept-edits", model: "loom/m1", mcp: { url: "http://127.0.0.1:5/mcp" } });
    expect(config).toMatchObject({
      model: "loom/m1",
      small_model: "loom/m1",
      autoupdate: false,
      share: "disabled",
      provider: { loom: { npm: "@ai-sdk/openai-compatible", options: { baseURL: "http://127.0.0.1:9/v1", apiKey: "{env:KEY}" }, models: { m1: { tool_call: true } } } },
      mcp: {
        docs: { type: "remote", url: "http://d" },
        "t3-code": { type: "remote", url: "http://127.0.0.1:5/mcp", headers: { Authorization: `Bearer {env:${MCP_TOKEN_ENV}}` }, oauth: false, timeout: 3_600_000 },
      },
      permission: { read: "deny", edit: "allow", bash: "ask", "t3-code_*": "allow" },
    });
    expect(Object.keys((config.provider as Record<string, { models: object }>).loom!.models)).toEqual(["m1"]);
  });

  it("permissions narrow with the runtime mode; plan runs OpenCode's plan agent", () => {
    expect(permissionRules("approval-required")).toMatchObject({ edit: "ask", bash: "ask", webfetch: "ask" });
    expect(permissionRules("auto-accept-edits")).toMatchObject({ edit: "allow", bash: "ask" });
    expect(permissionRules("full-access")).toMatchObject({ edit: "allow", bash: "allow", external_directory: "allow" });
    expect([agentFor("plan"), agentFor("default")]).toEqual(["plan", "build"]);
  });

  it("the environment isolates HOME and XDG dirs, turns off network fetches, and carries the token under its own name", () => {
    const env = sessionEnv({ options, baseEnv: { PATH: "/bin", [MCP_TOKEN_ENV]: "outer" }, home: "/tmp/h", configPath: "/tmp/c.json", password: "pw", mcpToken: "tok" });
    expect(env).toMatchObject({
      PATH: "/bin",
      KEY: "k",
      HOME: "/tmp/h",
      XDG_DATA_HOME: "/tmp/h/.local/share",
      XDG_CONFIG_HOME: "/tmp/h/.config",
      OPENCODE_CONFIG: "/tmp/c.json",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_SERVER_PASSWORD: "pw",
      [MCP_TOKEN_ENV]: "tok",
    });
    expect(sessionEnv({ options, baseEnv: { [MCP_TOKEN_ENV]: "outer" }, home: "/h", configPath: "/c", password: "pw", mcpToken: null })[MCP_TOKEN_ENV]).toBeUndefined();
    expect(basicAuthHeader("pw")).toBe(`Basic ${Buffer.from("opencode:pw").toString("base64")}`);
  });

  it("models are provider/model", () => {
    expect(splitModel("loom/a/b")).toEqual({ providerID: "loom", modelID: "a/b" });
    expect(splitModel("plain")).toBeNull();
    expect(splitModel("/x")).toBeNull();
  });

  it("bad options name every bad field", () => {
    expect(() => opencodeOptions.parse({ id: "oc", driver: "opencode", enabled: true, displayName: null, models: null, options: { modelProvider: { baseUrl: "ftp://x" }, startupTimeoutMs: 0, hme: "/x" } })).toThrow(
      'invalid options for opencode instance "oc": options.modelProvider.baseUrl: must be an http(s) URL; options.startupTimeoutMs: must be greater than 0; options: Unrecognized key: "hme"',
    );
  });
});
