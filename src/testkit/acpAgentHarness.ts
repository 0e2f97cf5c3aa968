import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ProviderInstanceConfig } from "../config/config.js";
import type { NormalizedProviderEvent } from "../providers/events.js";

/**
 * Helpers for tests that run the scripted ACP agent (acpScriptedAgent.mjs):
 * instance configs pointing at it, a script builder, the agent's request log
 * and waiting on events.
 */

export const SCRIPTED_AGENT_PATH = fileURLToPath(new URL("./acpScriptedAgent.mjs", import.meta.url));

export interface ScriptedAgentCaps {
  readonly loadSession?: boolean;
  /** session/load is advertised but fails (the session is unknown to the agent). */
  readonly failLoad?: boolean;
  readonly fork?: boolean;
  readonly http?: boolean;
  readonly models?: readonly string[];
  readonly modes?: readonly string[];
  readonly authMethods?: readonly string[];
  readonly requireAuth?: boolean;
  /** Sent as available_commands_update right after session/new answers. */
  readonly commands?: readonly { readonly name: string; readonly description: string; readonly input?: { readonly hint: string } }[];
}

export interface ScriptedAgentSetup {
  readonly dir: string;
  readonly logFile: string;
  instance(options?: { readonly id?: string; readonly driver?: string; readonly caps?: ScriptedAgentCaps; readonly options?: Record<string, unknown>; readonly models?: readonly string[] }): ProviderInstanceConfig;
  /** Every request the agent received so far, in order. */
  requests(): { method: string; params: Record<string, unknown> }[];
  close(): void;
}

export function scriptedAgentSetup(): ScriptedAgentSetup {
  const dir = mkdtempSync(join(tmpdir(), "loom-acp-agent-"));
  const logFile = join(dir, "requests.jsonl");
  return {
    dir,
    logFile,
    instance(spec = {}) {
      return {
        id: spec.id ?? "acp",
        driver: spec.driver ?? "acp",
        enabled: true,
        displayName: null,
        models: spec.models ?? null,
        options: {
          command: process.execPath,
          args: [SCRIPTED_AGENT_PATH],
          env: { LOOM_ACP_AGENT_CAPS: JSON.stringify(spec.caps ?? {}), LOOM_ACP_AGENT_LOG: logFile },
          interruptGraceMs: 5_000,
          ...spec.options,
        },
      };
    },
    requests() {
      try {
        return readFileSync(logFile, "utf8")
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line) as { method: string; params: Record<string, unknown> });
      } catch {
        return [];
      }
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A prompt the scripted agent runs step by step. */
export function acpScript(...steps: readonly Record<string, unknown>[]): string {
  return JSON.stringify({ acpScript: steps });
}

/** Resolves with the first event (already seen or arriving) that matches; rejects after `timeoutMs`. */
export async function waitForEvent(events: readonly NormalizedProviderEvent[], match: (event: NormalizedProviderEvent) => boolean, what: string, timeoutMs = 15_000): Promise<NormalizedProviderEvent> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = events.find(match);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; events: ${JSON.stringify(events)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
