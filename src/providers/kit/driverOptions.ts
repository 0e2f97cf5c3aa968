import type { z } from "zod";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { zodIssueLines } from "../../contracts/zodIssues.js";
import type { DriverOptionsSchema } from "../adapter.js";
import { ProviderError, ProviderErrorCode } from "../adapter.js";

export type { DriverOptionsSchema } from "../adapter.js";

/**
 * The options half of the driver kit. A driver declares the zod schema of
 * its instances' `options` (a strict object, so a typo is reported rather
 * than ignored) and how parsed options become the values it runs with; this
 * file gives every driver the same parse, the same error and the same
 * message format (`options.<path>: <message>`, see contracts/zodIssues.ts).
 */

/** Bad instance options. Not retryable: the config has to change. */
export class DriverOptionsError extends Error {
  readonly code = "invalid_options";
  readonly retryable = false;
  constructor(
    readonly driver: string,
    readonly instanceId: string,
    /** One `options.<path>: <message>` line per problem, in schema order. */
    readonly problems: readonly string[],
  ) {
    super(`invalid options for ${driver} instance "${instanceId}": ${problems.join("; ")}`);
    this.name = "DriverOptionsError";
  }
}

/** Every problem with `options` under `schema`, as `options.<path>: <message>`; empty when they are valid. */
export function driverOptionProblems(schema: DriverOptionsSchema, options: unknown): string[] {
  const parsed = schema.safeParse(options);
  return parsed.success ? [] : zodIssueLines(parsed.error, { pathPrefix: ["options"] });
}

export interface DriverOptionsParser<T> {
  readonly driver: string;
  readonly schema: DriverOptionsSchema;
  /** Validates `instance.options` and applies defaults. Throws DriverOptionsError naming every bad field. */
  readonly parse: (instance: ProviderInstanceConfig) => T;
}

export interface DriverOptionsSpec<S extends DriverOptionsSchema, T> {
  readonly driver: string;
  readonly schema: S;
  /** Parsed options (and the rest of the instance, e.g. its `models`) to the values the driver runs with. */
  readonly resolve: (options: z.output<S>, instance: ProviderInstanceConfig) => T;
}

export function defineDriverOptions<S extends DriverOptionsSchema, T>(spec: DriverOptionsSpec<S, T>): DriverOptionsParser<T> {
  return {
    driver: spec.driver,
    schema: spec.schema,
    parse: (instance) => {
      const parsed = spec.schema.safeParse(instance.options);
      if (!parsed.success) throw new DriverOptionsError(spec.driver, instance.id, zodIssueLines(parsed.error, { pathPrefix: ["options"] }));
      return spec.resolve(parsed.data, instance);
    },
  };
}

/**
 * The options of a session being opened. Bad options reject the open with
 * `start_failed` and the parser's message; `loom serve` refuses such a
 * config at start (validateProviderInstances), so this only happens to
 * instances built in code.
 */
export function optionsForSession<T>(parser: DriverOptionsParser<T>, instance: ProviderInstanceConfig): T {
  try {
    return parser.parse(instance);
  } catch (error) {
    if (error instanceof DriverOptionsError) throw new ProviderError(ProviderErrorCode.startFailed, error.message, { cause: error });
    throw error;
  }
}

/** The parsed options, or null when they are bad (capabilities() falls back to defaults; probe() reports them). */
export function optionsOrNull<T>(parser: DriverOptionsParser<T>, instance: ProviderInstanceConfig): T | null {
  try {
    return parser.parse(instance);
  } catch (error) {
    if (error instanceof DriverOptionsError) return null;
    throw error;
  }
}
