import { z } from "zod";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import { RUNTIME_MODES } from "../../contracts/modes.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { defineDriverOptions } from "../kit/driverOptions.js";

/** The `options` of a `pi` provider instance (docs/providers/pi.md). Unknown keys are errors. */

export const PI_DRIVER = "pi";

const NonEmpty = z.string({ error: "must be a string" }).trim().min(1, { error: "must not be empty" });
const PositiveMs = z
  .number({ error: "must be a number of milliseconds" })
  .int({ error: "must be a whole number of milliseconds" })
  .positive({ error: "must be greater than 0" });
const Identifier = z.string({ error: "must be a string" }).regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, {
  error: "must be 1-64 letters, digits, '_' or '-', starting with a letter or '_'",
});

function objectError(issue: { readonly code?: string }): string | undefined {
  return issue.code === "invalid_type" ? "must be an object" : undefined;
}

export const PI_APIS = ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"] as const;
export type PiApi = (typeof PI_APIS)[number];

export const PiModelProviderSchema = z.strictObject(
  {
    /** The provider name in Pi's models.json; models are then "<id>/<model>". Default "loom". */
    id: Identifier.optional(),
    /** For example "http://127.0.0.1:8080/v1". */
    baseUrl: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
    /** The wire API; default "openai-completions". */
    api: z.enum(PI_APIS, { error: `must be one of ${PI_APIS.join(", ")}` }).optional(),
    /** The environment variable holding the API key (its value goes in `env` or Loom's environment). */
    envKey: Identifier.optional(),
  },
  { error: objectError },
);

export const PiOptionsSchema = z.strictObject(
  {
    /** The pi executable; default: the installed @mariozechner/pi-coding-agent package run by Loom's Node, else `pi` on PATH. */
    binaryPath: NonEmpty.optional(),
    /** A custom model endpoint, written into a models.json of the session's own with the instance's `models`. */
    modelProvider: PiModelProviderSchema.optional(),
    /** PI_CODING_AGENT_DIR (auth.json, models.json, settings, extensions); default: a fresh temp dir per session. */
    agentDir: NonEmpty.optional(),
    /** Environment of the pi process, on top of Loom's own (for example ANTHROPIC_API_KEY). */
    env: z.record(z.string(), z.string({ error: "must be a string" }), { error: "must be an object of strings" }).optional(),
    /** How long pi may take to start and answer its first command. */
    startupTimeoutMs: PositiveMs.optional(),
  },
  { error: objectError },
);

export interface PiModelProvider {
  readonly id: string;
  readonly baseUrl: string;
  readonly api: PiApi;
  readonly envKey: string | null;
}

export interface PiOptions {
  readonly binaryPath: string | null;
  readonly modelProvider: PiModelProvider | null;
  readonly agentDir: string | null;
  readonly env: Readonly<Record<string, string>>;
  readonly startupTimeoutMs: number;
  readonly models: readonly string[];
}

export const DEFAULT_STARTUP_TIMEOUT_MS = 60_000;

/**
 * Pi's RPC `steer` adds input to a running turn (read before the next model
 * call); `abort` stops it. Sessions run with --no-session, so there is
 * nothing to resume or fork natively. Approvals are Loom's extension asking
 * through Pi's RPC dialogs, so all three runtime modes hold.
 */
export const DEFAULT_PI_CAPABILITIES: ProviderCapabilities = {
  steering: true,
  interrupt: true,
  restart: true,
  fork: false,
  resume: false,
  runtimeModes: RUNTIME_MODES,
  models: [],
  mcpTransport: "http",
};

export const piOptions = defineDriverOptions({
  driver: PI_DRIVER,
  schema: PiOptionsSchema,
  resolve: (options, instance): PiOptions => {
    const provider = options.modelProvider;
    return {
      binaryPath: options.binaryPath ?? null,
      modelProvider: provider === undefined ? null : { id: provider.id ?? "loom", baseUrl: provider.baseUrl, api: provider.api ?? "openai-completions", envKey: provider.envKey ?? null },
      agentDir: options.agentDir ?? null,
      env: options.env ?? {},
      startupTimeoutMs: options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
      models: instance.models ?? [],
    };
  },
});

export function piCapabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
  return { ...DEFAULT_PI_CAPABILITIES, models: instance.models ?? DEFAULT_PI_CAPABILITIES.models };
}
