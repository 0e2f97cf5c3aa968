import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionListResult } from "../src/app/sessions.js";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { type Round, Recorder, STARTUP_MS, fanOut, median } from "./fanoutBench.js";
import { printTable } from "./stats.js";

/**
 * Warm pools (docs/warm-pools.md): a parent delegates 1 and 4 children to
 * `slow`, a scripted instance whose sessions take STARTUP_MS to open (like an
 * agent CLI starting), once without a pool and once with `pool: { size: 4 }`,
 * each on its own server in the same run. The baseline is 1 child without a
 * pool; the pool should take the start-up out of a child's first turn.
 */
async function measure(pool: boolean, sizes: readonly number[], rounds: number): Promise<Map<number, Round[]>> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-pool-"));
  const slow = { id: "slow", driver: "scripted", options: { startupDelayMs: STARTUP_MS }, ...(pool ? { pool: { size: 4 } } : {}) };
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ providers: [{ id: "fast", driver: "scripted" }, slow] }));
  const server = await startLoomServer({ stateDir, cwd: stateDir });
  const recorder = new Recorder();
  const recording = server.orchestrator.follow(server.orchestrator.state.lastSequence, (event) => recorder.onEvents([event]));
  const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
  const client = await LoomMcpClient.connect(server.mcpUrl, token, "loom-bench");
  const warmCount = async () => {
    const res = await fetch(`${server.url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } });
    return ((await res.json()) as SessionListResult).warm.length;
  };
  /** Start each round with a full pool, as a server that was idle a moment would have. */
  const warmAgain = async () => {
    if (!pool) return;
    const deadline = Date.now() + 30_000;
    while ((await warmCount()) < 4) {
      if (Date.now() > deadline) throw new Error("the warm pool did not refill");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  try {
    await warmAgain();
    await fanOut(client, recorder, 1, `warmup-${pool}`);
    const measured = new Map<number, Round[]>();
    for (let round = 0; round < rounds; round++) {
      for (const n of sizes) {
        await warmAgain();
        const list = measured.get(n) ?? [];
        list.push(await fanOut(client, recorder, n, `${pool ? "pool" : "cold"}-n${n}-r${round}`));
        measured.set(n, list);
      }
    }
    return measured;
  } finally {
    recording.close();
    await client.close();
    await server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

export async function runPoolBench(options: { sizes: readonly number[]; rounds: number }): Promise<void> {
  const cold = await measure(false, options.sizes, options.rounds);
  const warm = await measure(true, options.sizes, options.rounds);
  const pick = (m: Map<number, Round[]>, n: number, f: (r: Round) => number) => median(m.get(n)!.map(f));
  const base = pick(cold, options.sizes[0]!, (r) => r.results);
  const ms = (seconds: number) => (seconds * 1000).toFixed(0);
  printTable(`delegation to a scripted instance with startupDelayMs ${STARTUP_MS}, without and with a warm pool of 4 (median of ${options.rounds}; ms from the parent's launch call; ratio against ${options.sizes[0]} child without a pool)`, [
    ["children", "pool", "slowest child start", "all results", "ratio"],
    ...options.sizes.flatMap((n) =>
      ([["off", cold], ["4", warm]] as const).map(([label, m]) => [
        String(n),
        label,
        ms(pick(m, n, (r) => r.slowestStart)),
        ms(pick(m, n, (r) => r.results)),
        (pick(m, n, (r) => r.results) / base).toFixed(2),
      ]),
    ),
  ]);
}
