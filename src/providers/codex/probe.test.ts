import { describe, expect, it } from "vitest";
import type { ProviderInstanceConfig } from "../../config/config.js";
import { createCodexDriver } from "./driver.js";
import { parseCodexOptions } from "./options.js";
import { type ProbeEnvironment, credentialsProblem, installedLauncher, probeCodex, resolveExecutable } from "./probe.js";

function instance(options: Record<string, unknown>): ProviderInstanceConfig {
  return { id: "codex", driver: "codex", enabled: true, displayName: null, models: null, options };
}

const PROVIDER = { modelProvider: { baseUrl: "http://127.0.0.1:1/v1", envKey: "LOOM_MODEL_KEY" } };

function env(overrides: Partial<ProbeEnvironment> = {}): ProbeEnvironment {
  return {
    processEnv: {},
    packageLauncher: () => "/pkg/bin/codex.js",
    exists: () => false,
    version: () => Promise.resolve("codex-cli 0.171.0"),
    ...overrides,
  };
}

const enoent = () => Promise.reject(Object.assign(new Error("spawn /opt/codex ENOENT"), { code: "ENOENT" }));

describe("where codex is", () => {
  it("options.binaryPath, else the installed package run by this Node, else codex on PATH", () => {
    expect(resolveExecutable(parseCodexOptions(instance({ binaryPath: "/opt/codex" })))).toEqual({ command: "/opt/codex", prefixArgs: [], display: "/opt/codex" });
    expect(resolveExecutable(parseCodexOptions(instance({})), () => "/pkg/bin/codex.js")).toEqual({ command: process.execPath, prefixArgs: ["/pkg/bin/codex.js"], display: "/pkg/bin/codex.js" });
    expect(resolveExecutable(parseCodexOptions(instance({})), () => null)).toEqual({ command: "codex", prefixArgs: [], display: "codex (on PATH)" });
  });

  it("finds the @openai/codex package Loom depends on", () => {
    expect(installedLauncher()).toMatch(/@openai\/codex\/bin\/codex\.js$/);
  });
});

describe("probe", () => {
  it("a missing executable: not installed, with a reason a model can read", async () => {
    const probe = await probeCodex(parseCodexOptions(instance({ binaryPath: "/opt/codex", ...PROVIDER, env: { LOOM_MODEL_KEY: "k" } })), env({ version: enoent }));
    expect(probe).toEqual({ installed: false, authenticated: true, reason: "codex executable not found at /opt/codex" });
  });

  it("both problems are reported together", async () => {
    const probe = await probeCodex(parseCodexOptions(instance({ binaryPath: "/opt/codex" })), env({ version: enoent }));
    expect(probe.reason).toBe(
      "codex executable not found at /opt/codex; no credentials: set options.modelProvider and its env key, or OPENAI_API_KEY (or options.codexHome with a codex login)",
    );
  });

  it("the installed codex answers --version", async () => {
    const probe = await probeCodex(parseCodexOptions(instance({ ...PROVIDER, env: { LOOM_MODEL_KEY: "dummy" } })));
    expect(probe).toEqual({ installed: true, authenticated: true, reason: null });
  });

  it("the driver's probe rejects invalid options with their message", async () => {
    await expect(createCodexDriver().probe(instance({ modelProvider: { baseUrl: "nope" } }))).rejects.toThrow(/options\.modelProvider\.baseUrl/);
  });
});

describe("credentials", () => {
  const check = (options: Record<string, unknown>, processEnv: Record<string, string> = {}, exists: (path: string) => boolean = () => false) =>
    credentialsProblem(parseCodexOptions(instance(options)), { processEnv, exists });

  it("a model provider needs its env key, in options.env or Loom's environment", () => {
    expect(check({ ...PROVIDER, env: { LOOM_MODEL_KEY: "k" } })).toBeNull();
    expect(check(PROVIDER, { LOOM_MODEL_KEY: "k" })).toBeNull();
    expect(check(PROVIDER)).toBe("no credentials: options.modelProvider.envKey LOOM_MODEL_KEY is not set in options.env or Loom's environment");
    expect(check({ modelProvider: { baseUrl: "http://127.0.0.1:1/v1" } })).toBeNull();
  });

  it("without one: OPENAI_API_KEY or CODEX_API_KEY, or a login in options.codexHome", () => {
    expect(check({}, { OPENAI_API_KEY: "sk" })).toBeNull();
    expect(check({ env: { CODEX_API_KEY: "sk" } })).toBeNull();
    expect(check({ codexHome: "/home/me/.codex" }, {}, (path) => path === "/home/me/.codex/auth.json")).toBeNull();
    expect(check({})).toMatch(/^no credentials: set options.modelProvider/);
  });
});
