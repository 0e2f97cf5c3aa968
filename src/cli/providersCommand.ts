import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { AppError } from "../app/errors.js";
import { AcpPrepareInput, type ProviderCatalogSettings, listProviderSetup, prepareAcpAgent, searchAcpAgents } from "../app/providers/acpCatalog.js";
import { DEFAULT_CONFIG_FILE, type LoomConfigFile } from "../config/config.js";
import type { ProviderProbe } from "../providers/adapter.js";
import { createAcpDriver } from "../providers/acp/driver.js";
import { RegistryAgentIdSchema } from "../providers/acp/options.js";
import type { CatalogEntry } from "../providers/acp/registryCatalog.js";
import type { InstalledAgent } from "../providers/acp/registryCache.js";
import { openStateDir, resolveStateDir } from "../server/stateDir.js";
import { UsageError } from "./errors.js";
import { formatJson } from "./output.js";

/**
 * `loom providers search|prepare|list`: the ACP registry catalog from the
 * command line (docs/providers/acp.md), through the same app functions as the
 * HTTP routes under /api/providers. They work on the state dir's config file
 * and agent cache directly; no server has to run. A running server reads its
 * config at start, so it picks up an instance prepared here on restart (one
 * prepared through its HTTP API at once).
 */

export const PROVIDERS_USAGE = `  loom providers search [QUERY] [--registry FILE|URL] [--json]
  loom providers prepare AGENT [--id INSTANCE] [--registry FILE|URL] [--config FILE] [--json]
  loom providers list [--config FILE] [--json]`;

export const PROVIDERS_HELP = `Usage:
${PROVIDERS_USAGE}

  search   Agents in the ACP registry whose id, name or description contain
           every word of QUERY, with the distribution this machine would
           install and the version already prepared. Starts no agent.
  prepare  Install AGENT's distribution into <state-dir>/acp-agents/AGENT/VERSION
           (npm packages with npm --prefix, binary archives with their sha256
           checked, PyPI packages with uv), add or update the provider instance
           INSTANCE (default: AGENT) with driver "acp" in the config file, then
           prove readiness with a disposable session/new.
  list     Provider instances in the config file and the agents prepared in
           the cache.

Each takes --state-dir DIR (default $LOOM_STATE_DIR, else ~/.loom). The
registry is --registry, else $LOOM_ACP_REGISTRY, else the official ACP
registry. The config file is --config, else <state-dir>/config.json.
`;

type Output = (text: string) => void;

const COMMON = {
  "state-dir": { type: "string" },
  registry: { type: "string" },
  config: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** `loom providers <search|prepare|list> ...`; resolves with the exit code. */
export async function runProviders(argv: readonly string[], out: Output = (text) => process.stdout.write(text)): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    out(PROVIDERS_HELP);
    return sub === undefined ? 1 : 0;
  }
  const { values, positionals } = parseArgs({ args: [...rest], options: { ...COMMON, id: { type: "string" } }, allowPositionals: true, strict: true });
  if (values.help === true) {
    out(PROVIDERS_HELP);
    return 0;
  }
  const stateDir = resolveStateDir(values["state-dir"]);
  const settings: ProviderCatalogSettings = {
    stateDir,
    configPath: values.config === undefined ? resolve(stateDir, DEFAULT_CONFIG_FILE) : resolve(values.config),
    ...(values.registry === undefined ? {} : { registry: values.registry }),
    driver: createAcpDriver({ stateDir }),
  };
  const json = values.json === true;
  switch (sub) {
    case "search": {
      if (positionals.length > 1) throw new UsageError(`loom providers search takes at most one QUERY (quote several words), got ${positionals.length}`);
      const found = await searchAcpAgents(settings, { query: positionals[0] ?? "" });
      out(json ? formatJson(found) : formatSearch(found.agents));
      return 0;
    }
    case "prepare": {
      if (positionals.length !== 1) throw new UsageError("loom providers prepare takes one AGENT id");
      const agentId = RegistryAgentIdSchema.safeParse(positionals[0]);
      if (!agentId.success) throw new UsageError(`"${positionals[0] ?? ""}" is not a registry agent id (lower-case letters, digits and '-')`);
      if (values.id !== undefined && !AcpPrepareInput.shape.instanceId.safeParse(values.id).success) {
        throw new UsageError(`--id "${values.id}" is not an instance id (1-64 letters, digits, '.', '_' and '-', starting with a letter or digit)`);
      }
      const prepared = await asUsage(async () => {
        openStateDir(stateDir);
        return prepareAcpAgent(settings, { agentId: agentId.data, ...(values.id === undefined ? {} : { instanceId: values.id }) });
      });
      const { installed, instanceId, config, readiness } = prepared;
      out(json ? formatJson({ installed, instanceId, config, readiness }) : formatPrepared(installed, instanceId, config, readiness));
      return 0;
    }
    case "list": {
      if (positionals.length > 0) throw new UsageError("loom providers list takes no arguments");
      const { config, instances, prepared } = listProviderSetup(settings);
      out(json ? formatJson({ config, instances, prepared }) : formatList(config, instances, prepared));
      return 0;
    }
    default:
      throw new UsageError(`unknown providers command "${sub}" (see loom providers --help)`);
  }
}

/** An --id that clashes with another driver's instance is a usage error; other failures print as they are. */
async function asUsage<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof AppError && error.details?.field === "instanceId") throw new UsageError(error.message.replace("instance id", "--id"));
    throw error;
  }
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  return rows.map((row) => row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]!))).join("  ")).join("\n");
}

export function formatSearch(entries: readonly CatalogEntry[]): string {
  if (entries.length === 0) return "no matching agents\n";
  const rows = [
    ["AGENT", "VERSION", "INSTALLS", "PREPARED", "NAME"],
    ...entries.map((entry) => [entry.agent.id, entry.agent.version, "kind" in entry.install ? entry.install.kind : "-", entry.prepared ?? "-", entry.agent.name]),
  ];
  const unavailable = entries.flatMap((entry) => ("unavailable" in entry.install ? [`  ${entry.agent.id}: ${entry.install.unavailable}`] : []));
  return `${table(rows)}\n${unavailable.length === 0 ? "" : `not installable here:\n${unavailable.join("\n")}\n`}`;
}

export function formatPrepared(installed: InstalledAgent, instanceId: string, configPath: string, readiness: ProviderProbe): string {
  const ready = readiness.installed && readiness.authenticated ? "ready (a disposable session/new succeeded)" : `not ready: ${readiness.reason ?? "unknown"}`;
  return [
    `prepared ${installed.agentId} ${installed.version} (${installed.distribution}) at ${dirname(installed.command)}`,
    `provider instance "${instanceId}" (driver acp) is in ${configPath}; restart a running server to use it`,
    ready,
    "",
  ].join("\n");
}

export function formatList(configPath: string, instances: NonNullable<LoomConfigFile["providers"]>, prepared: readonly InstalledAgent[]): string {
  const instanceRows = [
    ["INSTANCE", "DRIVER", "AGENT"],
    ...instances.map((instance) => {
      const options = instance.options ?? {};
      const agent = typeof options.registryAgent === "string" ? `registry:${options.registryAgent}` : typeof options.command === "string" ? options.command : "-";
      return [instance.id, instance.driver, agent];
    }),
  ];
  const cacheRows = [["AGENT", "VERSION", "DISTRIBUTION", "COMMAND"], ...prepared.map((entry) => [entry.agentId, entry.version, entry.distribution, entry.command])];
  return [
    `instances (${configPath}):`,
    instances.length === 0 ? "  none (the built-in scripted instance runs)" : table(instanceRows),
    "prepared agents:",
    prepared.length === 0 ? "  none" : table(cacheRows),
    "",
  ].join("\n");
}
