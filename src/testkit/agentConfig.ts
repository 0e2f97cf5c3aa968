/**
 * How to point the real agent CLIs at a model server: codex's config.toml and
 * Claude's environment, as docs/model-server.md describes them.
 */

export const MODEL_KEY_ENV = "LOOM_MODEL_KEY";

export interface CodexMcpServer {
  readonly name: string;
  readonly url: string;
  /** Sent as `Authorization: Bearer` through http_headers. */
  readonly bearerToken?: string;
}

function tomlString(value: string): string {
  return JSON.stringify(value);
}

/**
 * CODEX_HOME/config.toml for codex 0.171 against `modelServerUrl`; codex reads
 * the API key from $LOOM_MODEL_KEY (any value). MCP tools are pre-approved,
 * otherwise codex refuses them under its "never" approval policy.
 */
export function codexConfigToml(modelServerUrl: string, mcpServers: readonly CodexMcpServer[] = []): string {
  const lines = [
    `model = "scripted"`,
    `model_provider = "loom"`,
    ``,
    `[model_providers.loom]`,
    `name = "loom"`,
    `base_url = ${tomlString(`${modelServerUrl}/v1`)}`,
    `env_key = "${MODEL_KEY_ENV}"`,
    `wire_api = "responses"`,
    `supports_websockets = false`,
    `request_max_retries = 0`,
    `stream_max_retries = 0`,
  ];
  for (const server of mcpServers) {
    lines.push(``, `[mcp_servers.${tomlString(server.name)}]`, `url = ${tomlString(server.url)}`, `default_tools_approval_mode = "approve"`);
    if (server.bearerToken !== undefined) lines.push(`http_headers = { Authorization = ${tomlString(`Bearer ${server.bearerToken}`)} }`);
  }
  return `${lines.join("\n")}\n`;
}

/** Environment for the Claude Agent SDK's `query({ options: { env } })` or the claude CLI. */
export function claudeEnv(modelServerUrl: string, configDir: string, base: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  return {
    ...base,
    ANTHROPIC_BASE_URL: modelServerUrl,
    ANTHROPIC_API_KEY: "dummy",
    CLAUDE_CONFIG_DIR: configDir,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    // MCP tools go straight into the request instead of behind a ToolSearch tool.
    ENABLE_TOOL_SEARCH: "false",
    // As root, claude refuses to skip permissions without it.
    IS_SANDBOX: "1",
  };
}
