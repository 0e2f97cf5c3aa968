import { expect, it } from "vitest";
import { type SimOptions, type SimResult, runSeed } from "./runner.js";

/** A failing seed as a test failure message: what broke and the command that replays it. */
export function failureReport(result: SimResult): string {
  const lines = result.violations.slice(0, 5).map((violation) => `${violation.invariant}: ${violation.message}`);
  return `seed ${result.seed} broke ${result.violations.length} invariant check(s):\n${lines.join("\n")}\nreproduce: ${result.reproduce}`;
}

/** One test per seed in [first, first + count), every fault on unless `options` says otherwise. */
export function itPassesSeeds(first: number, count: number, options: Omit<SimOptions, "seed"> = {}): void {
  for (let seed = first; seed < first + count; seed++) {
    it(`seed ${seed}`, async () => {
      const result = await runSeed({ ...options, seed });
      expect(result.violations, failureReport(result)).toEqual([]);
    });
  }
}
