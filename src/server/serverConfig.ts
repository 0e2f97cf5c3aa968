import { ConfigError, ConfigErrorCode, type LogLevel, type LoomConfig, loadConfig } from "../config/config.js";
import { isTimeZone } from "../app/schedules/dueTimes.js";
import type { ProviderDriver } from "../providers/adapter.js";
import { validateProviderInstances } from "../providers/kit/validateInstances.js";
import { ProviderRegistry } from "../providers/registry.js";
import type { LoomServerOptions } from "./serverOptions.js";
import { builtInDrivers } from "./providerWiring.js";
import type { ServerLog } from "./serverLog.js";
import type { StateDir } from "./stateDir.js";

/** What a server starts from: its checked config, its log, and the provider instances it may run. */
export interface ServerConfig {
  /** Where the default project lives when the config names none. */
  readonly cwd: string;
  readonly config: LoomConfig;
  /** Reports a line to `options.log` and the log file. */
  readonly log: (line: string) => void;
  readonly drivers: ReadonlyMap<string, ProviderDriver>;
  readonly registry: ProviderRegistry;
}

/**
 * Load the config file and check what would only fail later: every provider
 * instance against its driver, the scheduler's time zone. A bad config
 * refuses the start with every problem listed, before anything is opened.
 */
export function loadServerConfig(options: LoomServerOptions, dir: StateDir, serverLog: ServerLog): ServerConfig {
  const cwd = options.cwd ?? process.cwd();
  const config = loadConfig(options.configPath, dir.root, cwd);
  serverLog.configure({ ...config.log, level: options.logLevel ?? config.log.level });
  const log = (line: string): void => {
    options.log?.(line);
    serverLog.write(levelOfLine(line), line);
  };
  const drivers = builtInDrivers({ stateDir: dir.root, log });
  for (const driver of options.drivers ?? []) drivers.set(driver.driver, driver);
  const problems = validateProviderInstances(config.providers, drivers);
  if (problems.length > 0) {
    const lines = problems.flatMap((p) => p.errors.map((error) => `  providers.${p.instanceId}: ${error}`));
    throw new ConfigError(ConfigErrorCode.invalid, `invalid provider configuration (${lines.length} problem${lines.length === 1 ? "" : "s"}):\n${lines.join("\n")}`);
  }
  if (config.scheduler.timeZone !== null && !isTimeZone(config.scheduler.timeZone)) {
    throw new ConfigError(ConfigErrorCode.invalid, `invalid config: scheduler.timeZone ${JSON.stringify(config.scheduler.timeZone)} is not an IANA time zone this runtime knows`);
  }
  return { cwd, config, log, drivers, registry: new ProviderRegistry(config.providers, drivers) };
}

/** A reported line's level in the log file: failures are warnings, the rest information. */
function levelOfLine(line: string): LogLevel {
  return /\b(failed|error|could not|refused)\b/i.test(line) ? "warn" : "info";
}
