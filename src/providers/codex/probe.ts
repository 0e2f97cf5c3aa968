import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { ProviderProbe } from "../adapter.js";
import type { CodexOptions } from "./options.js";
import { firstLineOf } from "../kit/errorMessage.js";

/**
 * Where the codex executable is and whether an instance can run: the
 * executable answers `--version`, and some credential is configured. A wrong
 * key only shows when a turn runs.
 */

export const CODEX_PACKAGE = "@openai/codex";

/** How to start codex: `command ...prefixArgs <codex arguments>`. */
export interface CodexExecutable {
  readonly command: string;
  readonly prefixArgs: readonly string[];
  /** For messages: the path or name that was looked for. */
  readonly display: string;
}

export interface ProbeEnvironment {
  readonly processEnv: Readonly<Record<string, string | undefined>>;
  /** The installed package's launcher (bin/codex.js), or null. */
  readonly packageLauncher: () => string | null;
  readonly exists: (path: string) => boolean;
  /** Runs the executable with `--version`; resolves with its output, rejects when it cannot run. */
  readonly version: (executable: CodexExecutable) => Promise<string>;
}

export function defaultProbeEnvironment(): ProbeEnvironment {
  return { processEnv: process.env, packageLauncher: installedLauncher, exists: existsSync, version: codexVersion };
}

/** bin/codex.js of the @openai/codex package Loom depends on. */
export function installedLauncher(): string | null {
  try {
    const manifest = createRequire(import.meta.url).resolve(`${CODEX_PACKAGE}/package.json`);
    const launcher = join(dirname(manifest), "bin", "codex.js");
    return existsSync(launcher) ? launcher : null;
  } catch {
    return null;
  }
}

/**
 * options.binaryPath, else the installed package's launcher run by this
 * Node (it starts the native binary for the platform), else `codex` on PATH.
 */
export function resolveExecutable(options: CodexOptions, packageLauncher: () => string | null = installedLauncher): CodexExecutable {
  if (options.binaryPath !== null) return { command: options.binaryPath, prefixArgs: [], display: options.binaryPath };
  const launcher = packageLauncher();
  if (launcher !== null) return { command: process.execPath, prefixArgs: [launcher], display: launcher };
  return { command: "codex", prefixArgs: [], display: "codex (on PATH)" };
}

export function codexVersion(executable: CodexExecutable): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(executable.command, [...executable.prefixArgs, "--version"], { timeout: 15_000, windowsHide: true }, (error: Error | null, stdout) => {
      if (error !== null) reject(error);
      else resolve(stdout.trim());
    });
  });
}

/** Variables the built-in OpenAI provider reads an API key from. */
const OPENAI_KEY_VARIABLES = ["OPENAI_API_KEY", "CODEX_API_KEY"] as const;

export async function probeCodex(options: CodexOptions, env: ProbeEnvironment = defaultProbeEnvironment()): Promise<ProviderProbe> {
  const executable = resolveExecutable(options, env.packageLauncher);
  let installed = true;
  let installProblem: string | null = null;
  try {
    await env.version(executable);
  } catch (error) {
    installed = false;
    const code = (error as NodeJS.ErrnoException).code;
    installProblem =
      code === "ENOENT" || code === "EACCES" ? `codex executable not found at ${executable.display}` : `codex --version failed (${executable.display}): ${firstLineOf(error)}`;
  }
  const credentialProblem = credentialsProblem(options, env);
  const reasons = [installProblem, credentialProblem].filter((reason): reason is string => reason !== null);
  return { installed, authenticated: credentialProblem === null, reason: reasons.length === 0 ? null : reasons.join("; ") };
}

/** Null when a credential is configured; otherwise what to set. */
export function credentialsProblem(options: CodexOptions, env: Pick<ProbeEnvironment, "processEnv" | "exists">): string | null {
  const lookup = (name: string): string | undefined => options.env[name] ?? env.processEnv[name];
  const provider = options.modelProvider;
  if (provider !== null) {
    if (provider.envKey === null || (lookup(provider.envKey) ?? "") !== "") return null;
    return `no credentials: options.modelProvider.envKey ${provider.envKey} is not set in options.env or Loom's environment`;
  }
  if (OPENAI_KEY_VARIABLES.some((name) => (lookup(name) ?? "") !== "")) return null;
  // Only a configured CODEX_HOME is seen by sessions; the default is a fresh temp dir.
  if (options.codexHome !== null && env.exists(join(options.codexHome, "auth.json"))) return null;
  return "no credentials: set options.modelProvider and its env key, or OPENAI_API_KEY (or options.codexHome with a codex login)";
}
