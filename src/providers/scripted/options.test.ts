import { describe, expect, it } from "vitest";
import { ProviderError } from "../adapter.js";
import { scriptedDriver } from "./driver.js";
import { parseScriptedOptions } from "./options.js";
import { scriptedInstance } from "./sessionHarness.js";
import { DriverOptionsError } from "../kit/driverOptions.js";

describe("scripted options and capabilities", () => {
  it("defaults: steerable, interruptible, restartable, every runtime mode, scripted-1 over HTTP", () => {
    expect(scriptedDriver.driver).toBe("scripted");
    expect(scriptedDriver.capabilities(scriptedInstance())).toEqual({
      steering: true,
      interrupt: true,
      restart: true,
      fork: false,
      resume: true,
      runtimeModes: ["approval-required", "auto-accept-edits", "full-access"],
      models: ["scripted-1"],
      mcpTransport: "http",
      turnEnvironment: true,
    });
    expect(parseScriptedOptions(scriptedInstance())).toMatchObject({ startupDelayMs: 0, turnDelayMs: 0, commandTimeoutMs: 60_000 });
  });

  it("options.capabilities overrides part of the record; runtimeModes and models override it again", () => {
    const instance = scriptedInstance({
      capabilities: { steering: false, fork: true, mcpTransport: "none", runtimeModes: ["full-access"], models: ["a"] },
      runtimeModes: ["full-access", "approval-required"],
      models: ["b", "c"],
    });
    expect(scriptedDriver.capabilities(instance)).toMatchObject({
      steering: false,
      interrupt: true,
      fork: true,
      mcpTransport: "none",
      // narrowest first, whatever the configured order
      runtimeModes: ["approval-required", "full-access"],
      models: ["b", "c"],
    });
  });

  it("the instance's own models list wins over every option", () => {
    const instance = { ...scriptedInstance({ models: ["b"] }), models: ["top"] };
    expect(scriptedDriver.capabilities(instance).models).toEqual(["top"]);
  });

  it("bad options are reported with every bad field named", () => {
    const instance = scriptedInstance({ turnDelayMs: -5, startupDelayMs: "soon", capabilities: { steering: "yes" }, colour: 1 });
    let error: unknown;
    try {
      parseScriptedOptions(instance);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DriverOptionsError);
    const message = (error as Error).message;
    expect(message).toContain('invalid options for scripted instance "scripted"');
    expect(message).toContain("options.turnDelayMs: must not be negative");
    expect(message).toContain("options.startupDelayMs: must be a number of milliseconds");
    expect(message).toContain("options.capabilities.steering: must be true or false");
    expect(message).toContain("colour");
  });

  it("with bad options, capabilities stay the defaults, probe rejects with the reason and openSession fails to start", async () => {
    const instance = scriptedInstance({ runtimeModes: ["yolo"] });
    expect(scriptedDriver.capabilities(instance).runtimeModes).toHaveLength(3);
    await expect(scriptedDriver.probe(instance)).rejects.toThrow("options.runtimeModes[0]");
    await expect(
      scriptedDriver.openSession({
        instance,
        threadId: "t",
        providerSessionId: "p",
        cwd: process.cwd(),
        runtimeMode: "full-access",
        interactionMode: "default",
        model: null,
        mcp: null,
        onEvent: () => undefined,
      }),
    ).rejects.toMatchObject({ name: "ProviderError", code: "start_failed" });
  });

  it("probe says installed and authenticated", async () => {
    await expect(scriptedDriver.probe(scriptedInstance())).resolves.toEqual({ installed: true, authenticated: true, reason: null });
  });

  it("openSession refuses a runtime mode the instance does not offer", async () => {
    const error = await scriptedDriver
      .openSession({
        instance: scriptedInstance({ runtimeModes: ["approval-required"] }),
        threadId: "t",
        providerSessionId: "p",
        cwd: process.cwd(),
        runtimeMode: "full-access",
        interactionMode: "default",
        model: null,
        mcp: null,
        onEvent: () => undefined,
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "unsupported", retryable: false });
  });
});
