import { z } from "zod";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { type DriverOptionsParser, defineDriverOptions } from "../kit/driverOptions.js";

/**
 * The `options` of an `acp` (or `grok`) provider instance
 * (docs/providers/acp.md). Unknown keys are errors, so a typo in config.json
 * is reported rather than ignored. An instance names a local command, a
 * registry agent, or both (the command then overrides the installed one and
 * keeps the registry's arguments and environment).
 */

const NonEmpty = z.string({ error: "must be a string" }).trim().min(1, { error: "must not be empty" });
const PositiveMs = z
  .number({ error: "must be a number of milliseconds" })
  .int({ error: "must be a whole number of milliseconds" })
  .positive({ error: "must be greater than 0" });
/** Registry ids are lower-case words joined by '-' (the registry's own pattern). */
export const RegistryAgentIdSchema = z.string({ error: "must be a string" }).regex(/^[a-z][a-z0-9-]{0,99}$/, {
  error: "must be a registry agent id: lower-case letters, digits and '-', starting with a letter",
});

function objectError(issue: { readonly code?: string }): string | undefined {
  return issue.code === "invalid_type" ? "must be an object" : undefined;
}

const AcpOptionFields = z.strictObject(
  {
    /** The agent executable (a path, or a name on PATH). Overrides a registry agent's installed command. */
    command: NonEmpty.optional(),
    /** Arguments after the command (after the registry's own arguments for a registry agent). */
    args: z.array(z.string({ error: "must be a string" }), { error: "must be an array of strings" }).optional(),
    /** Environment of the agent process, on top of Loom's own and the registry's. */
    env: z.record(z.string(), z.string({ error: "must be a string" }), { error: "must be an object of strings" }).optional(),
    /** An agent id from the ACP registry, installed with `loom providers prepare`. */
    registryAgent: RegistryAgentIdSchema.optional(),
    /** The prepared version to run; default: the one `loom providers prepare` last installed. */
    registryVersion: NonEmpty.optional(),
    /** An ACP auth method id to `authenticate` with before the first session (for example an API-key method). */
    authMethod: NonEmpty.optional(),
    /** The name Loom's MCP server has inside the agent. */
    mcpServerName: NonEmpty.optional(),
    /** How long one ACP request (initialize, session/new, ...) may take. */
    requestTimeoutMs: PositiveMs.optional(),
    /** After session/cancel, how long the turn may take to end before Loom ends it. */
    interruptGraceMs: PositiveMs.optional(),
  },
  { error: objectError },
);

export interface AcpOptions {
  readonly command: string | null;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly registryAgent: string | null;
  readonly registryVersion: string | null;
  readonly authMethod: string | null;
  readonly mcpServerName: string;
  readonly requestTimeoutMs: number;
  readonly interruptGraceMs: number;
}

/** The provider-visible server key of spec 000 ("Transport And Authentication"). */
export const DEFAULT_MCP_SERVER_NAME = "t3-code";
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const DEFAULT_INTERRUPT_GRACE_MS = 15_000;

/** What a flavor fills in when the instance leaves it out (Grok: `grok agent stdio`). */
export interface AcpOptionDefaults {
  readonly command?: string;
  readonly args?: readonly string[];
}

/**
 * The options schema of one flavor: the fields above plus the rules between
 * them, so `loom serve` reports a missing command at start. A flavor with a
 * default command (Grok) needs neither `command` nor `registryAgent`.
 */
export function acpOptionsSchema(defaults: AcpOptionDefaults = {}) {
  return AcpOptionFields.superRefine((options, ctx) => {
    if (options.command === undefined && options.registryAgent === undefined && defaults.command === undefined) {
      ctx.addIssue({ code: "custom", path: [], message: 'set "command" (a local agent executable) or "registryAgent" (an ACP registry agent id)' });
    }
    if (options.registryVersion !== undefined && options.registryAgent === undefined) {
      ctx.addIssue({ code: "custom", path: ["registryVersion"], message: 'needs "registryAgent"' });
    }
  });
}

/** The options parser of one flavor (driver name and defaults). */
export function acpOptions(driver: string, defaults: AcpOptionDefaults = {}): DriverOptionsParser<AcpOptions> {
  return defineDriverOptions({
    driver,
    schema: acpOptionsSchema(defaults),
    resolve: (options): AcpOptions => ({
      command: options.command ?? (options.registryAgent === undefined ? defaults.command : undefined) ?? null,
      args: options.args ?? (options.command === undefined && options.registryAgent === undefined ? (defaults.args ?? []) : []),
      env: options.env ?? {},
      registryAgent: options.registryAgent ?? null,
      registryVersion: options.registryVersion ?? null,
      authMethod: options.authMethod ?? null,
      mcpServerName: options.mcpServerName ?? DEFAULT_MCP_SERVER_NAME,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      interruptGraceMs: options.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS,
    }),
  });
}

/** Validate an instance's options and apply defaults; throws DriverOptionsError naming every bad field. */
export function parseAcpOptions(instance: ProviderInstanceConfig, defaults: AcpOptionDefaults = {}): AcpOptions {
  return acpOptions(instance.driver, defaults).parse(instance);
}
