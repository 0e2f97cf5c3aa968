import { ALL_FAULTS } from "../src/testkit/sim/faults.js";
import { PLANTED_BUGS } from "../src/testkit/sim/plantedBugs.js";
import { type SimOptions, runSeed } from "../src/testkit/sim/runner.js";
import { fmt, now, printTable, seconds } from "./stats.js";

/**
 * The deterministic simulation (docs/simulation.md): how many seeds a second
 * it runs and the CPU time a seed costs, with every fault on and on each
 * store, against a baseline of the same seeds on the memory store with no
 * faults (the CPU ratio is baseline CPU per seed over this CPU per seed);
 * and how many seeds it takes to find each planted bug, from several
 * starting seeds.
 */
export interface SimBenchOptions {
  /** Seeds per throughput measurement. */
  readonly seeds: number;
  /** Starting seeds for the planted-bug search; each search gives up after `budget` seeds. */
  readonly starts: readonly number[];
  readonly budget: number;
}

interface Throughput {
  /** Seeds per wall-clock second. */
  readonly rate: number;
  /** CPU milliseconds (user + system) per seed: what a loaded, shared machine does not distort. */
  readonly cpuMs: number;
  readonly events: number;
  readonly failed: number;
}

async function seedsPerSecond(count: number, options: Omit<SimOptions, "seed">): Promise<Throughput> {
  const start = now();
  const cpu = process.cpuUsage();
  let failed = 0;
  let events = 0;
  for (let seed = 1; seed <= count; seed++) {
    const result = await runSeed({ ...options, seed });
    if (result.violations.length > 0) failed += 1;
    events += result.stats.events;
  }
  const used = process.cpuUsage(cpu);
  return { rate: count / seconds(start), cpuMs: (used.user + used.system) / 1000 / count, events: events / count, failed };
}

export async function runSimBench(options: SimBenchOptions): Promise<void> {
  const baseline = await seedsPerSecond(options.seeds, { store: "memory", faults: [] });
  const rows: string[][] = [["configuration", "seeds/s", "CPU ms per seed", "CPU ratio", "events per seed", "failed seeds"]];
  const row = (name: string, t: Throughput) => [name, fmt(t.rate), fmt(t.cpuMs), (baseline.cpuMs / t.cpuMs).toFixed(2), fmt(t.events), String(t.failed)];
  rows.push(row(`memory, no faults (baseline), ${options.seeds} seeds`, baseline));
  for (const store of ["memory", "sqlite"] as const) rows.push(row(`${store}, every fault, ${options.seeds} seeds`, await seedsPerSecond(options.seeds, { store, faults: ALL_FAULTS })));
  printTable("Simulation throughput (seeds per second, one process)", rows);

  const found: string[][] = [["planted bug", ...options.starts.map((start) => `from seed ${start}`), "median seeds to find"]];
  for (const bug of PLANTED_BUGS) {
    const counts: number[] = [];
    for (const start of options.starts) {
      let tried = 0;
      for (let seed = start; seed < start + options.budget; seed++) {
        tried += 1;
        if ((await runSeed({ seed, bugs: [bug] })).violations.length > 0) break;
        if (tried === options.budget) tried = Number.POSITIVE_INFINITY;
      }
      counts.push(tried);
    }
    const sorted = [...counts].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    found.push([bug, ...counts.map((n) => (Number.isFinite(n) ? String(n) : `>${options.budget}`)), Number.isFinite(median) ? String(median) : `>${options.budget}`]);
  }
  printTable("Seeds until a planted bug is found (every fault on)", found);
}
