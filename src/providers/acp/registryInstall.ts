import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chmod, readdir, rm, rmdir, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import type { BinaryTarget, DistributionChoice, PackageDistribution, PlatformTarget, RegistryAgent } from "./registry.js";
import { RegistryError, RegistryErrorCode, chooseDistribution, currentPlatform } from "./registry.js";
import { type InstalledAgent, commitInstall, stagingDir } from "./registryCache.js";
import { messageOf } from "../kit/errorMessage.js";

/**
 * Preparing a registry agent: its distribution is installed into Loom's
 * versioned cache (registryCache.ts), never globally.
 *
 *   npx     `npm install --prefix <cache>/<agent>/<version> <package>`; the command is the package's bin
 *   binary  the archive is downloaded, its declared sha256 verified (a mismatch is refused and
 *           nothing is kept), then unpacked (.tar.gz, .tgz, .tar.bz2, .tbz2, .zip, or a raw binary)
 *   uvx     `uv tool install` with uv's tool and bin dirs inside the cache, when uv is installed
 *
 * Every failure is a RegistryError and leaves nothing installed.
 */

export interface InstallEnvironment {
  /** Downloads an archive (http, https, file). */
  readonly fetch: typeof fetch;
  /** Runs a program; rejects with its stderr when it fails or is missing (error.code "ENOENT"). */
  readonly run: (command: string, args: readonly string[], options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv }) => Promise<string>;
  readonly platform: PlatformTarget | null;
  readonly now: () => Date;
}

export function defaultInstallEnvironment(): InstallEnvironment {
  return { fetch, run: runProgram, platform: currentPlatform(), now: () => new Date() };
}

export function runProgram(command: string, args: readonly string[], options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv }): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(command, [...args], { cwd: options.cwd, env: options.env ?? process.env, maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 }, (error, stdout, stderr) => {
      if (error === null) resolvePromise(stdout);
      else reject(Object.assign(new Error(`${command} ${args.join(" ")} failed: ${(stderr || error.message).trim().split("\n").slice(-5).join(" | ")}`), { code: (error as NodeJS.ErrnoException).code }));
    });
  });
}

/** Install `agent` into the cache under `cacheRoot` and mark it current. */
export async function installRegistryAgent(agent: RegistryAgent, cacheRoot: string, env: InstallEnvironment = defaultInstallEnvironment()): Promise<InstalledAgent> {
  const choice = chooseDistribution(agent, env.platform);
  const staging = await stagingDir(cacheRoot, agent.id);
  try {
    const launch = await installInto(choice, staging, env);
    const installed: InstalledAgent = {
      agentId: agent.id,
      name: agent.name,
      version: agent.version,
      distribution: choice.kind,
      command: join(cacheRoot, agent.id, agent.version, relative(staging, launch.command)),
      args: launch.args,
      env: launch.env,
      sha256: launch.sha256,
      source: launch.source,
      installedAt: env.now().toISOString(),
    };
    await commitInstall(cacheRoot, staging, installed);
    return installed;
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    await rmdir(join(cacheRoot, agent.id)).catch(() => undefined); // only when empty: an earlier install stays
    if (error instanceof RegistryError) throw error;
    throw new RegistryError(RegistryErrorCode.installFailed, `preparing ${agent.id} ${agent.version} failed: ${messageOf(error)}`, { cause: error });
  }
}

interface Launch {
  readonly command: string;
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly sha256: string | null;
  readonly source: string;
}

async function installInto(choice: DistributionChoice, dir: string, env: InstallEnvironment): Promise<Launch> {
  switch (choice.kind) {
    case "npx":
      return installNpm(choice.spec, dir, env);
    case "binary":
      return installBinary(choice.target, dir, env);
    case "uvx":
      return installUv(choice.spec, dir, env);
    default: {
      const unexpected: never = choice;
      throw new Error(`unexpected distribution ${JSON.stringify(unexpected)}`);
    }
  }
}

/** "@scope/name@1.2.3" → "@scope/name"; "name" → "name". */
export function packageName(spec: string): string {
  const at = spec.lastIndexOf("@");
  return at > 0 ? spec.slice(0, at) : spec;
}

async function installNpm(spec: PackageDistribution, dir: string, env: InstallEnvironment): Promise<Launch> {
  // A package.json of our own keeps npm from walking up to some enclosing project.
  await writeFile(join(dir, "package.json"), `${JSON.stringify({ name: "loom-acp-agent", private: true })}\n`);
  try {
    await env.run("npm", ["install", "--prefix", dir, "--no-audit", "--no-fund", "--save-exact", spec.package], { cwd: dir });
  } catch (error) {
    throw new RegistryError(RegistryErrorCode.installFailed, `npm could not install ${spec.package}: ${messageOf(error)}`, { cause: error });
  }
  const name = packageName(spec.package);
  const manifestPath = join(dir, "node_modules", ...name.split("/"), "package.json");
  const bin = (JSON.parse(readFileSync(manifestPath, "utf8")) as { bin?: unknown }).bin;
  const binName = spec.cmd ?? defaultBin(name, bin);
  const command = join(dir, "node_modules", ".bin", binName);
  if (!existsSync(command)) throw new RegistryError(RegistryErrorCode.installFailed, `${spec.package} installed no executable "${binName}"`);
  return { command, args: spec.args ?? [], env: spec.env ?? {}, sha256: null, source: `npm:${spec.package}` };
}

function defaultBin(name: string, bin: unknown): string {
  const base = name.split("/").at(-1) ?? name;
  if (typeof bin === "string") return base;
  if (typeof bin === "object" && bin !== null) {
    const names = Object.keys(bin);
    if (names.length === 1 && names[0] !== undefined) return names[0];
    if (names.includes(base)) return base;
    throw new RegistryError(RegistryErrorCode.installFailed, `${name} has several executables (${names.join(", ")}); the registry entry must name one as "cmd"`);
  }
  throw new RegistryError(RegistryErrorCode.installFailed, `${name} has no executable`);
}

async function installBinary(target: BinaryTarget, dir: string, env: InstallEnvironment): Promise<Launch> {
  let bytes: Buffer;
  try {
    const response = await env.fetch(target.archive, { signal: AbortSignal.timeout(10 * 60_000) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    bytes = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    throw new RegistryError(RegistryErrorCode.installFailed, `cannot download ${target.archive}: ${messageOf(error)}`, { cause: error });
  }
  const digest = createHash("sha256").update(bytes).digest("hex");
  if (target.sha256 !== undefined && digest !== target.sha256.toLowerCase()) {
    throw new RegistryError(RegistryErrorCode.checksumMismatch, `the archive ${target.archive} has SHA-256 ${digest}, the registry declares ${target.sha256.toLowerCase()}; nothing was installed`);
  }
  const archiveName = basename(new URL(target.archive).pathname) || "agent";
  const lower = archiveName.toLowerCase();
  const command = resolve(dir, target.cmd);
  if (relative(dir, command).startsWith("..")) throw new RegistryError(RegistryErrorCode.installFailed, `the registry's cmd "${target.cmd}" points outside the install`);
  if (lower.endsWith(".tar.gz") || lower.endsWith(".tgz") || lower.endsWith(".tar.bz2") || lower.endsWith(".tbz2") || lower.endsWith(".zip")) {
    const archivePath = join(dir, `.download-${archiveName}`);
    await writeFile(archivePath, bytes);
    try {
      if (lower.endsWith(".zip")) await env.run("unzip", ["-q", "-o", archivePath, "-d", dir], { cwd: dir });
      else await env.run("tar", [lower.endsWith("bz2") ? "-xjf" : "-xzf", archivePath, "-C", dir], { cwd: dir });
    } catch (error) {
      throw new RegistryError(RegistryErrorCode.installFailed, `cannot unpack ${archiveName}: ${messageOf(error)}`, { cause: error });
    } finally {
      await rm(archivePath, { force: true });
    }
  } else if (/\.(dmg|pkg|deb|rpm|msi|appimage)$/i.test(lower)) {
    throw new RegistryError(RegistryErrorCode.noCompatibleDistribution, `installer archives (${archiveName}) are not supported`);
  } else {
    await writeFile(command, bytes);
  }
  if (!existsSync(command)) {
    const top = (await readdir(dir)).join(", ");
    throw new RegistryError(RegistryErrorCode.installFailed, `the archive has no ${target.cmd} (it holds: ${top === "" ? "nothing" : top})`);
  }
  await chmod(command, 0o755);
  return { command, args: target.args ?? [], env: target.env ?? {}, sha256: digest, source: target.archive };
}

async function installUv(spec: PackageDistribution, dir: string, env: InstallEnvironment): Promise<Launch> {
  try {
    await env.run("uv", ["--version"], { cwd: dir });
  } catch (error) {
    throw new RegistryError(RegistryErrorCode.uvMissing, `uv not installed: ${spec.package} is a uvx (PyPI) distribution; install uv, or point options.command at a local executable`, { cause: error });
  }
  const toolDir = join(dir, "tools");
  const binDir = join(dir, "bin");
  try {
    await env.run("uv", ["tool", "install", "--force", spec.package], { cwd: dir, env: { ...process.env, UV_TOOL_DIR: toolDir, UV_TOOL_BIN_DIR: binDir } });
  } catch (error) {
    throw new RegistryError(RegistryErrorCode.installFailed, `uv could not install ${spec.package}: ${messageOf(error)}`, { cause: error });
  }
  const name = spec.cmd ?? pythonPackageName(spec.package);
  const command = join(binDir, name);
  if (!existsSync(command)) throw new RegistryError(RegistryErrorCode.installFailed, `${spec.package} installed no executable "${name}" in ${dirname(command)}`);
  return { command, args: spec.args ?? [], env: spec.env ?? {}, sha256: null, source: `pypi:${spec.package}` };
}

/** "name==1.2", "name@1.2", "name[extra]" → "name". */
function pythonPackageName(spec: string): string {
  return spec.split(/[=@<>![\s]/)[0] ?? spec;
}
