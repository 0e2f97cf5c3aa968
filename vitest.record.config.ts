import { defineConfig } from "vitest/config";

/** Fixture recorders: run on purpose to refresh src/providers/<driver>/fixtures/. */
export default defineConfig({
  test: {
    include: ["src/**/*.record.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
