import { readFile } from "node:fs/promises";
import { z } from "zod";
import { messageOf } from "../kit/errorMessage.js";

/**
 * The ACP registry catalog (spec 000, "ACP Registry V2"): a JSON document
 * `{ version, agents: [...] }` listing agents and how each is distributed
 * (a platform binary archive, an npm package run like npx, a PyPI package run
 * like uvx). Its location is a file path or an http(s) URL. Reading the
 * catalog never starts an agent.
 */

/** The official registry; `--registry`, LOOM_ACP_REGISTRY or an instance's settings may point elsewhere. */
export const OFFICIAL_REGISTRY_URL = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json";

export const PLATFORM_TARGETS = ["darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64", "windows-aarch64", "windows-x86_64"] as const;
export type PlatformTarget = (typeof PLATFORM_TARGETS)[number];

const StringMap = z.record(z.string(), z.string());

export const BinaryTargetSchema = z.object({
  archive: z.string().min(1),
  sha256: z.string().regex(/^[a-fA-F0-9]{64}$/, { error: "must be 64 hex characters" }).optional(),
  cmd: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: StringMap.optional(),
});
export type BinaryTarget = z.infer<typeof BinaryTargetSchema>;

export const PackageDistributionSchema = z.object({
  /** "name" or "name@version" ("@scope/name@version"). */
  package: z.string().min(1),
  /** The executable the package installs, when it is not named after the package. */
  cmd: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  env: StringMap.optional(),
});
export type PackageDistribution = z.infer<typeof PackageDistributionSchema>;

export const RegistryAgentSchema = z.object({
  id: z.string().regex(/^[a-z][a-z0-9-]*$/, { error: "must be lower-case letters, digits and '-'" }),
  name: z.string().min(1),
  version: z.string().regex(/^[0-9]+\.[0-9]+\.[0-9]+/, { error: "must be a semantic version" }),
  description: z.string().min(1),
  repository: z.string().optional(),
  website: z.string().optional(),
  authors: z.array(z.string()).optional(),
  license: z.string().optional(),
  icon: z.string().optional(),
  distribution: z
    .object({
      binary: z.partialRecord(z.enum(PLATFORM_TARGETS), BinaryTargetSchema).optional(),
      npx: PackageDistributionSchema.optional(),
      uvx: PackageDistributionSchema.optional(),
    })
    .refine((distribution) => distribution.binary !== undefined || distribution.npx !== undefined || distribution.uvx !== undefined, {
      error: "must name at least one distribution (binary, npx or uvx)",
    }),
});
export type RegistryAgent = z.infer<typeof RegistryAgentSchema>;

export const RegistryDocumentSchema = z.object({
  version: z.string().optional(),
  agents: z.array(RegistryAgentSchema),
});
export type RegistryDocument = z.infer<typeof RegistryDocumentSchema>;

export const RegistryErrorCode = {
  /** The document could not be read (missing file, HTTP error, network). */
  unreachable: "registry_unreachable",
  /** It is not a registry document. */
  invalid: "registry_invalid",
  /** No agent has this id. */
  unknownAgent: "unknown_agent",
  /** The agent has no distribution this machine can install. */
  noCompatibleDistribution: "no_compatible_distribution",
  /** The archive's SHA-256 differs from the registry's. */
  checksumMismatch: "checksum_mismatch",
  /** A package manager or the archive step failed. */
  installFailed: "install_failed",
  /** `uv` is needed for a uvx distribution and is not on PATH. */
  uvMissing: "uv_not_installed",
  /** The agent was not prepared (or not this version). */
  notPrepared: "not_prepared",
} as const;
export type RegistryErrorCode = (typeof RegistryErrorCode)[keyof typeof RegistryErrorCode];

/** A catalog or install failure, with a message a person (or a model) can act on. */
export class RegistryError extends Error {
  constructor(
    readonly code: RegistryErrorCode,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options);
    this.name = "RegistryError";
  }
}

/** Reads and validates the registry at `location` (a file path, a file:// URL or an http(s) URL). */
export async function loadRegistry(location: string, fetchImpl: typeof fetch = fetch): Promise<RegistryDocument> {
  let text: string;
  try {
    if (/^https?:\/\//i.test(location)) {
      const response = await fetchImpl(location, { signal: AbortSignal.timeout(30_000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      text = await response.text();
    } else {
      text = await readFile(location.startsWith("file://") ? new URL(location) : location, "utf8");
    }
  } catch (error) {
    throw new RegistryError(RegistryErrorCode.unreachable, `cannot read the ACP registry at ${location}: ${messageOf(error)}`, { cause: error });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new RegistryError(RegistryErrorCode.invalid, `the ACP registry at ${location} is not JSON: ${messageOf(error)}`, { cause: error });
  }
  const parsed = RegistryDocumentSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? "" : `${issue.path.join(".")}: ${issue.message}`;
    throw new RegistryError(RegistryErrorCode.invalid, `the ACP registry at ${location} is not a registry document (${where})`);
  }
  return parsed.data;
}

/** Agents whose id, name or description contains every word of `query` (case-insensitive); all for an empty query. */
export function searchRegistry(document: RegistryDocument, query: string): RegistryAgent[] {
  const words = query.toLowerCase().split(/\s+/).filter((word) => word !== "");
  return document.agents.filter((agent) => {
    const haystack = `${agent.id} ${agent.name} ${agent.description}`.toLowerCase();
    return words.every((word) => haystack.includes(word));
  });
}

export function findAgent(document: RegistryDocument, agentId: string): RegistryAgent {
  const agent = document.agents.find((candidate) => candidate.id === agentId);
  if (agent === undefined) throw new RegistryError(RegistryErrorCode.unknownAgent, `the ACP registry has no agent "${agentId}"`);
  return agent;
}

/** This machine's registry platform key, or null on a platform the registry does not name. */
export function currentPlatform(platform: NodeJS.Platform = process.platform, arch: string = process.arch): PlatformTarget | null {
  const os = platform === "darwin" ? "darwin" : platform === "linux" ? "linux" : platform === "win32" ? "windows" : null;
  const cpu = arch === "x64" ? "x86_64" : arch === "arm64" ? "aarch64" : null;
  return os === null || cpu === null ? null : `${os}-${cpu}`;
}

export type DistributionChoice =
  | { readonly kind: "binary"; readonly target: BinaryTarget; readonly platform: PlatformTarget }
  | { readonly kind: "npx"; readonly spec: PackageDistribution }
  | { readonly kind: "uvx"; readonly spec: PackageDistribution };

/**
 * The distribution to install here: this platform's binary first (no
 * package manager needed), then npx, then uvx. One function for search,
 * prepare and runtime, so they always agree.
 */
export function chooseDistribution(agent: RegistryAgent, platform: PlatformTarget | null = currentPlatform()): DistributionChoice {
  const binary = platform === null ? undefined : agent.distribution.binary?.[platform];
  if (binary !== undefined && platform !== null) return { kind: "binary", target: binary, platform };
  if (agent.distribution.npx !== undefined) return { kind: "npx", spec: agent.distribution.npx };
  if (agent.distribution.uvx !== undefined) return { kind: "uvx", spec: agent.distribution.uvx };
  const offered = Object.keys(agent.distribution.binary ?? {}).join(", ");
  throw new RegistryError(RegistryErrorCode.noCompatibleDistribution, `agent "${agent.id}" has no distribution for ${platform ?? `${process.platform}-${process.arch}`} (binaries: ${offered === "" ? "none" : offered})`);
}
