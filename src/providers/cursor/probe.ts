import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ProviderProbe } from "../adapter.js";
import type { CursorOptions } from "./options.js";

/**
 * Whether a cursor instance can run. Cursor's agent runs its model on
 * Cursor's backend, so it needs the SDK, a Node it supports, and a
 * credential: CURSOR_API_KEY (the instance's env or Loom's) or the login the
 * SDK stores (`Cursor.auth.login()`, ~/.cursor/sdk/auth.json). Nothing is
 * sent to Cursor here: a wrong key shows when the agent starts.
 */

export const CURSOR_SDK_PACKAGE = "@cursor/sdk";
/** The SDK's declared engine (package.json "engines": ">=22.13"). */
export const MIN_NODE: readonly [number, number] = [22, 13];

export interface ProbeEnvironment {
  readonly processEnv: Readonly<Record<string, string | undefined>>;
  readonly resolveSdk: () => boolean;
  readonly exists: (path: string) => boolean;
  readonly home: string;
  readonly nodeVersion: string;
}

export function defaultProbeEnvironment(): ProbeEnvironment {
  return {
    processEnv: process.env,
    resolveSdk: () => {
      try {
        createRequire(import.meta.url).resolve(CURSOR_SDK_PACKAGE);
        return true;
      } catch {
        return false;
      }
    },
    exists: existsSync,
    home: homedir(),
    nodeVersion: process.versions.node,
  };
}

/** CURSOR_API_KEY from the instance's env, else Loom's; null when neither has one. */
export function apiKeyOf(options: CursorOptions, processEnv: Readonly<Record<string, string | undefined>>): string | null {
  const key = (options.env.CURSOR_API_KEY ?? processEnv.CURSOR_API_KEY ?? "").trim();
  return key === "" ? null : key;
}

export function storedLoginPath(home: string): string {
  return join(home, ".cursor", "sdk", "auth.json");
}

export function installationProblem(env: Pick<ProbeEnvironment, "resolveSdk" | "nodeVersion">): string | null {
  if (!env.resolveSdk()) return `the Cursor SDK (${CURSOR_SDK_PACKAGE}) is not installed next to Loom`;
  const [major = 0, minor = 0] = env.nodeVersion.split(".").map(Number);
  const [needMajor, needMinor] = MIN_NODE;
  if (major < needMajor || (major === needMajor && minor < needMinor)) return `the Cursor SDK needs Node ${needMajor}.${needMinor} or newer; Loom runs on Node ${env.nodeVersion}`;
  return null;
}

export function probeCursor(options: CursorOptions, env: ProbeEnvironment = defaultProbeEnvironment()): ProviderProbe {
  const install = installationProblem(env);
  const hasCredential = apiKeyOf(options, env.processEnv) !== null || env.exists(storedLoginPath(env.home));
  const credential = hasCredential ? null : `no Cursor credentials: set CURSOR_API_KEY (in options.env or Loom's environment) or log in with the Cursor SDK (Cursor.auth.login stores ${storedLoginPath(env.home)}); Cursor's agent needs Cursor's backend and cannot run offline`;
  const reasons = [install, credential].filter((reason): reason is string => reason !== null);
  return { installed: install === null, authenticated: credential === null, reason: reasons.length === 0 ? null : reasons.join("; ") };
}
