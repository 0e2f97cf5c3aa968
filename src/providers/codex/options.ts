import { z } from "zod";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import { RUNTIME_MODES } from "../../contracts/modes.js";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { defineDriverOptions } from "../kit/driverOptions.js";

/**
 * The `options` of a `codex` provider instance (docs/providers/codex.md).
 * Unknown keys are errors, so a typo in config.json is reported rather than
 * ignored.
 */

export const CODEX_DRIVER = "codex";

const NonEmpty = z.string({ error: "must be a string" }).trim().min(1, { error: "must not be empty" });
const PositiveMs = z
  .number({ error: "must be a number of milliseconds" })
  .int({ error: "must be a whole number of milliseconds" })
  .positive({ error: "must be greater than 0" });
/** Codex's TOML keys: model provider ids and env var names stay plain. */
const Identifier = z.string({ error: "must be a string" }).regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, {
  error: "must be 1-64 letters, digits, '_' or '-', starting with a letter or '_'",
});

/** Only the wrong-type message is ours; unknown keys keep zod's message, which names them. */
function objectError(issue: { readonly code?: string }): string | undefined {
  return issue.code === "invalid_type" ? "must be an object" : undefined;
}

export const ModelProviderSchema = z.strictObject(
  {
    /** The `model_provider` id codex uses; "loom" when absent. */
    id: Identifier.optional(),
    /** Display name; the id when absent. */
    name: NonEmpty.optional(),
    /** For example "http://127.0.0.1:8080/v1". */
    baseUrl: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
    /** The environment variable holding the API key (its value goes in `env` or Loom's environment). */
    envKey: Identifier.optional(),
    /** Codex 0.171 only speaks the Responses API ("chat" is refused). */
    wireApi: z.literal("responses", { error: 'must be "responses"' }).optional(),
  },
  { error: objectError },
);

export const CodexOptionsSchema = z.strictObject(
  {
    /** The codex executable; default: the installed @openai/codex package, else `codex` on PATH. */
    binaryPath: NonEmpty.optional(),
    /** CODEX_HOME (a login's auth.json lives there); default: a fresh temp dir per session, removed on stop. */
    codexHome: NonEmpty.optional(),
    /** A custom model endpoint, passed to codex as `-c model_providers.<id>.*` flags. */
    modelProvider: ModelProviderSchema.optional(),
    /** Environment of the codex process, on top of Loom's own (for example the model provider's key). */
    env: z.record(z.string(), z.string({ error: "must be a string" }), { error: "must be an object of strings" }).optional(),
    /** How long a JSON-RPC request (initialize, thread/start, turn/start, ...) may take. */
    requestTimeoutMs: PositiveMs.optional(),
  },
  { error: objectError },
);

export interface CodexModelProvider {
  readonly id: string;
  readonly name: string;
  readonly baseUrl: string;
  readonly envKey: string | null;
  readonly wireApi: "responses";
}

export interface CodexOptions {
  readonly binaryPath: string | null;
  readonly codexHome: string | null;
  readonly modelProvider: CodexModelProvider | null;
  readonly env: Readonly<Record<string, string>>;
  readonly requestTimeoutMs: number;
}

export const DEFAULT_MODEL_PROVIDER_ID = "loom";
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/**
 * The visible models of codex 0.171.0's built-in catalog (`model/list`),
 * newest first. An instance with a custom model provider should list its
 * own models in the instance's `models`.
 */
export const DEFAULT_CODEX_MODELS: readonly string[] = ["gpt-6.2-sol", "gpt-6.2-astra", "gpt-6.1-terra", "gpt-6.1-sol", "gpt-5.5"];

/**
 * Steering is `turn/steer` (input joins the running turn's next model
 * request). Interrupt is `turn/interrupt`; restart is interrupt plus a new
 * turn. Resume is `thread/resume` of the thread's codex thread from the
 * CODEX_HOME Loom keeps per thread. Fork stays off: the adapter contract has
 * no way to name a native thread to fork (docs/providers/codex.md).
 */
export const DEFAULT_CODEX_CAPABILITIES: ProviderCapabilities = {
  steering: true,
  interrupt: true,
  restart: true,
  fork: false,
  resume: true,
  runtimeModes: RUNTIME_MODES,
  models: DEFAULT_CODEX_MODELS,
  mcpTransport: "http",  // A short, curated catalog: capability answers list every current model (spec 000).
  curatedModels: true,
};

/** Validate an instance's options and apply defaults; `parse` throws DriverOptionsError naming every bad field. */
export const codexOptions = defineDriverOptions({
  driver: CODEX_DRIVER,
  schema: CodexOptionsSchema,
  resolve: (options): CodexOptions => {
    const provider = options.modelProvider;
    return {
      binaryPath: options.binaryPath ?? null,
      codexHome: options.codexHome ?? null,
      modelProvider:
        provider === undefined
          ? null
          : {
              id: provider.id ?? DEFAULT_MODEL_PROVIDER_ID,
              name: provider.name ?? provider.id ?? DEFAULT_MODEL_PROVIDER_ID,
              baseUrl: provider.baseUrl,
              envKey: provider.envKey ?? null,
              wireApi: provider.wireApi ?? "responses",
            },
      env: options.env ?? {},
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    };
  },
});

export const parseCodexOptions = codexOptions.parse;

/** The capability record: the defaults, with the instance's own model list when it has one. */
export function codexCapabilities(instance: ProviderInstanceConfig): ProviderCapabilities {
  return { ...DEFAULT_CODEX_CAPABILITIES, models: instance.models ?? DEFAULT_CODEX_MODELS };
}
