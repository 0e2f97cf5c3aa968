import { describe } from "vitest";
import { itPassesSeeds } from "./testSuiteSeeds.js";

/** The fixed-seed suite, second half (the first is seedsA.test.ts). */
describe("simulation, every fault on: seeds 151-300", () => {
  itPassesSeeds(151, 150);
});
