import { ALL_FAULTS } from "../src/testkit/sim/faults.js";
import { PLANTED_BUGS } from "../src/testkit/sim/plantedBugs.js";
import { type SimOptions, runSeed } from "../src/testkit/sim/runner.js";
import { fmt, now, printTable, seconds } from "./stats.js";

/**
 * The deterministic simulation (docs/simulation.md): how many seeds a second
 * it runs, with every fault on and on each store, against a baseline of the
 * same seeds on the memory store with no faults; and how many seeds it takes
 * to find each planted bug, from several starting seeds.
 */
export interface SimBenchOptions {
  /** Seeds per throughput measurement. */
  readonly seeds: number;
  /** Starting seeds for the planted-bug search; each search gives up after `budget` seeds. */
  readonly starts: readonly number[];
  readonly budget: number;
}

async function seedsPerSecond(count: number, options: Omit<SimOptions, "seed">): Promise<{ rate: number; failed: number }> {
  const start = now();
  let failed = 0;
  for (let seed = 1; seed <= count; seed++) {
    const result = await runSeed({ ...options, seed });
    if (result.violations.length > 0) failed += 1;
  }
  return { rate: count / seconds(start), failed };
}

export async function runSimBench(options: SimBenchOptions): Promise<void> {
  const baseline = await seedsPerSecond(options.seeds, { store: "memory", faults: [] });
  const rows: string[][] = [["configuration", "seeds/s", "ratio", "failed seeds"]];
  rows.push([`memory, no faults (baseline), ${options.seeds} seeds`, fmt(baseline.rate), "1.00", String(baseline.failed)]);
  for (const store of ["memory", "sqlite"] as const) {
    const measured = await seedsPerSecond(options.seeds, { store, faults: ALL_FAULTS });
    rows.push([`${store}, every fault, ${options.seeds} seeds`, fmt(measured.rate), (measured.rate / baseline.rate).toFixed(2), String(measured.failed)]);
  }
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
