import { z } from "zod";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { defineDriverOptions } from "../kit/driverOptions.js";

/** The `options` of a `cursor` provider instance (docs/providers/cursor.md). Unknown keys are errors. */

export const CURSOR_DRIVER = "cursor";

const PositiveMs = z
  .number({ error: "must be a number of milliseconds" })
  .int({ error: "must be a whole number of milliseconds" })
  .positive({ error: "must be greater than 0" });

function objectError(issue: { readonly code?: string }): string | undefined {
  return issue.code === "invalid_type" ? "must be an object" : undefined;
}

export const CURSOR_SETTING_SOURCES = ["project", "user", "team", "mdm", "plugins", "all"] as const;

export const CursorOptionsSchema = z.strictObject(
  {
    /** Environment the SDK reads: CURSOR_API_KEY (else Loom's own, else the SDK's stored login), CURSOR_BACKEND_URL. */
    env: z.record(z.string(), z.string({ error: "must be a string" }), { error: "must be an object of strings" }).optional(),
    /** Ambient Cursor settings the local agent loads (rules, skills, configured MCP servers); default: none. */
    settingSources: z.array(z.enum(CURSOR_SETTING_SOURCES, { error: `must be one of ${CURSOR_SETTING_SOURCES.join(", ")}` })).optional(),
    /** Run the agent's shell in Cursor's sandbox. */
    sandbox: z.boolean({ error: "must be true or false" }).optional(),
    /** How long creating the agent may take. */
    startupTimeoutMs: PositiveMs.optional(),
  },
  { error: objectError },
);

export type CursorSettingSource = (typeof CURSOR_SETTING_SOURCES)[number];

export interface CursorOptions {
  readonly env: Readonly<Record<string, string>>;
  readonly settingSources: readonly CursorSettingSource[];
  readonly sandbox: boolean;
  readonly startupTimeoutMs: number;
}

export const DEFAULT_STARTUP_TIMEOUT_MS = 60_000;
/** The model of Cursor's published SDK examples; set the instance's `models` to choose others. */
export const DEFAULT_CURSOR_MODELS: readonly string[] = ["composer-2"];

/**
 * A run takes input while it works (`run.steer`; when the SDK hands a steer
 * back, it is sent as a follow-up inside the same Loom turn) and stops with
 * `run.cancel`. The SDK offers no approval callback for local agents, so
 * Cursor runs one runtime mode, full-access; a narrower mode runs it
 * read-only (docs/providers/cursor.md). The SDK keeps its local agents, so a
 * thread's later session resumes its agent (`Agent.resume`); there is no
 * native fork (forks use Loom's portable context).
 */
export const DEFAULT_CURSOR_CAPABILITIES: ProviderCapabilities = {
  steering: true,
  interrupt: true,
  restart: true,
  fork: false,
  resume: true,
  runtimeModes: ["full-access"],
  models: DEFAULT_CURSOR_MODELS,
  mcpTransport: "http",
};

export const cursorOptions = defineDriverOptions({
  driver: CURSOR_DRIVER,
  schema: CursorOptionsSchema,
  resolve: (options): CursorOptions => ({
    env: options.env ?? {},
    settingSources: options.settingSources ?? [],
    sandbox: options.sandbox ?? false,
    startupTimeoutMs: options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
  }),
});

export function cursorCapabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
  return { ...DEFAULT_CURSOR_CAPABILITIES, models: instance.models ?? DEFAULT_CURSOR_MODELS };
}
