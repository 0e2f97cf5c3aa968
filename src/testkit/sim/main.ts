import { parseArgs } from "node:util";
import { ALL_FAULTS, parseFaults } from "./faults.js";
import { PLANTED_BUGS, isPlantedBug } from "./plantedBugs.js";
import { type SimResult, runSeed } from "./runner.js";

/**
 * `npm run sim`: run seeds of the deterministic simulation (docs/simulation.md).
 *
 *   npm run sim -- --seed 42 --faults crash,hang --store sqlite   replay one seed (with --trace: what happened)
 *   npm run sim -- --seeds 1000 --from 1                           a range, every fault on
 *
 * Exits 1 when any seed breaks an invariant, printing each failing seed and
 * the command that replays it.
 */
const USAGE = "usage: npm run sim -- [--seed N | --seeds COUNT --from FIRST] [--faults all|none|a,b] [--store memory|sqlite] [--nodes 1|2] [--bugs name,...] [--steps N] [--trace]";

function formatFailure(result: SimResult): string {
  const lines = [`seed ${result.seed} FAILED (${result.store}, faults ${result.faults.join(",") || "none"}${result.bugs.length > 0 ? `, bugs ${result.bugs.join(",")}` : ""})`];
  for (const violation of result.violations.slice(0, 10)) lines.push(`  ${violation.invariant} at ${(violation.at / 1000).toFixed(3)} s: ${violation.message}`);
  if (result.violations.length > 10) lines.push(`  … and ${result.violations.length - 10} more`);
  lines.push(`  reproduce: ${result.reproduce}`);
  return lines.join("\n");
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seed: { type: "string" },
      seeds: { type: "string" },
      from: { type: "string" },
      faults: { type: "string" },
      store: { type: "string" },
      nodes: { type: "string" },
      bugs: { type: "string" },
      steps: { type: "string" },
      trace: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help === true) {
    console.log(USAGE);
    return 0;
  }
  const integer = (text: string | undefined, name: string, fallback: number): number => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`--${name} must be a non-negative integer, got ${text}`);
    return value;
  };
  const faults = values.faults === undefined ? ALL_FAULTS : parseFaults(values.faults);
  if (values.store !== undefined && values.store !== "memory" && values.store !== "sqlite") throw new Error(`--store must be memory or sqlite, got ${values.store}`);
  if (values.nodes !== undefined && values.nodes !== "1" && values.nodes !== "2") throw new Error(`--nodes must be 1 or 2, got ${values.nodes}`);
  const nodes = values.nodes === undefined ? {} : { nodes: values.nodes === "2" ? (2 as const) : (1 as const) };
  const bugs = values.bugs === undefined ? [] : values.bugs.split(",").map((name) => name.trim());
  const unknown = bugs.filter((name) => !isPlantedBug(name));
  if (unknown.length > 0) throw new Error(`unknown planted bug(s): ${unknown.join(", ")}; known: ${PLANTED_BUGS.join(", ")}`);
  const first = values.seed !== undefined ? integer(values.seed, "seed", 1) : integer(values.from, "from", 1);
  const count = values.seed !== undefined ? 1 : integer(values.seeds, "seeds", 100);
  const steps = values.steps === undefined ? undefined : integer(values.steps, "steps", 60);
  const started = performance.now();
  let failed = 0;
  for (let seed = first; seed < first + count; seed++) {
    const result = await runSeed({ seed, faults, ...(values.store === undefined ? {} : { store: values.store }), ...nodes, bugs: bugs.filter(isPlantedBug), ...(steps === undefined ? {} : { steps }), trace: values.trace === true });
    if (values.trace === true) for (const line of result.trace) console.log(line);
    if (result.violations.length > 0) {
      failed += 1;
      console.log(formatFailure(result));
    }
    const done = seed - first + 1;
    if (count >= 500 && done % 250 === 0 && done < count) console.log(`… ${done}/${count} seeds run, ${failed} failed, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    if (result.violations.length === 0 && count === 1) {
      const s = result.stats;
      console.log(`seed ${seed} ok (${result.store}): ${s.events} events, ${s.threads} threads, ${s.tasks} tasks, ${s.operations} calls, ${s.crashes} crashes, ${(s.simulatedMs / 1000).toFixed(0)} s simulated`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`${count - failed}/${count} seeds passed from seed ${first} in ${seconds.toFixed(1)} s (${(count / seconds).toFixed(1)} seeds/s)`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    console.error(USAGE);
    process.exitCode = 2;
  },
);
