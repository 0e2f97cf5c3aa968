import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { ProviderProbe } from "../adapter.js";
import type { PiOptions } from "./options.js";
import { firstLineOf } from "../kit/errorMessage.js";

/**
 * Where pi is and whether an instance can run: `pi --version` answers, and
 * some model credential is configured (a custom endpoint, a provider key in
 * the environment, or an agent dir with auth.json or models.json).
 */

export const PI_PACKAGE = "@mariozechner/pi-coding-agent";

/** Variables Pi's built-in providers read a key from (docs/providers.md of @mariozechner/pi-coding-agent). */
export const PI_CREDENTIAL_VARIABLES = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "XAI_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", "MISTRAL_API_KEY"] as const;

/** How to start pi: `command ...prefixArgs <pi arguments>`. */
export interface PiExecutable {
  readonly command: string;
  readonly prefixArgs: readonly string[];
  readonly display: string;
}

export interface ProbeEnvironment {
  readonly processEnv: Readonly<Record<string, string | undefined>>;
  readonly packageCli: () => string | null;
  readonly exists: (path: string) => boolean;
  readonly version: (executable: PiExecutable) => Promise<string>;
}

export function defaultProbeEnvironment(): ProbeEnvironment {
  return { processEnv: process.env, packageCli: installedCli, exists: existsSync, version: piVersion };
}

/**
 * dist/cli.js of the installed package (pure JS, run by this Node). The
 * package's `exports` hide both its package.json and its CLI from
 * `require.resolve`, so look in each node_modules folder Node would search.
 */
export function installedCli(exists: (path: string) => boolean = existsSync): string | null {
  const folders = createRequire(import.meta.url).resolve.paths(PI_PACKAGE) ?? [];
  for (const folder of folders) {
    const cli = join(folder, PI_PACKAGE, "dist", "cli.js");
    if (exists(cli)) return cli;
  }
  return null;
}

export function resolveExecutable(options: Pick<PiOptions, "binaryPath">, packageCli: () => string | null = installedCli): PiExecutable {
  if (options.binaryPath !== null) return { command: options.binaryPath, prefixArgs: [], display: options.binaryPath };
  const cli = packageCli();
  if (cli !== null) return { command: process.execPath, prefixArgs: [cli], display: cli };
  return { command: "pi", prefixArgs: [], display: "pi (on PATH)" };
}

export function piVersion(executable: PiExecutable): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(executable.command, [...executable.prefixArgs, "--version"], { timeout: 30_000, windowsHide: true, env: { ...process.env, PI_OFFLINE: "1" } }, (error: Error | null, stdout, stderr) => {
      if (error !== null) reject(error);
      else resolve(`${String(stdout)}${String(stderr)}`.trim());
    });
  });
}

export async function probePi(options: PiOptions, env: ProbeEnvironment = defaultProbeEnvironment()): Promise<ProviderProbe> {
  const executable = resolveExecutable(options, env.packageCli);
  let installProblem: string | null = null;
  try {
    await env.version(executable);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    installProblem = code === "ENOENT" || code === "EACCES" ? `pi executable not found at ${executable.display}` : `pi --version failed (${executable.display}): ${firstLineOf(error)}`;
  }
  const credentialProblem = credentialsProblem(options, env);
  const reasons = [installProblem, credentialProblem].filter((reason): reason is string => reason !== null);
  return { installed: installProblem === null, authenticated: credentialProblem === null, reason: reasons.length === 0 ? null : reasons.join("; ") };
}

export function credentialsProblem(options: PiOptions, env: Pick<ProbeEnvironment, "processEnv" | "exists">): string | null {
  const lookup = (name: string): string => options.env[name] ?? env.processEnv[name] ?? "";
  const custom = options.modelProvider;
  if (custom !== null) {
    if (custom.envKey === null || lookup(custom.envKey) !== "") return null;
    return `no API key: set ${custom.envKey} in options.env or Loom's environment (options.modelProvider.envKey)`;
  }
  if (options.agentDir !== null && (env.exists(join(options.agentDir, "auth.json")) || env.exists(join(options.agentDir, "models.json")))) return null;
  if (PI_CREDENTIAL_VARIABLES.some((name) => lookup(name) !== "")) return null;
  return `no model credentials: set options.modelProvider, one of ${PI_CREDENTIAL_VARIABLES.join(", ")}, or options.agentDir with a Pi auth.json or models.json`;
}
