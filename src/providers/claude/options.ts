import { z } from "zod";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import { RUNTIME_MODES } from "../../contracts/modes.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { defineDriverOptions } from "../kit/driverOptions.js";

/**
 * The `options` of a `claude` provider instance (docs/providers/claude.md).
 * Unknown keys are errors, so a typo in config.json is reported rather than
 * ignored.
 */

const NonEmpty = z.string({ error: "must be a string" }).trim().min(1, { error: "must not be empty" });

/** Only the wrong-type message is ours; unknown keys keep zod's message, which names them. */
function objectError(issue: { readonly code?: string }): string | undefined {
  return issue.code === "invalid_type" ? "must be an object" : undefined;
}

export const ClaudeOptionsSchema = z.strictObject(
  {
    /**
     * Environment of the Claude Code process, on top of Loom's own:
     * ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, and any Claude Code setting.
     */
    env: z.record(z.string(), z.string({ error: "must be a string" }), { error: "must be an object of strings" }).optional(),
    /** CLAUDE_CONFIG_DIR (a login's credentials live there); default: a fresh temp dir per session. */
    configDir: NonEmpty.optional(),
    /** A Claude Code executable to run instead of the one bundled with the SDK (2.1.261 or newer). */
    executablePath: NonEmpty.optional(),
    /** How long opening a session waits for Claude Code's initialize answer. */
    startupTimeoutMs: z
      .number({ error: "must be a number of milliseconds" })
      .int({ error: "must be a whole number of milliseconds" })
      .positive({ error: "must be greater than 0" })
      .optional(),
  },
  { error: objectError },
);

export interface ClaudeOptions {
  readonly env: Readonly<Record<string, string>>;
  readonly configDir: string | null;
  readonly executablePath: string | null;
  readonly startupTimeoutMs: number;
}

export const CLAUDE_DRIVER = "claude";
export const DEFAULT_CLAUDE_MODEL = "claude-sonnet-4-5";
export const DEFAULT_STARTUP_TIMEOUT_MS = 60_000;

/**
 * Steering: a user message streamed in while a turn runs is folded into that
 * turn by Claude Code (it answers it before the turn's one result message).
 * Restart is interrupt + a new turn, which always works. Resume: Claude Code
 * saves its sessions in the config dir Loom keeps per thread
 * (persistSession), and a later session continues the saved one (`resume`).
 * Fork stays off: the adapter contract cannot name a session to fork.
 */
export const DEFAULT_CLAUDE_CAPABILITIES: ProviderCapabilities = {
  steering: true,
  interrupt: true,
  restart: true,
  fork: false,
  resume: true,
  runtimeModes: RUNTIME_MODES,
  models: [DEFAULT_CLAUDE_MODEL],
  mcpTransport: "http",  // A short, curated catalog: capability answers list every current model (spec 000).
  curatedModels: true,
};

/** Validate an instance's options and apply defaults; `parse` throws DriverOptionsError naming every bad field. */
export const claudeOptions = defineDriverOptions({
  driver: CLAUDE_DRIVER,
  schema: ClaudeOptionsSchema,
  resolve: (options): ClaudeOptions => ({
    env: options.env ?? {},
    configDir: options.configDir ?? null,
    executablePath: options.executablePath ?? null,
    startupTimeoutMs: options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
  }),
});

export const parseClaudeOptions = claudeOptions.parse;

/** The capability record; only the model list depends on the instance. */
export function claudeCapabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
  return { ...DEFAULT_CLAUDE_CAPABILITIES, models: instance.models ?? DEFAULT_CLAUDE_CAPABILITIES.models };
}
