import { describe, expect, it } from "vitest";
import type { OpenSessionInput } from "../adapter.js";
import { ProviderError } from "../adapter.js";
import { createClaudeDriver } from "./driver.js";
import { FakeClaude } from "./testing/fakeQuery.js";

/**
 * Opening a session when Claude Code cannot be started. The SDK boundary is
 * faked (FakeClaude): these cases must fail before anything is spawned.
 */

function openInput(options: Record<string, unknown>): OpenSessionInput {
  return {
    instance: { id: "claude", driver: "claude", enabled: true, displayName: null, models: null, options },
    threadId: "t",
    providerSessionId: "s",
    cwd: "/",
    runtimeMode: "full-access",
    interactionMode: "default",
    model: null,
    mcp: null,
    onEvent: () => undefined,
  };
}

describe("claude driver: a missing executable", () => {
  it("an executablePath that does not exist is not_installed, not retryable, and starts nothing", async () => {
    const fake = new FakeClaude();
    const driver = createClaudeDriver({ log: () => undefined, loadQuery: () => Promise.resolve(fake.query) });
    const error = await driver.openSession(openInput({ executablePath: "/nonexistent/claude" })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "not_installed", retryable: false });
    expect((error as Error).message).toContain("/nonexistent/claude");
    expect(fake.queries).toHaveLength(0);
  });

  it("no bundled executable for the platform is not_installed with the probe's reason", async () => {
    const fake = new FakeClaude();
    const reason = "the Claude Agent SDK has no bundled Claude Code executable for linux-riscv64; install the platform package or set options.executablePath";
    const driver = createClaudeDriver({ log: () => undefined, loadQuery: () => Promise.resolve(fake.query), installationProblem: () => reason });
    await expect(driver.openSession(openInput({}))).rejects.toMatchObject({ name: "ProviderError", code: "not_installed", message: reason });
    expect(fake.queries).toHaveLength(0);
  });

  it("an SDK that cannot be loaded is not_installed", async () => {
    const driver = createClaudeDriver({ log: () => undefined, loadQuery: () => Promise.reject(new Error("Cannot find package")), installationProblem: () => null });
    await expect(driver.openSession(openInput({}))).rejects.toMatchObject({ code: "not_installed", retryable: false });
  });
});
