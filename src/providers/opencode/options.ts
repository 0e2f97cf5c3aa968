import { z } from "zod";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import { RUNTIME_MODES } from "../../contracts/modes.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { defineDriverOptions } from "../kit/driverOptions.js";

/**
 * The `options` of an `opencode` provider instance (docs/providers/opencode.md).
 * Unknown keys are errors, so a typo in config.json is reported rather than
 * ignored.
 */

export const OPENCODE_DRIVER = "opencode";

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

export const OpencodeModelProviderSchema = z.strictObject(
  {
    /** The provider id in OpenCode's config; models are then "<id>/<model>". Default "loom". */
    id: Identifier.optional(),
    /** The AI SDK package OpenCode loads for it; default "@ai-sdk/openai-compatible" (bundled with OpenCode). */
    npm: NonEmpty.optional(),
    /** For example "http://127.0.0.1:8080/v1". */
    baseUrl: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
    /** The environment variable holding the API key (its value goes in `env` or Loom's environment). */
    envKey: Identifier.optional(),
  },
  { error: objectError },
);

export const OpencodeOptionsSchema = z.strictObject(
  {
    /** The opencode executable; default: the installed opencode-ai package, else `opencode` on PATH. */
    binaryPath: NonEmpty.optional(),
    /** A custom model endpoint, written into OpenCode's config as provider `<id>` with the instance's `models`. */
    modelProvider: OpencodeModelProviderSchema.optional(),
    /** More OpenCode config (opencode.json keys), under Loom's own: Loom's `mcp.t3-code` and `permission` win. */
    config: z.record(z.string(), z.unknown(), { error: "must be an object" }).optional(),
    /** HOME of the opencode process (a login's auth.json lives under it); default: a fresh temp dir per session. */
    home: NonEmpty.optional(),
    /** Environment of the opencode process, on top of Loom's own (for example the model provider's key). */
    env: z.record(z.string(), z.string({ error: "must be a string" }), { error: "must be an object of strings" }).optional(),
    /** How long `opencode serve` may take to listen and answer (it loads its plugins first: 7-20 s is usual). */
    startupTimeoutMs: PositiveMs.optional(),
    /** OpenCode's timeout for a call to Loom's MCP server; long enough for Loom's capped waits. */
    mcpTimeoutMs: PositiveMs.optional(),
  },
  { error: objectError },
);

export interface OpencodeModelProvider {
  readonly id: string;
  readonly npm: string;
  readonly baseUrl: string;
  readonly envKey: string | null;
}

export interface OpencodeOptions {
  readonly binaryPath: string | null;
  readonly modelProvider: OpencodeModelProvider | null;
  readonly config: Readonly<Record<string, unknown>>;
  readonly home: string | null;
  readonly env: Readonly<Record<string, string>>;
  readonly startupTimeoutMs: number;
  readonly mcpTimeoutMs: number;
  /** The instance's model list ("provider/model"), for the custom provider's model table. */
  readonly models: readonly string[];
}

export const DEFAULT_MODEL_PROVIDER_ID = "loom";
export const DEFAULT_PROVIDER_NPM = "@ai-sdk/openai-compatible";
export const DEFAULT_STARTUP_TIMEOUT_MS = 90_000;
/** Longer than any wait Loom's MCP tools allow (waits.maxWaitMs is capped well below it). */
export const DEFAULT_MCP_TIMEOUT_MS = 3_600_000;

/**
 * OpenCode takes input into a running turn: a prompt sent while the session
 * is busy is queued and read by the running loop before its next model
 * request (steering). `session.abort` stops a turn (interrupt; restart is
 * interrupt plus a new prompt). It has session forks, but a Loom session
 * lives in a temp HOME by default, so neither fork nor resume is offered.
 * Its permission rules carry all three runtime modes.
 */
export const DEFAULT_OPENCODE_CAPABILITIES: ProviderCapabilities = {
  steering: true,
  interrupt: true,
  restart: true,
  fork: false,
  resume: false,
  runtimeModes: RUNTIME_MODES,
  models: [],
  mcpTransport: "http",
};

export const opencodeOptions = defineDriverOptions({
  driver: OPENCODE_DRIVER,
  schema: OpencodeOptionsSchema,
  resolve: (options, instance): OpencodeOptions => {
    const provider = options.modelProvider;
    return {
      binaryPath: options.binaryPath ?? null,
      modelProvider:
        provider === undefined
          ? null
          : { id: provider.id ?? DEFAULT_MODEL_PROVIDER_ID, npm: provider.npm ?? DEFAULT_PROVIDER_NPM, baseUrl: provider.baseUrl, envKey: provider.envKey ?? null },
      config: options.config ?? {},
      home: options.home ?? null,
      env: options.env ?? {},
      startupTimeoutMs: options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
      mcpTimeoutMs: options.mcpTimeoutMs ?? DEFAULT_MCP_TIMEOUT_MS,
      models: instance.models ?? [],
    };
  },
});

export function opencodeCapabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
  return { ...DEFAULT_OPENCODE_CAPABILITIES, models: instance.models ?? DEFAULT_OPENCODE_CAPABILITIES.models };
}
