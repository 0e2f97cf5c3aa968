import type { LogLevel } from "../config/config.js";
import type { ProviderDriver } from "../providers/adapter.js";
import type { SchedulerTimers } from "../scheduler/scheduler.js";

/** How `startLoomServer` is asked to run (`loom serve` passes its flags; tests, their fixtures). */
export interface LoomServerOptions {
  readonly stateDir: string;
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  readonly configPath?: string;
  /** Where the default project lives when the config names none. */
  readonly cwd?: string;
  /** Mount the diagnostics toolkit (loom_echo): benchmarks and tests only. */
  readonly diagnosticsTools?: boolean;
  /** How often a wait reports progress; tests shorten it. */
  readonly progressIntervalMs?: number;
  /** WebSocket heartbeat (ping) interval; a peer silent for one interval is dropped. Tests shorten it. */
  readonly wsHeartbeatMs?: number;
  readonly log?: (line: string) => void;
  /** The built web UI served at `/`. Default dist/ui of this checkout (npm run build makes it). */
  readonly uiDir?: string;
  /** The scheduler's clock and timers (docs/schedules.md); tests pass a manual clock. Default: Date.now and setTimeout. */
  readonly clock?: () => number;
  readonly schedulerTimers?: SchedulerTimers;
  /** A PostgreSQL URL: overrides the config's database.url (docs/postgres.md). Default: SQLite in the state dir. */
  readonly database?: string;
  /** The log file's level; overrides the config's log.level. */
  readonly logLevel?: LogLevel;
  /**
   * Drivers that replace the built-in ones of the same name: tests only, for
   * a driver on a fake SDK boundary whose agent cannot run offline (cursor).
   */
  readonly drivers?: readonly ProviderDriver[];
  /** The ACP registry `/api/providers` reads (a file or URL). Default: LOOM_ACP_REGISTRY, else the official registry. */
  readonly acpRegistry?: string;
}
