import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_CONFIG_FILE, type LoomConfigFile, parseConfigText } from "../config/config.js";
import type { ProviderProbe } from "../providers/adapter.js";
import { createAcpDriver } from "../providers/acp/driver.js";
import { RegistryAgentIdSchema } from "../providers/acp/options.js";
import { AcpRegistryCatalog, type CatalogEntry } from "../providers/acp/registryCatalog.js";
import { type InstalledAgent, acpCacheRoot } from "../providers/acp/registryCache.js";
import { openStateDir, resolveStateDir } from "../server/stateDir.js";
import { UsageError } from "./errors.js";
import { formatJson } from "./output.js";

/**
 * `loom providers search|prepare|list`: the ACP registry catalog from the
 * command line (docs/providers/acp.md). They work on the state dir's config
 * file and agent cache directly; no server has to run. A running server reads
 * its config at start, so it picks up a newly prepared instance on restart.
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
  const configPath = values.config === undefined ? resolve(stateDir, DEFAULT_CONFIG_FILE) : resolve(values.config);
  const catalog = new AcpRegistryCatalog({ cacheRoot: acpCacheRoot(stateDir), ...(values.registry === undefined ? {} : { location: values.registry }) });
  const json = values.json === true;
  switch (sub) {
    case "search": {
      if (positionals.length > 1) throw new UsageError(`loom providers search takes at most one QUERY (quote several words), got ${positionals.length}`);
      const entries = await catalog.search(positionals[0] ?? "");
      out(json ? formatJson({ registry: catalog.location, agents: entries }) : formatSearch(entries));
      return 0;
    }
    case "prepare": {
      if (positionals.length !== 1) throw new UsageError("loom providers prepare takes one AGENT id");
      const agentId = RegistryAgentIdSchema.safeParse(positionals[0]);
      if (!agentId.success) throw new UsageError(`"${positionals[0] ?? ""}" is not a registry agent id (lower-case letters, digits and '-')`);
      const instanceId = values.id ?? agentId.data;
      // Check the config before installing anything, so a bad file or a clash fails fast.
      const config = readConfigFile(configPath);
      planInstance(config, instanceId, agentId.data);
      openStateDir(stateDir);
      const installed = await catalog.prepare(agentId.data);
      writeConfigFile(configPath, planInstance(readConfigFile(configPath), instanceId, agentId.data));
      const instance = { id: instanceId, driver: "acp", enabled: true, displayName: null, models: null, options: { registryAgent: agentId.data } };
      // Installed and in the config either way: a probe that fails is reported, not thrown.
      const readiness = await createAcpDriver({ stateDir })
        .probe(instance)
        .catch((error: unknown): ProviderProbe => ({ installed: true, authenticated: false, reason: `probe failed: ${error instanceof Error ? error.message : String(error)}` }));
      out(json ? formatJson({ installed, instanceId, config: configPath, readiness }) : formatPrepared(installed, instanceId, configPath, readiness));
      return 0;
    }
    case "list": {
      if (positionals.length > 0) throw new UsageError("loom providers list takes no arguments");
      const instances = readConfigFile(configPath).providers ?? [];
      const prepared = catalog.list();
      out(json ? formatJson({ config: configPath, instances, prepared }) : formatList(configPath, instances, prepared));
      return 0;
    }
    default:
      throw new UsageError(`unknown providers command "${sub}" (see loom providers --help)`);
  }
}

/** The config file as written (not resolved), validated; an empty object when there is none. */
function readConfigFile(path: string): LoomConfigFile {
  if (!existsSync(path)) return {};
  const text = readFileSync(path, "utf8");
  parseConfigText(text, path, dirname(path)); // throws ConfigError naming the bad field
  return JSON.parse(text) as LoomConfigFile;
}

/**
 * The config with instance `instanceId` running registry agent `agentId`. An
 * existing acp instance keeps its other options; another driver under that id
 * is a usage error. A file without providers had the built-in scripted one,
 * which is kept.
 */
function planInstance(config: LoomConfigFile, instanceId: string, agentId: string): LoomConfigFile {
  const providers = [...(config.providers ?? [{ id: "scripted", driver: "scripted" }])];
  const index = providers.findIndex((provider) => provider.id === instanceId);
  const existing = index === -1 ? undefined : providers[index];
  if (existing !== undefined && existing.driver !== "acp") {
    throw new UsageError(`provider instance "${instanceId}" already exists with driver "${existing.driver}"; choose another --id`);
  }
  const entry = { ...(existing ?? { id: instanceId, driver: "acp" }), options: { ...(existing?.options ?? {}), registryAgent: agentId } };
  if (index === -1) providers.push(entry);
  else providers[index] = entry;
  return { ...config, providers };
}

/** Validated, then written whole through a temp file and a rename. */
function writeConfigFile(path: string, config: LoomConfigFile): void {
  const text = `${JSON.stringify(config, null, 2)}\n`;
  parseConfigText(text, path, dirname(path));
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, path);
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
