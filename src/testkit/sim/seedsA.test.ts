import { describe } from "vitest";
import { itPassesSeeds } from "./testSuiteSeeds.js";

/** The fixed-seed suite, first half (the second is seedsB.test.ts, so the two run in parallel). */
describe("simulation, every fault on: seeds 1-150", () => {
  itPassesSeeds(1, 150);
});
