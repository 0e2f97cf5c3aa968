/**
 * `loom mcp-config <agent>`: the snippet that mounts a running Loom in an
 * agent's own MCP configuration, under the server key `t3-code`. The owner
 * token is referenced through an environment variable in each agent's own
 * interpolation syntax, never written inline unless asked. Pure.
 */
export const MCP_CONFIG_AGENTS = ["codex", "claude", "gemini", "opencode", "cursor", "json"] as const;
export type McpConfigAgent = (typeof MCP_CONFIG_AGENTS)[number];

export const MCP_SERVER_KEY = "t3-code";
export const DEFAULT_TOKEN_ENV = "LOOM_OWNER_TOKEN";

export interface McpConfigInput {
  readonly mcpUrl: string;
  /** The variable the agent reads the token from. */
  readonly tokenEnv: string;
  /** The raw token, only when the user asked for it inline. */
  readonly inlineToken: string | null;
}

export interface McpConfigSnippet {
  /** What to print on stdout: the config text. */
  readonly text: string;
  /** Where it goes, for the note on stderr. */
  readonly where: string;
}

/** The bearer header value as each agent interpolates an environment variable. */
const HEADER_OF: { readonly [A in McpConfigAgent]: (env: string) => string } = {
  codex: (env) => `Bearer \${${env}}`, // unused: codex reads the variable itself (bearer_token_env_var)
  claude: (env) => `Bearer \${${env}}`,
  gemini: (env) => `Bearer \${${env}}`,
  opencode: (env) => `Bearer {env:${env}}`,
  cursor: (env) => `Bearer \${env:${env}}`,
  json: (env) => `Bearer \${${env}}`,
};

function header(agent: McpConfigAgent, input: McpConfigInput): string {
  return input.inlineToken === null ? HEADER_OF[agent](input.tokenEnv) : `Bearer ${input.inlineToken}`;
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** TOML basic string: JSON escaping is a subset TOML accepts for these characters. */
const tomlString = (value: string): string => JSON.stringify(value);

export function mcpConfigSnippet(agent: McpConfigAgent, input: McpConfigInput): McpConfigSnippet {
  switch (agent) {
    case "codex": {
      const auth = input.inlineToken === null ? `bearer_token_env_var = ${tomlString(input.tokenEnv)}` : `http_headers = { Authorization = ${tomlString(`Bearer ${input.inlineToken}`)} }`;
      return {
        text: `[mcp_servers.${MCP_SERVER_KEY}]\nurl = ${tomlString(input.mcpUrl)}\n${auth}\ndefault_tools_approval_mode = "approve"\n`,
        where: "append to ~/.codex/config.toml (or $CODEX_HOME/config.toml)",
      };
    }
    case "claude":
      return {
        text: json({ mcpServers: { [MCP_SERVER_KEY]: { type: "http", url: input.mcpUrl, headers: { Authorization: header(agent, input) } } } }),
        where: "save as .mcp.json in the project, or pass with claude --mcp-config FILE",
      };
    case "gemini":
      return {
        text: json({ mcpServers: { [MCP_SERVER_KEY]: { httpUrl: input.mcpUrl, headers: { Authorization: header(agent, input) }, trust: true } } }),
        where: "merge into ~/.gemini/settings.json (or .gemini/settings.json in the project)",
      };
    case "opencode":
      return {
        text: json({ $schema: "https://opencode.ai/config.json", mcp: { [MCP_SERVER_KEY]: { type: "remote", url: input.mcpUrl, headers: { Authorization: header(agent, input) }, oauth: false, enabled: true } } }),
        where: "merge into opencode.json in the project (or ~/.config/opencode/opencode.json)",
      };
    case "cursor":
      return {
        text: json({ mcpServers: { [MCP_SERVER_KEY]: { url: input.mcpUrl, headers: { Authorization: header(agent, input) } } } }),
        where: "merge into ~/.cursor/mcp.json (or .cursor/mcp.json in the project)",
      };
    case "json":
      return {
        text: json({
          name: MCP_SERVER_KEY,
          transport: "streamable-http",
          url: input.mcpUrl,
          headers: { Authorization: header(agent, input) },
          ...(input.inlineToken === null ? { tokenEnv: input.tokenEnv } : {}),
        }),
        where: "any MCP client: Streamable HTTP with this bearer header",
      };
  }
}
