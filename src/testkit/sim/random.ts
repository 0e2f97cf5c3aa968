import { uniformInt } from "pure-rand/distribution/uniformInt";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";
import type { Random } from "../../engine/clock.js";

/**
 * The one seeded pseudo-random source of a simulation: every choice (which
 * operation, which fault, every provider latency, every id Loom mints) draws
 * from it, in an order fixed by the seed, so a seed replays one history.
 */
export class SimRandom implements Random {
  private readonly generator: RandomGenerator;

  constructor(readonly seed: number) {
    this.generator = xoroshiro128plus(seed);
  }

  /** An integer in [from, to], both included. */
  int(from: number, to: number): number {
    return uniformInt(this.generator, from, to);
  }

  /** True with probability `p` (0..1), in steps of 1/10,000. */
  chance(p: number): boolean {
    return p > 0 && this.int(0, 9_999) < p * 10_000;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("SimRandom.pick: nothing to pick from");
    return items[this.int(0, items.length - 1)]!;
  }

  /** An entry chosen with probability proportional to its weight; null when every weight is 0. */
  weighted<T extends { readonly weight: number }>(entries: readonly T[]): T | null {
    const total = entries.reduce((sum, entry) => sum + Math.max(0, entry.weight), 0);
    if (total <= 0) return null;
    let roll = this.int(1, total);
    for (const entry of entries) {
      roll -= Math.max(0, entry.weight);
      if (roll <= 0) return entry;
    }
    return entries[entries.length - 1]!;
  }

  /** A version-4-shaped UUID drawn from the seed. */
  uuid(): string {
    const hex = (bits: number) => (this.int(0, 2 ** bits - 1) >>> 0).toString(16).padStart(bits / 4, "0");
    return `${hex(32)}-${hex(16)}-4${hex(12)}-${(8 + this.int(0, 3)).toString(16)}${hex(12)}-${hex(24)}${hex(24)}`;
  }
}
