import type { RegistryAgent, RegistryDocument } from "./registry.js";
import { OFFICIAL_REGISTRY_URL, chooseDistribution, currentPlatform, findAgent, loadRegistry, searchRegistry } from "./registry.js";
import { type InstalledAgent, findInstalled, listInstalled } from "./registryCache.js";
import { type InstallEnvironment, defaultInstallEnvironment, installRegistryAgent } from "./registryInstall.js";

/**
 * The catalog service (spec 000, "ACP Registry V2"): search, preparation,
 * provider status and session start-up all go through it, so platform
 * selection and registry validation are the same everywhere. Searching and
 * reading the cache never start an agent; preparing installs a distribution
 * into the versioned cache. Readiness (a disposable session/new) is the
 * driver's probe.
 */

export interface CatalogEntry {
  readonly agent: RegistryAgent;
  /** The distribution this machine would install, or why none fits. */
  readonly install: { readonly kind: "binary" | "npx" | "uvx" } | { readonly unavailable: string };
  /** The prepared version in the cache, if any. */
  readonly prepared: string | null;
}

export interface AcpRegistryCatalogOptions {
  /** `<state-dir>/acp-agents`. */
  readonly cacheRoot: string;
  /** A file path or http(s) URL; default: LOOM_ACP_REGISTRY, else the official registry. */
  readonly location?: string;
  readonly install?: InstallEnvironment;
}

export function defaultRegistryLocation(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.LOOM_ACP_REGISTRY;
  return configured !== undefined && configured.trim() !== "" ? configured : OFFICIAL_REGISTRY_URL;
}

export class AcpRegistryCatalog {
  readonly cacheRoot: string;
  readonly location: string;
  private readonly install: InstallEnvironment;

  constructor(options: AcpRegistryCatalogOptions) {
    this.cacheRoot = options.cacheRoot;
    this.location = options.location ?? defaultRegistryLocation();
    this.install = options.install ?? defaultInstallEnvironment();
  }

  /** The registry document, read fresh from its location. */
  document(): Promise<RegistryDocument> {
    return loadRegistry(this.location, this.install.fetch);
  }

  /** Agents matching `query`, with what this machine would install and what is prepared. */
  async search(query: string): Promise<CatalogEntry[]> {
    const document = await this.document();
    return searchRegistry(document, query).map((agent) => this.entry(agent));
  }

  /** Installs the registry's current version of `agentId` into the cache and marks it current. */
  async prepare(agentId: string): Promise<InstalledAgent> {
    const agent = findAgent(await this.document(), agentId);
    return installRegistryAgent(agent, this.cacheRoot, this.install);
  }

  /** The prepared install (a version, else the current one); null when not prepared. Reads two small files. */
  installed(agentId: string, version: string | null = null): InstalledAgent | null {
    return findInstalled(this.cacheRoot, agentId, version);
  }

  /** Everything prepared in the cache. */
  list(): InstalledAgent[] {
    return listInstalled(this.cacheRoot);
  }

  private entry(agent: RegistryAgent): CatalogEntry {
    let install: CatalogEntry["install"];
    try {
      install = { kind: chooseDistribution(agent, this.install.platform ?? currentPlatform()).kind };
    } catch (error) {
      install = { unavailable: error instanceof Error ? error.message : String(error) };
    }
    return { agent, install, prepared: this.installed(agent.id)?.version ?? null };
  }
}
