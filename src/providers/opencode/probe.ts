import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { ProviderProbe } from "../adapter.js";
import type { OpencodeOptions } from "./options.js";
import { firstLineOf } from "../kit/errorMessage.js";

/**
 * Where the opencode executable is and whether an instance can run: the
 * executable answers `--version`, and some model credential is configured.
 * A wrong key only shows when a turn runs.
 */

export const OPENCODE_PACKAGE = "opencode-ai";

/** Variables OpenCode's built-in providers read a key from. */
export const OPENCODE_CREDENTIAL_VARIABLES = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_GENERATIVE_AI_API_KEY",
  "OPENROUTER_API_KEY",
  "XAI_API_KEY",
  "GROQ_API_KEY",
  "DEEPSEEK_API_KEY",
  "OPENCODE_API_KEY",
] as const;

export interface ProbeEnvironment {
  readonly processEnv: Readonly<Record<string, string | undefined>>;
  readonly packageBinary: () => string | null;
  readonly exists: (path: string) => boolean;
  /** Runs `<executable> --version`; resolves with its output, rejects when it cannot run. */
  readonly version: (command: string) => Promise<string>;
}

export function defaultProbeEnvironment(): ProbeEnvironment {
  return { processEnv: process.env, packageBinary: installedBinary, exists: existsSync, version: opencodeVersion };
}

/**
 * The native binary of the installed opencode-ai package: its bin/opencode.exe
 * (the platform binary, linked there by its postinstall), else the platform
 * package's own binary.
 */
export function installedBinary(): string | null {
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve(`${OPENCODE_PACKAGE}/package.json`);
  } catch {
    return null;
  }
  const linked = join(dirname(manifest), "bin", "opencode.exe");
  const local = createRequire(manifest);
  const os = process.platform === "win32" ? "windows" : process.platform;
  const names = [`opencode-${os}-${process.arch}`, `opencode-${os}-${process.arch}-baseline`, `opencode-${os}-${process.arch}-musl`, `opencode-${os}-${process.arch}-baseline-musl`];
  for (const name of names) {
    try {
      const binary = join(dirname(local.resolve(`${name}/package.json`)), "bin", process.platform === "win32" ? "opencode.exe" : "opencode");
      if (existsSync(binary)) return binary;
    } catch {
      // not installed for this platform variant
    }
  }
  return existsSync(linked) ? linked : null;
}

/** options.binaryPath, else the installed package's binary, else `opencode` on PATH. */
export function resolveExecutable(options: Pick<OpencodeOptions, "binaryPath">, packageBinary: () => string | null = installedBinary): string {
  return options.binaryPath ?? packageBinary() ?? "opencode";
}

export function opencodeVersion(command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, ["--version"], { timeout: 30_000, windowsHide: true, env: { ...process.env, OPENCODE_DISABLE_AUTOUPDATE: "1" } }, (error: Error | null, stdout) => {
      if (error !== null) reject(error);
      else resolve(String(stdout).trim());
    });
  });
}

export async function probeOpencode(options: OpencodeOptions, env: ProbeEnvironment = defaultProbeEnvironment()): Promise<ProviderProbe> {
  const command = resolveExecutable(options, env.packageBinary);
  let installProblem: string | null = null;
  try {
    await env.version(command);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    installProblem = code === "ENOENT" || code === "EACCES" ? `opencode executable not found at ${command}` : `opencode --version failed (${command}): ${firstLineOf(error)}`;
  }
  const credentialProblem = credentialsProblem(options, env);
  const reasons = [installProblem, credentialProblem].filter((reason): reason is string => reason !== null);
  return { installed: installProblem === null, authenticated: credentialProblem === null, reason: reasons.length === 0 ? null : reasons.join("; ") };
}

/** Null when some model credential is configured; otherwise what to set. */
export function credentialsProblem(options: OpencodeOptions, env: Pick<ProbeEnvironment, "processEnv" | "exists">): string | null {
  const lookup = (name: string): string => options.env[name] ?? env.processEnv[name] ?? "";
  const custom = options.modelProvider;
  if (custom !== null) {
    if (custom.envKey === null || lookup(custom.envKey) !== "") return null;
    return `no API key: set ${custom.envKey} in options.env or Loom's environment (options.modelProvider.envKey)`;
  }
  const provider = options.config.provider;
  if (typeof provider === "object" && provider !== null && Object.keys(provider).length > 0) return null;
  if (options.home !== null && env.exists(join(options.home, ".local", "share", "opencode", "auth.json"))) return null;
  if (OPENCODE_CREDENTIAL_VARIABLES.some((name) => lookup(name) !== "")) return null;
  return `no model credentials: set options.modelProvider, a provider in options.config, one of ${OPENCODE_CREDENTIAL_VARIABLES.join(", ")}, or options.home with an \`opencode auth login\``;
}
