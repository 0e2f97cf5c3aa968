import { existsSync, readFileSync, readdirSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";

/**
 * Loom's managed, versioned cache of prepared registry agents, under the
 * state directory:
 *
 *   <state-dir>/acp-agents/<agent>/<version>/loom-install.json   what was installed and how to launch it
 *   <state-dir>/acp-agents/<agent>/<version>/...                 the package or the unpacked archive
 *   <state-dir>/acp-agents/<agent>/current.json                  { "version": ... } the last prepared one
 *
 * An install is built in a sibling temp dir and renamed into place only when
 * it is complete, so a failed one leaves nothing behind.
 */

export const CACHE_DIR_NAME = "acp-agents";
const MANIFEST = "loom-install.json";
const CURRENT = "current.json";

export const InstalledAgentSchema = z.object({
  agentId: z.string(),
  name: z.string(),
  version: z.string(),
  distribution: z.enum(["binary", "npx", "uvx"]),
  /** Absolute path of the executable. */
  command: z.string(),
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  /** The verified archive checksum (binary distributions that declare one), else null. */
  sha256: z.string().nullable(),
  /** Where it came from: the archive URL or the package spec. */
  source: z.string(),
  installedAt: z.string(),
});
export type InstalledAgent = z.infer<typeof InstalledAgentSchema>;

export function acpCacheRoot(stateDir: string): string {
  return join(stateDir, CACHE_DIR_NAME);
}

export function agentVersionDir(cacheRoot: string, agentId: string, version: string): string {
  return join(cacheRoot, agentId, version);
}

/** A fresh staging dir beside the final one; the caller renames or removes it. */
export async function stagingDir(cacheRoot: string, agentId: string): Promise<string> {
  const dir = join(cacheRoot, agentId, `.staging-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Moves a complete staging dir into place (replacing an older install of the same version) and marks it current. */
export async function commitInstall(cacheRoot: string, staging: string, installed: InstalledAgent): Promise<void> {
  await writeFile(join(staging, MANIFEST), `${JSON.stringify(installed, null, 2)}\n`);
  const target = agentVersionDir(cacheRoot, installed.agentId, installed.version);
  await rm(target, { recursive: true, force: true });
  await rename(staging, target);
  await writeFile(join(cacheRoot, installed.agentId, CURRENT), `${JSON.stringify({ version: installed.version })}\n`);
}

/** Reads one install; null when absent or unreadable. */
function readManifest(dir: string): InstalledAgent | null {
  const path = join(dir, MANIFEST);
  if (!existsSync(path)) return null;
  try {
    const parsed = InstalledAgentSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * The prepared install of `agentId`: the given version, else the current
 * one. Synchronous and cheap (two small files): the driver calls it on every
 * session start.
 */
export function findInstalled(cacheRoot: string, agentId: string, version: string | null = null): InstalledAgent | null {
  let wanted = version;
  if (wanted === null) {
    try {
      const current = JSON.parse(readFileSync(join(cacheRoot, agentId, CURRENT), "utf8")) as { version?: unknown };
      wanted = typeof current.version === "string" ? current.version : null;
    } catch {
      return null;
    }
  }
  return wanted === null ? null : readManifest(agentVersionDir(cacheRoot, agentId, wanted));
}

/** Every prepared install in the cache, by agent then version. */
export function listInstalled(cacheRoot: string): InstalledAgent[] {
  if (!existsSync(cacheRoot)) return [];
  const found: InstalledAgent[] = [];
  for (const agent of readdirSync(cacheRoot, { withFileTypes: true })) {
    if (!agent.isDirectory()) continue;
    for (const version of readdirSync(join(cacheRoot, agent.name), { withFileTypes: true })) {
      if (!version.isDirectory() || version.name.startsWith(".staging-")) continue;
      const manifest = readManifest(join(cacheRoot, agent.name, version.name));
      if (manifest !== null) found.push(manifest);
    }
  }
  return found.sort((a, b) => a.agentId.localeCompare(b.agentId) || a.version.localeCompare(b.version));
}
