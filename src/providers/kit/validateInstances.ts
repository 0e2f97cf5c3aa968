import type { ProviderInstanceConfig } from "../../config/config.js";
import type { ProviderDriver } from "../adapter.js";
import { driverOptionProblems } from "./driverOptions.js";

/**
 * What is wrong with the configured provider instances, all at once, so
 * `loom serve` can refuse a bad config at start and list every error instead
 * of failing one session at a time.
 */

export interface ProviderInstanceProblems {
  readonly instanceId: string;
  /** Each a sentence on its own: `unknown driver "x"; ...` or `options.<path>: <message>`. */
  readonly errors: string[];
}

/**
 * Checks every instance, enabled or not (a disabled instance's config is still
 * read, and enabling it must not reveal a typo later): its driver must be one
 * of `drivers`, its `options` must match that driver's schema, and a warm
 * pool needs a driver that can bind a warm session to a thread. Returns the
 * instances with at least one error, in config order; an empty list means the
 * config is good.
 */
export function validateProviderInstances(
  instances: readonly ProviderInstanceConfig[],
  drivers: ReadonlyMap<string, Pick<ProviderDriver, "optionsSchema" | "openWarm">>,
): ProviderInstanceProblems[] {
  const known = [...drivers.keys()].sort();
  const report: ProviderInstanceProblems[] = [];
  for (const instance of instances) {
    const driver = drivers.get(instance.driver);
    const errors =
      driver === undefined
        ? [`unknown driver ${JSON.stringify(instance.driver)}; known drivers: ${known.length === 0 ? "none" : known.join(", ")}`]
        : [...driverOptionProblems(driver.optionsSchema, instance.options), ...poolProblems(instance, driver)];
    if (errors.length > 0) report.push({ instanceId: instance.id, errors });
  }
  return report;
}

function poolProblems(instance: ProviderInstanceConfig, driver: Pick<ProviderDriver, "openWarm">): string[] {
  if ((instance.pool?.size ?? 0) === 0 || driver.openWarm !== undefined) return [];
  return [`pool: driver ${JSON.stringify(instance.driver)} cannot hand a running session to a thread (its sessions take their working directory and credential when they start), so it has no warm pool; remove "pool" or set its size to 0`];
}
