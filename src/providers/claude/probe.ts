import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { ProviderProbe } from "../adapter.js";
import type { ClaudeOptions } from "./options.js";

/**
 * Whether a claude instance can run: the SDK package resolves and a Claude
 * Code executable exists (the SDK's bundled one, or options.executablePath),
 * and some credential is configured. Nothing is spawned and no request is
 * made, so a wrong key only shows when a turn runs.
 */

export const CLAUDE_SDK_PACKAGE = "@anthropic-ai/claude-agent-sdk";

/** Variables that carry a credential Claude Code uses without a login. */
const CREDENTIAL_VARIABLES = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"] as const;
/** Cloud providers authenticate with their own credentials, which are not checked here. */
const CLOUD_SWITCHES = ["CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"] as const;

export interface ProbeEnvironment {
  readonly processEnv: Readonly<Record<string, string | undefined>>;
  /** Resolves a package specifier to a file path; throws when it does not resolve. */
  readonly resolve: (specifier: string, from?: string) => string;
  readonly exists: (path: string) => boolean;
  readonly platform: NodeJS.Platform;
  readonly arch: string;
  readonly musl: boolean;
}

export function defaultProbeEnvironment(): ProbeEnvironment {
  const local = createRequire(import.meta.url);
  return {
    processEnv: process.env,
    resolve: (specifier, from) => (from === undefined ? local : createRequire(from)).resolve(specifier),
    exists: existsSync,
    platform: process.platform,
    arch: process.arch,
    musl: isMusl(),
  };
}

export function probeClaude(options: ClaudeOptions, env: ProbeEnvironment = defaultProbeEnvironment()): ProviderProbe {
  const installed = installationProblem(options, env);
  const authenticated = credentialProblem(options, env);
  const reasons = [installed, authenticated].filter((reason): reason is string => reason !== null);
  return { installed: installed === null, authenticated: authenticated === null, reason: reasons.length === 0 ? null : reasons.join("; ") };
}

/** The bundled Claude Code binary the SDK would start, or null. Same search order as the SDK. */
export function bundledExecutable(env: ProbeEnvironment, sdkEntry: string): string | null {
  const binary = env.platform === "win32" ? "claude.exe" : "claude";
  const base = `${CLAUDE_SDK_PACKAGE}-`;
  const packages =
    env.platform === "linux"
      ? env.musl
        ? [`${base}linux-${env.arch}-musl`, `${base}linux-${env.arch}`]
        : [`${base}linux-${env.arch}`, `${base}linux-${env.arch}-musl`]
      : [`${base}${env.platform}-${env.arch}`];
  for (const name of packages) {
    try {
      const path = env.resolve(`${name}/${binary}`, sdkEntry);
      if (env.exists(path)) return path;
    } catch {
      // not installed for this platform; try the next
    }
  }
  return null;
}

/** Why Claude Code cannot be started (no SDK, no executable), or null when it can. */
export function installationProblem(options: ClaudeOptions, env: ProbeEnvironment = defaultProbeEnvironment()): string | null {
  let sdkEntry: string;
  try {
    sdkEntry = env.resolve(CLAUDE_SDK_PACKAGE);
  } catch {
    return `the Claude Agent SDK (${CLAUDE_SDK_PACKAGE}) is not installed next to Loom`;
  }
  if (options.executablePath !== null) {
    return env.exists(options.executablePath) ? null : `the Claude Code executable in options.executablePath does not exist: ${options.executablePath}`;
  }
  if (bundledExecutable(env, sdkEntry) !== null) return null;
  return `the Claude Agent SDK has no bundled Claude Code executable for ${env.platform}-${env.arch}; install the platform package or set options.executablePath`;
}

function credentialProblem(options: ClaudeOptions, env: ProbeEnvironment): string | null {
  const value = (name: string): string | undefined => options.env[name] ?? env.processEnv[name];
  if (CREDENTIAL_VARIABLES.some((name) => (value(name) ?? "").trim() !== "")) return null;
  if (CLOUD_SWITCHES.some((name) => isTruthy(value(name)))) return null;
  if (options.configDir !== null && env.exists(join(options.configDir, ".credentials.json"))) return null;
  return "no Anthropic credentials: set ANTHROPIC_API_KEY in the instance's options.env or in Loom's environment, or point options.configDir at a Claude config dir that holds a login";
}

function isTruthy(value: string | undefined): boolean {
  return value !== undefined && ["1", "true", "yes"].includes(value.trim().toLowerCase());
}

function isMusl(): boolean {
  if (process.platform !== "linux") return false;
  const report = typeof process.report?.getReport === "function" ? (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }) : null;
  return report !== null && report.header?.glibcVersionRuntime === undefined;
}

