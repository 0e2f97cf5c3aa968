import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { ProviderError } from "../adapter.js";
import { claudeDriver } from "../claude/driver.js";
import { codexDriver } from "../codex/driver.js";
import { scriptedDriver } from "../scripted/driver.js";
import { DriverOptionsError, defineDriverOptions, driverOptionProblems, optionsForSession, optionsOrNull } from "./driverOptions.js";
import { validateProviderInstances } from "./validateInstances.js";

function instance(id: string, driver: string, options: Record<string, unknown> = {}, extra: Partial<ProviderInstanceConfig> = {}): ProviderInstanceConfig {
  return { id, driver, enabled: true, displayName: null, models: null, options, ...extra };
}

const Schema = z.strictObject({
  delayMs: z.number({ error: "must be a number" }).int().nonnegative({ error: "must not be negative" }).optional(),
  tags: z.array(z.string({ error: "must be a string" })).optional(),
});
const toy = defineDriverOptions({
  driver: "toy",
  schema: Schema,
  resolve: (options, config) => ({ delayMs: options.delayMs ?? 5, tags: options.tags ?? [], models: config.models }),
});

describe("defineDriverOptions", () => {
  it("applies the driver's defaults to valid options, with the rest of the instance at hand", () => {
    expect(toy.parse(instance("t", "toy", {}, { models: ["m"] }))).toEqual({ delayMs: 5, tags: [], models: ["m"] });
    expect(toy.parse(instance("t", "toy", { delayMs: 0, tags: ["a"] }))).toEqual({ delayMs: 0, tags: ["a"], models: null });
  });

  it("bad options throw one DriverOptionsError naming every bad field, not retryable", () => {
    let error: unknown;
    try {
      toy.parse(instance("t1", "toy", { delayMs: -1, tags: ["a", 2], colour: "red" }));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DriverOptionsError);
    expect(error).toMatchObject({ code: "invalid_options", retryable: false, driver: "toy", instanceId: "t1" });
    const problems = (error as DriverOptionsError).problems;
    expect(problems).toEqual(["options.delayMs: must not be negative", "options.tags[1]: must be a string", 'options: Unrecognized key: "colour"']);
    expect((error as Error).message).toBe(`invalid options for toy instance "t1": ${problems.join("; ")}`);
  });

  it("options that are not an object are one problem at `options`", () => {
    expect(driverOptionProblems(Schema, "fast")).toEqual(["options: Invalid input: expected object, received string"]);
    expect(driverOptionProblems(Schema, { delayMs: 1 })).toEqual([]);
  });

  it("optionsForSession turns bad options into ProviderError start_failed; optionsOrNull into null", () => {
    const bad = instance("t", "toy", { delayMs: "soon" });
    let error: unknown;
    try {
      optionsForSession(toy, bad);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "start_failed", message: 'invalid options for toy instance "t": options.delayMs: must be a number' });
    expect((error as ProviderError).cause).toBeInstanceOf(DriverOptionsError);
    expect(optionsOrNull(toy, bad)).toBeNull();
    expect(optionsOrNull(toy, instance("t", "toy"))).toMatchObject({ delayMs: 5 });
  });
});

describe("validateProviderInstances", () => {
  const drivers = new Map([
    [scriptedDriver.driver, scriptedDriver],
    [codexDriver.driver, codexDriver],
    [claudeDriver.driver, claudeDriver],
  ]);

  it("a good config has nothing to report", () => {
    const instances = [
      instance("scripted", "scripted", { turnDelayMs: 10, capabilities: { steering: false } }),
      instance("codex", "codex", { modelProvider: { baseUrl: "http://127.0.0.1:1/v1" } }),
      instance("claude", "claude", { env: { ANTHROPIC_API_KEY: "k" } }),
    ];
    expect(validateProviderInstances(instances, drivers)).toEqual([]);
  });

  it("lists every error of every instance, disabled ones included, in config order", () => {
    const instances = [
      instance("ok", "scripted"),
      instance("gemini", "gemini-cli"),
      instance("slow", "scripted", { turnDelayMs: -5, runtimeModes: ["yolo"] }),
      instance("codex", "codex", { modelProvider: { baseUrl: "ftp://x" }, binaryPat: "/x" }),
      instance("claude-off", "claude", { startupTimeoutMs: 0 }, { enabled: false }),
    ];
    expect(validateProviderInstances(instances, drivers)).toEqual([
      { instanceId: "gemini", errors: ['unknown driver "gemini-cli"; known drivers: claude, codex, scripted'] },
      { instanceId: "slow", errors: ["options.turnDelayMs: must not be negative", expect.stringMatching(/^options\.runtimeModes\[0\]: /)] },
      { instanceId: "codex", errors: ["options.modelProvider.baseUrl: must be an http(s) URL", 'options: Unrecognized key: "binaryPat"'] },
      { instanceId: "claude-off", errors: ["options.startupTimeoutMs: must be greater than 0"] },
    ]);
  });

  it("with no drivers at all, every instance names the problem", () => {
    expect(validateProviderInstances([instance("a", "scripted")], new Map())).toEqual([{ instanceId: "a", errors: ['unknown driver "scripted"; known drivers: none'] }]);
  });
});
