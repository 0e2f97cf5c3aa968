import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import { ConfigError, type LoomConfigFile, type ProviderInstanceConfig, parseConfigText } from "../../config/config.js";
import { formatZodIssues } from "../../contracts/zodIssues.js";
import type { ProviderDriver, ProviderProbe } from "../../providers/adapter.js";
import { validateProviderInstances } from "../../providers/kit/validateInstances.js";
import { RegistryAgentIdSchema } from "../../providers/acp/options.js";
import { RegistryError, RegistryErrorCode } from "../../providers/acp/registry.js";
import { AcpRegistryCatalog, type CatalogEntry } from "../../providers/acp/registryCatalog.js";
import { type InstalledAgent, acpCacheRoot } from "../../providers/acp/registryCache.js";
import { AppError } from "../errors.js";

/**
 * The ACP registry catalog as operations (docs/providers/acp.md): search it,
 * prepare an agent (install it into the versioned cache, add or update its
 * provider instance in the config file, prove readiness), and list the
 * instances and prepared agents. `loom providers` and the HTTP routes under
 * `/api/providers` both call these. Failures are AppErrors: bad input is
 * `invalid_request`; a catalog or install failure is `provider_unavailable`
 * with `details.reason` the registry's code (`checksum_mismatch`, ...).
 */

export interface ProviderCatalogSettings {
  readonly stateDir: string;
  /** The config file prepared instances are written to (it need not exist yet). */
  readonly configPath: string;
  /** The registry: a file path or http(s) URL; default LOOM_ACP_REGISTRY, else the official one. */
  readonly registry?: string;
  /** The acp driver: it checks the instance's options and probes readiness (a disposable session/new). */
  readonly driver: Pick<ProviderDriver, "optionsSchema" | "openWarm" | "probe">;
  /** Called with the new or updated instance once it is in the config file: a running server registers it. */
  readonly onPrepared?: (instance: ProviderInstanceConfig) => void;
}

export interface AcpSearchResult {
  readonly registry: string;
  readonly agents: readonly CatalogEntry[];
}

export interface AcpPrepareResult {
  readonly installed: InstalledAgent;
  readonly instanceId: string;
  readonly config: string;
  readonly readiness: ProviderProbe;
  /** True when the running server took the instance at once (no restart needed). */
  readonly active: boolean;
}

export interface ProviderSetupList {
  readonly config: string;
  readonly instances: NonNullable<LoomConfigFile["providers"]>;
  readonly prepared: readonly InstalledAgent[];
}

export const AcpSearchInput = z.object({ query: z.string().max(200).optional() }).strict();
export type AcpSearchInput = z.infer<typeof AcpSearchInput>;

export const AcpPrepareInput = z
  .object({
    agentId: z.string(),
    instanceId: z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "letters, digits, '.', '_' and '-', starting with a letter or digit").optional(),
  })
  .strict();
export type AcpPrepareInput = z.infer<typeof AcpPrepareInput>;

function catalogOf(settings: ProviderCatalogSettings): AcpRegistryCatalog {
  return new AcpRegistryCatalog({ cacheRoot: acpCacheRoot(settings.stateDir), ...(settings.registry === undefined ? {} : { location: settings.registry }) });
}

/** Agents whose id, name or description contain every word of the query; starts no agent. */
export async function searchAcpAgents(settings: ProviderCatalogSettings, input: AcpSearchInput): Promise<AcpSearchResult> {
  const catalog = catalogOf(settings);
  return { registry: catalog.location, agents: await registryCall(() => catalog.search(input.query ?? "")) };
}

/** Prepares are serialized per config file, so two never interleave their read-modify-write of it. */
const preparing = new Map<string, Promise<unknown>>();

/**
 * Installs `agentId` into the cache, adds or updates instance `instanceId`
 * (default: the agent id) with driver "acp" in the config file, and probes it.
 * The config is checked before anything is installed, so a bad file or a
 * clash with another driver's instance fails with nothing changed.
 */
export function prepareAcpAgent(settings: ProviderCatalogSettings, input: AcpPrepareInput): Promise<AcpPrepareResult> {
  const agentId = RegistryAgentIdSchema.safeParse(input.agentId);
  if (!agentId.success) throw new AppError("invalid_request", `"${input.agentId}" is not a registry agent id (lower-case letters, digits and '-')`, { details: { field: "agentId" } });
  const previous = preparing.get(settings.configPath) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => prepareNow(settings, agentId.data, input.instanceId ?? agentId.data));
  preparing.set(settings.configPath, next);
  void next.finally(() => {
    if (preparing.get(settings.configPath) === next) preparing.delete(settings.configPath);
  }).catch(() => undefined);
  return next;
}

async function prepareNow(settings: ProviderCatalogSettings, agentId: string, instanceId: string): Promise<AcpPrepareResult> {
  const { configPath } = settings;
  // Checked before installing, and again on the file as it is after the install.
  resolveInstance(settings, planInstance(readConfigFile(configPath), instanceId, agentId), instanceId);
  const installed = await registryCall(() => catalogOf(settings).prepare(agentId));
  const planned = planInstance(readConfigFile(configPath), instanceId, agentId);
  const instance = resolveInstance(settings, planned, instanceId);
  writeConfigFile(configPath, planned);
  settings.onPrepared?.(instance);
  // Installed and in the config either way: a probe that fails is reported, not thrown.
  const readiness = await settings.driver
    .probe(instance)
    .catch((error: unknown): ProviderProbe => ({ installed: true, authenticated: false, reason: `probe failed: ${error instanceof Error ? error.message : String(error)}` }));
  return { installed, instanceId, config: configPath, readiness, active: settings.onPrepared !== undefined };
}

/** The config file's provider instances (as written) and every agent prepared in the cache. */
export function listProviderSetup(settings: ProviderCatalogSettings): ProviderSetupList {
  return { config: settings.configPath, instances: readConfigFile(settings.configPath).providers ?? [], prepared: catalogOf(settings).list() };
}

/** A registry failure as the wire failure: unknown agents are the caller's mistake, the rest the catalog's. */
async function registryCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof RegistryError)) throw error;
    const code = error.code === RegistryErrorCode.unknownAgent ? "invalid_request" : "provider_unavailable";
    throw new AppError(code, error.message, { details: { reason: error.code }, cause: error });
  }
}

/** The config file as written (not resolved), validated; an empty object when there is none. */
function readConfigFile(path: string): LoomConfigFile {
  if (!existsSync(path)) return {};
  const text = readFileSync(path, "utf8");
  configCall(() => parseConfigText(text, path, dirname(path)));
  return JSON.parse(text) as LoomConfigFile;
}

function configCall<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    if (error instanceof ConfigError) throw new AppError("invalid_request", error.message, { details: { reason: "config_invalid" }, cause: error });
    if (error instanceof z.ZodError) throw new AppError("invalid_request", formatZodIssues(error));
    throw error;
  }
}

/**
 * The config with instance `instanceId` running registry agent `agentId`. An
 * existing acp instance keeps its other options; another driver under that id
 * is refused. A file without providers had the built-in scripted one, which
 * is kept.
 */
function planInstance(config: LoomConfigFile, instanceId: string, agentId: string): LoomConfigFile {
  const providers = [...(config.providers ?? [{ id: "scripted", driver: "scripted" }])];
  const index = providers.findIndex((provider) => provider.id === instanceId);
  const existing = index === -1 ? undefined : providers[index];
  if (existing !== undefined && existing.driver !== "acp") {
    throw new AppError("invalid_request", `provider instance "${instanceId}" already exists with driver "${existing.driver}"; choose another instance id`, { details: { field: "instanceId" } });
  }
  const entry = { ...(existing ?? { id: instanceId, driver: "acp" }), options: { ...(existing?.options ?? {}), registryAgent: agentId } };
  if (index === -1) providers.push(entry);
  else providers[index] = entry;
  return { ...config, providers };
}

function configText(config: LoomConfigFile): string {
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** The instance as the server would run it, once the whole file and the instance's options pass their checks. */
function resolveInstance(settings: ProviderCatalogSettings, config: LoomConfigFile, instanceId: string): ProviderInstanceConfig {
  const resolved = configCall(() => parseConfigText(configText(config), settings.configPath, dirname(settings.configPath)));
  const instance = resolved.providers.find((candidate) => candidate.id === instanceId)!;
  const problems = validateProviderInstances([instance], new Map([["acp", settings.driver]]));
  if (problems.length > 0) {
    throw new AppError("invalid_request", `provider instance "${instanceId}": ${problems.flatMap((problem) => problem.errors).join("; ")}`, { details: { reason: "config_invalid" } });
  }
  return instance;
}

/** Written whole through a temp file and a rename. */
function writeConfigFile(path: string, config: LoomConfigFile): void {
  const text = configText(config);
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, path);
}
