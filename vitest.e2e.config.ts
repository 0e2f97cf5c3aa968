import { defineConfig } from "vitest/config";

/** End-to-end tests: real agent CLIs (codex, claude) against the scripted model server. */
export default defineConfig({
  test: {
    include: ["src/**/*.e2e.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Real CLIs are heavy: two at a time on a 2-core machine.
    maxWorkers: 2,
  },
});
