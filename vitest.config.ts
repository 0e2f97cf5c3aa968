import { defineConfig } from "vitest/config";

/**
 * Unit and integration tests. End-to-end tests with real agent CLIs
 * (`*.e2e.test.ts`) run with vitest.e2e.config.ts; fixture recorders
 * (`*.record.test.ts`) only run on purpose (npm run record:codex|claude).
 */
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    exclude: ["**/node_modules/**", "src/**/*.e2e.test.ts", "src/**/*.record.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
