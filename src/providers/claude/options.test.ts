import { describe, expect, it } from "vitest";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { createClaudeDriver } from "./driver.js";
import { parseClaudeOptions } from "./options.js";
import { DriverOptionsError } from "../kit/driverOptions.js";

function instance(options: Record<string, unknown> = {}, models: string[] | null = null): ProviderInstanceConfig {
  return { id: "claude", driver: "claude", enabled: true, displayName: null, models, options };
}

describe("claude options", () => {
  it("applies defaults", () => {
    expect(parseClaudeOptions(instance())).toEqual({ env: {}, configDir: null, executablePath: null, startupTimeoutMs: 60_000 });
  });

  it("names every bad field, unknown keys included", () => {
    expect(() => parseClaudeOptions(instance({ env: { A: 1 }, configDir: "", colour: "red" }))).toThrow(DriverOptionsError);
    try {
      parseClaudeOptions(instance({ env: { A: 1 }, configDir: "", colour: "red" }));
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain('invalid options for claude instance "claude"');
      expect(message).toContain("options.env.A: must be a string");
      expect(message).toContain("options.configDir: must not be empty");
      expect(message).toContain("colour");
    }
  });
});

describe("claude capabilities", () => {
  const driver = createClaudeDriver({ log: () => undefined });

  it("steers, interrupts, restarts and resumes; no fork; all runtime modes; MCP over HTTP", () => {
    expect(driver.capabilities(instance())).toEqual({
      steering: true,
      interrupt: true,
      restart: true,
      fork: false,
      resume: true,
      runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
      models: ["claude-sonnet-4-5"],
      mcpTransport: "http",
      curatedModels: true,
    });
  });

  it("advertises the instance's models", () => {
    expect(driver.capabilities(instance({}, ["claude-opus-4-1", "claude-haiku-4-5"])).models).toEqual(["claude-opus-4-1", "claude-haiku-4-5"]);
    expect(driver.capabilities(instance({ bogus: true }, ["m"])).models).toEqual(["m"]);
  });

  it("probe rejects bad options with their message", async () => {
    await expect(driver.probe(instance({ bogus: true }))).rejects.toThrow(/invalid options for claude instance/);
  });

  it("openSession with bad options is start_failed", async () => {
    await expect(
      driver.openSession({
        instance: instance({ startupTimeoutMs: -1 }),
        threadId: "t",
        providerSessionId: "s",
        cwd: "/",
        runtimeMode: "full-access",
        interactionMode: "default",
        model: null,
        mcp: null,
        onEvent: () => undefined,
      }),
    ).rejects.toMatchObject({ name: "ProviderError", code: "start_failed" });
  });
});
