import { randomUUID } from "node:crypto";
import { existsSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { ProviderInstanceConfig } from "../config/config.js";
import { type TimerHandle, type Timers, systemTimers } from "../engine/clock.js";
import type { WarmProviderSession, WarmSettings } from "./adapter.js";
import type { ProviderRegistry } from "./registry.js";
import { messageOf } from "./kit/errorMessage.js";

/**
 * Warm pools (docs/warm-pools.md): per provider instance with `pool.size > 0`,
 * idle agent sessions opened ahead of need, so a thread's first turn takes one
 * instead of waiting for an agent to start. A warm session belongs to no
 * thread and holds no credential: the session manager mints the thread's
 * credential and binds the session at hand-out. Nothing here is recorded in
 * the event log; a crash loses only sessions that held no thread state.
 */

export interface WarmPoolsOptions {
  readonly registry: ProviderRegistry;
  readonly clock?: () => number;
  readonly timers?: Timers;
  /** Warm sessions opening at once across all instances; default: one less than the CPUs, at least 1. */
  readonly maxConcurrentOpens?: number;
  /**
   * Refills wait while this many agent turns or more run on this node (see
   * `busyTurns`), so that starting agents never takes the CPUs from running
   * work; default: the CPUs.
   */
  readonly maxBusyTurns?: number;
  readonly log?: (line: string) => void;
  /** The server log file: which warm sessions open, are handed out and drain. */
  readonly sessionLog?: (level: "info" | "debug", line: string) => void;
  /**
   * The folder that holds an instance's thread homes: warm sessions keep
   * their agent's home in it (`.warm-<id>`) until bound. Absent: warm
   * sessions get no home from the pool.
   */
  readonly homes?: (providerInstanceId: string) => string;
}

/** The prefix of a warm session's home folder among an instance's thread homes. */
export const WARM_HOME_PREFIX = ".warm-";

/** A warm session as `loom sessions list` and GET /api/sessions show it. */
export interface WarmSessionInfo {
  readonly warmSessionId: string;
  readonly providerInstanceId: string;
  readonly driver: string;
  readonly openedAt: number;
}

/** A warm session taken from a pool: bind it to the thread, or stop it. */
export interface WarmHandOut {
  readonly warmSessionId: string;
  readonly session: WarmProviderSession;
}

interface WarmEntry extends WarmSessionInfo {
  readonly session: WarmProviderSession;
}

interface InstancePool {
  readonly instance: ProviderInstanceConfig;
  readonly size: number;
  readonly maxIdleMs: number;
  readonly ready: WarmEntry[];
  opening: number;
  /** The last time a session opened on the instance (warm or not): the pool drains maxIdleMs after it. */
  lastDemandAt: number;
  /** A warm open failed: no refill until the next demand, so a broken agent is not restarted in a loop. */
  failed: boolean;
  /** The settings of the most recent thread session on the instance (WarmOpenInput.like). */
  like: WarmSettings | null;
}

/** A pool's maxIdleMs when neither the config nor the driver's default names one. */
export const DEFAULT_MAX_IDLE_MS = 600_000;

export class WarmPools {
  private readonly pools = new Map<string, InstancePool>();
  private readonly clock: () => number;
  private readonly timers: Timers;
  private readonly maxConcurrentOpens: number;
  private readonly maxBusyTurns: number;
  /** Agent turns running on this node now (set by the session manager); refills wait while they fill the CPUs. */
  busyTurns: () => number = () => 0;
  private readonly pendingOpens = new Set<Promise<void>>();
  private openingTotal = 0;
  private closed = false;
  private reaper: TimerHandle | null = null;

  constructor(private readonly options: WarmPoolsOptions) {
    this.clock = options.clock ?? Date.now;
    this.timers = options.timers ?? systemTimers;
    this.maxConcurrentOpens = options.maxConcurrentOpens ?? Math.max(1, availableParallelism() - 1);
    this.maxBusyTurns = options.maxBusyTurns ?? availableParallelism();
  }

  /** Fill the pool of every enabled instance that has one, and drain idle pools from now on. */
  start(instances: readonly ProviderInstanceConfig[]): void {
    const now = this.clock();
    for (const instance of instances) {
      const driver = this.options.registry.driverFor(instance.id);
      // A configured pool fills now; a driver's default pool waits for the instance's first session.
      const pool = instance.pool ?? driver?.defaultPool;
      const size = pool?.size ?? 0;
      if (!instance.enabled || size === 0 || driver?.openWarm === undefined) continue;
      const maxIdleMs = pool?.maxIdleMs ?? DEFAULT_MAX_IDLE_MS;
      this.removeLeftoverHomes(instance.id);
      const waits = instance.pool === undefined || driver.warmNeedsDemand === true;
      this.pools.set(instance.id, { instance, size, maxIdleMs, ready: [], opening: 0, lastDemandAt: waits ? now - maxIdleMs : now, failed: false, like: null });
    }
    if (this.pools.size === 0) return;
    const shortest = Math.min(...[...this.pools.values()].map((pool) => pool.maxIdleMs));
    this.reaper = this.timers.interval(
      Math.max(250, Math.min(60_000, shortest / 4)),
      () => {
        void this.reapIdle();
        this.refillAll();
      },
      { unref: true },
    );
    this.refillAll();
  }

  /**
   * A warm session of this instance that fits the thread, taken out of the
   * pool (which refills in the background), or null. Either way the instance
   * counts as in demand.
   */
  take(providerInstanceId: string, binding: WarmSettings): WarmHandOut | null {
    const pool = this.pools.get(providerInstanceId);
    if (pool === undefined || this.closed) return null;
    this.noteDemand(pool);
    pool.like = { cwd: binding.cwd, runtimeMode: binding.runtimeMode, interactionMode: binding.interactionMode, model: binding.model };
    const index = pool.ready.findIndex((entry) => entry.session.fits(binding));
    const entry = index === -1 ? undefined : pool.ready.splice(index, 1)[0];
    // The most recent session sets what the pool warms for: warm sessions that do not fit it make room.
    if (entry === undefined && pool.ready.length > 0) void this.drain(pool, `a session on ${providerInstanceId} needed other settings`);
    // The taker's turn is about to start: it counts among the busy turns already.
    this.refillAll(1);
    if (entry === undefined) return null;
    this.options.sessionLog?.("info", `pool: handed out ${entry.warmSessionId} on ${providerInstanceId}; ${pool.ready.length} of ${pool.size} ready`);
    return { warmSessionId: entry.warmSessionId, session: entry.session };
  }

  /** The warm sessions ready now, oldest first. */
  held(): WarmSessionInfo[] {
    return [...this.pools.values()]
      .flatMap((pool) => pool.ready.map(({ warmSessionId, providerInstanceId, driver, openedAt }) => ({ warmSessionId, providerInstanceId, driver, openedAt })))
      .sort((a, b) => a.openedAt - b.openedAt);
  }

  /** Drain every pool whose instance saw no session open for its maxIdleMs; the next demand fills it again. */
  async reapIdle(): Promise<void> {
    const now = this.clock();
    const idle = [...this.pools.values()].filter((pool) => pool.ready.length > 0 && now - pool.lastDemandAt >= pool.maxIdleMs);
    await Promise.all(idle.map((pool) => this.drain(pool, `no session opened on ${pool.instance.id} for ${pool.maxIdleMs} ms`)));
  }

  /** Stop every warm session, and those still opening, and open no more (shutdown, lost leases). */
  async shutdown(): Promise<void> {
    this.closed = true;
    this.reaper?.cancel();
    await Promise.all([...this.pools.values()].map((pool) => this.drain(pool, "shutdown")));
    await Promise.all([...this.pendingOpens]);
  }

  private noteDemand(pool: InstancePool): void {
    pool.lastDemandAt = this.clock();
    pool.failed = false;
  }

  private isIdle(pool: InstancePool): boolean {
    return this.clock() - pool.lastDemandAt >= pool.maxIdleMs;
  }

  /** A turn ended or a session was released: refills that waited for the CPUs may start. */
  nudge(): void {
    this.refillAll();
  }

  /**
   * Open warm sessions where a pool is short, never more at once than
   * maxConcurrentOpens, and none while running turns (and `starting` turns
   * about to run) fill the CPUs: a later nudge or the reaper's pass starts them.
   */
  private refillAll(starting = 0): void {
    if (this.closed || this.busyTurns() + starting >= this.maxBusyTurns) return;
    for (const pool of this.pools.values()) {
      while (!this.closed && !pool.failed && !this.isIdle(pool) && pool.ready.length + pool.opening < pool.size && this.openingTotal < this.maxConcurrentOpens) {
        this.openOne(pool);
      }
    }
  }

  private openOne(pool: InstancePool): void {
    const driver = this.options.registry.driverFor(pool.instance.id);
    if (driver?.openWarm === undefined) return;
    pool.opening += 1;
    this.openingTotal += 1;
    // Unique across restarts: a list taken before a restart never names a session of the next process.
    const suffix = randomUUID().slice(0, 8);
    const warmSessionId = `warm:${pool.instance.id}:${suffix}`;
    const homes = this.options.homes;
    const home = homes === undefined ? null : join(homes(pool.instance.id), `${WARM_HOME_PREFIX}${suffix}`);
    const opened = (async () => {
      try {
        const session = await driver.openWarm!({ instance: pool.instance, home, like: pool.like });
        if (this.closed || this.isIdle(pool)) {
          await stopQuietly(session, this.options.log);
          return;
        }
        pool.ready.push({ warmSessionId, providerInstanceId: pool.instance.id, driver: driver.driver, openedAt: this.clock(), session });
        this.options.sessionLog?.("info", `pool: warmed ${warmSessionId}; ${pool.ready.length} of ${pool.size} ready`);
      } catch (error) {
        pool.failed = true;
        this.options.log?.(`loom: opening a warm session on ${pool.instance.id} failed; the pool refills on the next session: ${messageOf(error)}`);
      } finally {
        pool.opening -= 1;
        this.openingTotal -= 1;
      }
    })();
    this.pendingOpens.add(opened);
    void opened.then(() => {
      this.pendingOpens.delete(opened);
      this.refillAll();
    });
  }

  /**
   * Warm homes a server that died left behind (its agents exited with it:
   * their stdin closed). A warm path that is a link belongs to a thread whose
   * home it became (kit/warmHome.ts) and stays while that home exists.
   */
  private removeLeftoverHomes(providerInstanceId: string): void {
    if (this.options.homes === undefined) return;
    const folder = this.options.homes(providerInstanceId);
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return; // no homes yet
    }
    for (const name of names.filter((n) => n.startsWith(WARM_HOME_PREFIX))) {
      const path = join(folder, name);
      if (!lstatSync(path).isSymbolicLink() || !existsSync(path)) rmSync(path, { recursive: true, force: true });
    }
  }

  private async drain(pool: InstancePool, reason: string): Promise<void> {
    const entries = pool.ready.splice(0);
    if (entries.length === 0) return;
    this.options.sessionLog?.("info", `pool: drained ${entries.length} warm session(s) of ${pool.instance.id} (${reason})`);
    await Promise.all(entries.map((entry) => stopQuietly(entry.session, this.options.log)));
  }
}

async function stopQuietly(session: WarmProviderSession, log: ((line: string) => void) | undefined): Promise<void> {
  try {
    await session.stop();
  } catch (error) {
    log?.(`loom: stopping a warm session failed: ${messageOf(error)}`);
  }
}
