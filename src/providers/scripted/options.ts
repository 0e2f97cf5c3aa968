import { z } from "zod";
import type { ProviderCapabilities } from "../../contracts/capabilities.js";
import { RUNTIME_MODES, RuntimeModeSchema } from "../../contracts/modes.js";
import { defineDriverOptions } from "../kit/driverOptions.js";

/**
 * The `options` of a `scripted` provider instance. Unknown keys are errors,
 * so a typo in config.json is reported rather than ignored.
 */

const DelayMs = z
  .number({ error: "must be a number of milliseconds" })
  .int({ error: "must be a whole number of milliseconds" })
  .nonnegative({ error: "must not be negative" });
const RuntimeModes = z
  .array(RuntimeModeSchema, { error: "must be a list of runtime modes" })
  .min(1, { error: "must list at least one runtime mode" });
const Models = z
  .array(z.string({ error: "must be a string" }).trim().min(1, { error: "must not be empty" }), {
    error: "must be a list of model names",
  })
  .min(1, { error: "must list at least one model" });

/** Only the wrong-type message is ours; unknown keys keep zod's message, which names them. */
function objectError(issue: { readonly code?: string }): string | undefined {
  return issue.code === "invalid_type" ? "must be an object" : undefined;
}

export const ScriptedOptionsSchema = z.strictObject(
  {
    /** Wait inside openSession, like an agent process starting up. */
    startupDelayMs: DelayMs.optional(),
    /** Wait at the start of every turn, after turn.started. Interruptible. */
    turnDelayMs: DelayMs.optional(),
    /** Kill a `run` step's command after this long. */
    commandTimeoutMs: DelayMs.positive({ error: "must be greater than 0" }).optional(),
    /** The cost a turn's usage reports per token (input plus output), in US dollars; none when absent. */
    costPerTokenUsd: z.number({ error: "must be a number" }).nonnegative({ error: "must be at least 0" }).max(1, { error: "must be at most 1" }).optional(),
    /** Overrides of the default capability record. */
    capabilities: z
      .strictObject(
        {
          steering: z.boolean({ error: "must be true or false" }).optional(),
          interrupt: z.boolean({ error: "must be true or false" }).optional(),
          restart: z.boolean({ error: "must be true or false" }).optional(),
          fork: z.boolean({ error: "must be true or false" }).optional(),
          resume: z.boolean({ error: "must be true or false" }).optional(),
          runtimeModes: RuntimeModes.optional(),
          models: Models.optional(),
          mcpTransport: z.enum(["http", "none"], { error: 'must be "http" or "none"' }).optional(),
          legacyModels: z.array(z.string({ error: "must be a string" }).trim().min(1, { error: "must not be empty" }), { error: "must be a list of model names" }).optional(),
          curatedModels: z.boolean({ error: "must be true or false" }).optional(),
          turnEnvironment: z.boolean({ error: "must be true or false" }).optional(),
        },
        { error: objectError },
      )
      .optional(),
    runtimeModes: RuntimeModes.optional(),
    models: Models.optional(),
  },
  { error: objectError },
);

export interface ScriptedOptions {
  readonly startupDelayMs: number;
  readonly turnDelayMs: number;
  readonly commandTimeoutMs: number;
  /** Null: usage reports no cost. */
  readonly costPerTokenUsd: number | null;
  readonly capabilities: ProviderCapabilities;
}

export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;
export const DEFAULT_SCRIPTED_MODEL = "scripted-1";

export const DEFAULT_SCRIPTED_CAPABILITIES: ProviderCapabilities = {
  steering: true,
  interrupt: true,
  restart: true,
  fork: false,
  // A scripted agent keeps no conversation, so continuing one is free; `capabilities.resume: false` makes Loom hand it a recap instead.
  resume: true,
  runtimeModes: RUNTIME_MODES,
  models: [DEFAULT_SCRIPTED_MODEL],
  mcpTransport: "http",
  turnEnvironment: true,
};

export const SCRIPTED_DRIVER = "scripted";

/**
 * Validate an instance's options and apply defaults. Model precedence: the
 * instance's top-level `models`, then `options.models`, then
 * `options.capabilities.models`, then "scripted-1"; runtime modes likewise
 * from `options.runtimeModes`, then `options.capabilities.runtimeModes`.
 * `parse` throws DriverOptionsError naming every bad field.
 */
export const scriptedOptions = defineDriverOptions({
  driver: SCRIPTED_DRIVER,
  schema: ScriptedOptionsSchema,
  resolve: (options, instance): ScriptedOptions => {
    const overrides = options.capabilities ?? {};
    return {
      startupDelayMs: options.startupDelayMs ?? 0,
      turnDelayMs: options.turnDelayMs ?? 0,
      commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      costPerTokenUsd: options.costPerTokenUsd ?? null,
      capabilities: {
        ...DEFAULT_SCRIPTED_CAPABILITIES,
        ...overrides,
        // The record lists modes narrowest first, whatever order the config used.
        runtimeModes: RUNTIME_MODES.filter((mode) => (options.runtimeModes ?? overrides.runtimeModes ?? RUNTIME_MODES).includes(mode)),
        models: instance.models ?? options.models ?? overrides.models ?? DEFAULT_SCRIPTED_CAPABILITIES.models,
      },
    };
  },
});

export const parseScriptedOptions = scriptedOptions.parse;
