import { describe, expect, it } from "vitest";
import type { ProviderInstanceConfig } from "../config/config.js";
import { pollUntil } from "../testkit/poll.js";
import type { ProviderDriver, WarmOpenInput, WarmProviderSession, WarmSettings } from "./adapter.js";
import type { ProviderRegistry } from "./registry.js";
import { WarmPools } from "./warmPool.js";

/**
 * A pool whose agent fixes its settings at start (`warmNeedsDemand`, like
 * Claude Code's working directory): it warms nothing before the instance's
 * first session, then warms like the most recent session, and makes room
 * when a session needs other settings (docs/warm-pools.md). The driver is a
 * stand-in: only the pool's own decisions are under test here; the real
 * agents are in the drivers' warm.e2e tests.
 */

const INSTANCE: ProviderInstanceConfig = { id: "cc", driver: "fixed", enabled: true, displayName: null, models: null, options: {}, pool: { size: 1, maxIdleMs: 600_000 } };

function settings(cwd: string): WarmSettings {
  return { cwd, runtimeMode: "full-access", interactionMode: "default", model: null };
}

function fixedDriver(opened: (WarmOpenInput["like"] | undefined)[], stopped: string[]): ProviderDriver {
  return {
    driver: "fixed",
    warmNeedsDemand: true,
    openWarm: (input: WarmOpenInput): Promise<WarmProviderSession> => {
      opened.push(input.like);
      const cwd = input.like?.cwd ?? "(none)";
      return Promise.resolve({
        fits: (b) => b.cwd === cwd,
        bind: () => Promise.reject(new Error("not bound in this test")),
        stop: () => {
          stopped.push(cwd);
          return Promise.resolve();
        },
      });
    },
  } as unknown as ProviderDriver;
}

describe("warm pools that warm like the most recent session", () => {
  it("warm nothing before a session, then like it, and replace warm sessions that no longer fit", async () => {
    const opened: (WarmOpenInput["like"] | undefined)[] = [];
    const stopped: string[] = [];
    const driver = fixedDriver(opened, stopped);
    const registry = { driverFor: () => driver } as unknown as ProviderRegistry;
    const pools = new WarmPools({ registry, maxConcurrentOpens: 1 });
    pools.start([INSTANCE]);
    expect(opened).toEqual([]);

    // The first session gets nothing (the pool is empty) and sets what it warms for.
    expect(pools.take("cc", settings("/a"))).toBeNull();
    await pollUntil(() => pools.held(), (held) => held.length === 1, "a warm session like /a");
    expect(opened).toEqual([settings("/a")]);

    // A session with the same settings takes it; the pool warms another like it.
    expect(pools.take("cc", settings("/a"))).not.toBeNull();
    await pollUntil(() => pools.held(), (held) => held.length === 1, "the refill");
    expect(opened).toEqual([settings("/a"), settings("/a")]);

    // A session in another folder: nothing fits, the /a session is stopped, the pool warms like /b.
    expect(pools.take("cc", settings("/b"))).toBeNull();
    await pollUntil(() => pools.held(), (held) => held.length === 1 && opened.length === 3, "a warm session like /b");
    expect(opened[2]).toEqual(settings("/b"));
    expect(stopped).toEqual(["/a"]);
    expect(pools.take("cc", settings("/b"))).not.toBeNull();
    await pools.shutdown();
  });
});

describe("warm pools on a busy machine", () => {
  it("refills wait while running turns fill the CPUs, and start once a turn ends", async () => {
    const opened: (WarmOpenInput["like"] | undefined)[] = [];
    const driver = fixedDriver(opened, []);
    const registry = { driverFor: () => driver } as unknown as ProviderRegistry;
    const pools = new WarmPools({ registry, maxConcurrentOpens: 1, maxBusyTurns: 2 });
    let running = 0;
    pools.busyTurns = () => running;
    pools.start([INSTANCE]);
    expect(pools.take("cc", settings("/a"))).toBeNull();
    await pollUntil(() => pools.held(), (held) => held.length === 1, "a warm session like /a");

    // One turn runs (a parent) and the taker's is about to: the two CPUs are busy. The hand-out
    // works, the refill waits (an open starts synchronously, so none started).
    running = 1;
    expect(pools.take("cc", settings("/a"))).not.toBeNull();
    expect(opened).toHaveLength(1);
    running = 2;
    pools.nudge();
    expect(opened).toHaveLength(1);

    // A turn ended: the session manager nudges the pools, and the refill starts.
    running = 1;
    pools.nudge();
    expect(opened).toHaveLength(2);
    await pollUntil(() => pools.held(), (held) => held.length === 1, "the refill");
    await pools.shutdown();
  });
});

