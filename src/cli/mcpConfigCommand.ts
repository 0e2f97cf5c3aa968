import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { readServerInfo, resolveStateDir, stateDirPaths } from "../server/stateDir.js";
import type { Output } from "./args.js";
import { ServerNotRunningError, UsageError } from "./errors.js";
import { DEFAULT_TOKEN_ENV, MCP_CONFIG_AGENTS, type McpConfigAgent, mcpConfigSnippet } from "./mcpConfig.js";

export const MCP_CONFIG_USAGE = `  loom mcp-config ${MCP_CONFIG_AGENTS.join("|")} [--env NAME] [--inline-token] [--url URL]`;

export const MCP_CONFIG_HELP = `Usage:
${MCP_CONFIG_USAGE}

Prints the snippet that mounts the running Loom in an agent's MCP config,
under the server key t3-code: Streamable HTTP at the server's /mcp with the
owner token as a bearer. The token is referenced through an environment
variable (--env, default ${DEFAULT_TOKEN_ENV}) in the agent's own syntax;
--inline-token writes the token itself instead (keep that file private).
stdout carries only the snippet; stderr says where it goes and how to set
the variable. --url overrides the server's MCP URL (default: from
<state-dir>/server.json). Takes --state-dir DIR. Exit codes: 0 done; 2 usage
error; 3 no server is running for the state dir (and no --url was given).
`;

export function runMcpConfig(argv: readonly string[], out: Output = (t) => process.stdout.write(t), err: Output = (t) => process.stderr.write(t)): number {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: { "state-dir": { type: "string" }, env: { type: "string" }, "inline-token": { type: "boolean" }, url: { type: "string" }, help: { type: "boolean", short: "h" } },
    allowPositionals: true,
  });
  if (values.help === true) {
    out(MCP_CONFIG_HELP);
    return 0;
  }
  const agent = positionals[0];
  if (positionals.length !== 1 || !(MCP_CONFIG_AGENTS as readonly string[]).includes(agent!)) {
    throw new UsageError(`loom mcp-config takes one of ${MCP_CONFIG_AGENTS.join(", ")}, got ${positionals.length === 0 ? "none" : positionals.map((p) => JSON.stringify(p)).join(" ")}`);
  }
  const tokenEnv = values.env ?? DEFAULT_TOKEN_ENV;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) throw new UsageError(`--env must be an environment variable name, got "${tokenEnv}"`);
  if (values["inline-token"] === true && values.env !== undefined) throw new UsageError("--inline-token writes the token itself; it does not take --env");
  const dir = stateDirPaths(resolveStateDir(values["state-dir"]));
  let mcpUrl = values.url;
  if (mcpUrl === undefined) {
    const info = readServerInfo(dir);
    if (info === null) throw new ServerNotRunningError(dir.root, "or pass --url");
    mcpUrl = info.mcpUrl;
  }
  const inlineToken = values["inline-token"] === true ? readFileSync(dir.ownerTokenPath, "utf8").trim() : null;
  const snippet = mcpConfigSnippet(agent as McpConfigAgent, { mcpUrl, tokenEnv, inlineToken });
  out(snippet.text);
  err(`loom: ${snippet.where}${inlineToken === null ? `; the agent reads the token from $${tokenEnv}: export ${tokenEnv}="$(cat ${dir.ownerTokenPath})"` : "; it holds the owner token: keep it private"}\n`);
  return 0;
}
