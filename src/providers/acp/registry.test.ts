import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ProviderInstanceConfig } from "../../config/config.js";
import type { NormalizedProviderEvent } from "../events.js";
import { type AgentArchiveServer, serveAgentArchive } from "../../testkit/acpAgentArchive.js";
import { SCRIPTED_AGENT_PATH, waitForEvent } from "../../testkit/acpAgentHarness.js";
import { createAcpDriver } from "./driver.js";
import { RegistryError, chooseDistribution, currentPlatform, findAgent, loadRegistry, searchRegistry } from "./registry.js";
import { AcpRegistryCatalog } from "./registryCatalog.js";
import { acpCacheRoot } from "./registryCache.js";
import { defaultInstallEnvironment, runProgram } from "./registryInstall.js";

/**
 * The ACP registry catalog: a local registry file (testkit/acpRegistry.json),
 * a binary archive served from a local HTTP server (right and wrong
 * checksums), an npm distribution installed from the npm registry into a
 * temp cache, and a uvx distribution on a machine without uv.
 */

const TESTKIT_REGISTRY = fileURLToPath(new URL("../../testkit/acpRegistry.json", import.meta.url));
const PLATFORM = currentPlatform();

let work: string;
let stateDir: string;

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), "loom-acp-registry-"));
  stateDir = join(work, "state");
  mkdirSync(stateDir);
});

afterEach(() => {
  rmSync(work, { recursive: true, force: true });
});

describe("the registry document", () => {
  it("loads a local registry file, searches it and picks this machine's distribution", async () => {
    const document = await loadRegistry(TESTKIT_REGISTRY);
    expect(document.agents.map((agent) => agent.id)).toEqual(["semver-cli", "gemini", "python-agent", "mac-only"]);
    expect(searchRegistry(document, "GEMINI coding").map((agent) => agent.id)).toEqual(["gemini"]);
    expect(searchRegistry(document, "").length).toBe(4);
    expect(chooseDistribution(findAgent(document, "gemini"))).toMatchObject({ kind: "npx", spec: { package: "@google/gemini-cli@0.61.0", args: ["--experimental-acp"] } });
    expect(chooseDistribution(findAgent(document, "python-agent"))).toMatchObject({ kind: "uvx" });
    expect(() => chooseDistribution(findAgent(document, "mac-only"), "linux-x86_64")).toThrow(expect.objectContaining({ code: "no_compatible_distribution" }));
    expect(() => findAgent(document, "nobody")).toThrow(expect.objectContaining({ code: "unknown_agent" }));
  });

  it("a missing file or a document of another shape is a typed error", async () => {
    await expect(loadRegistry(join(work, "missing.json"))).rejects.toMatchObject({ name: "RegistryError", code: "registry_unreachable" });
    writeFileSync(join(work, "bad.json"), JSON.stringify({ agents: [{ id: "x", name: "x", version: "1.0.0", description: "x", distribution: {} }] }));
    await expect(loadRegistry(join(work, "bad.json"))).rejects.toMatchObject({ code: "registry_invalid" });
    writeFileSync(join(work, "notjson.json"), "{");
    await expect(loadRegistry(join(work, "notjson.json"))).rejects.toMatchObject({ code: "registry_invalid" });
  });

  it("search reports what would be installed here and what is prepared, without starting anything", async () => {
    const catalog = new AcpRegistryCatalog({ cacheRoot: acpCacheRoot(stateDir), location: TESTKIT_REGISTRY });
    const entries = await catalog.search("");
    expect(entries.map((entry) => [entry.agent.id, "kind" in entry.install ? entry.install.kind : "unavailable", entry.prepared])).toEqual([
      ["semver-cli", "npx", null],
      ["gemini", "npx", null],
      ["python-agent", "uvx", null],
      ["mac-only", PLATFORM === "darwin-aarch64" ? "binary" : "unavailable", null],
    ]);
    expect(existsSync(acpCacheRoot(stateDir))).toBe(false);
  });
});

describe("binary distributions from a local HTTP server", () => {
  let archive: AgentArchiveServer;
  let archiveSha: string;

  beforeAll(async () => {
    archive = await serveAgentArchive();
    archiveSha = archive.sha256;
  });

  afterAll(async () => {
    await archive.close();
  });

  function writeRegistry(sha256: string, archivePath = archive.path): string {
    const caps = JSON.stringify({ models: ["registry-model"], loadSession: true });
    return archive.writeRegistry(join(work, "registry.json"), { sha256, path: archivePath, env: { LOOM_ACP_AGENT_CAPS: caps } });
  }

  function instance(options: Record<string, unknown> = {}): ProviderInstanceConfig {
    return { id: "scripted-registry", driver: "acp", enabled: true, displayName: null, models: null, options: { registryAgent: "scripted-acp", ...options } };
  }

  it("installs with a verified checksum into the versioned cache; a disposable session/new proves readiness; a turn runs", async () => {
    const catalog = new AcpRegistryCatalog({ cacheRoot: acpCacheRoot(stateDir), location: writeRegistry(archiveSha) });
    const driver = createAcpDriver({ stateDir });
    // Before preparation the instance is not installed, and nothing was started.
    expect(await driver.probe(instance())).toMatchObject({ installed: false, reason: expect.stringContaining("loom providers prepare scripted-acp") });

    const installed = await catalog.prepare("scripted-acp");
    expect(installed).toMatchObject({ agentId: "scripted-acp", version: "2.0.0", distribution: "binary", sha256: archiveSha, command: join(acpCacheRoot(stateDir), "scripted-acp", "2.0.0", "bin", "scripted-agent") });
    expect(catalog.list().map((entry) => `${entry.agentId}@${entry.version}`)).toEqual(["scripted-acp@2.0.0"]);
    expect((await catalog.search("scripted-acp"))[0]?.prepared).toBe("2.0.0");

    expect(await driver.probe(instance())).toEqual({ installed: true, authenticated: true, reason: null });
    // The registry's env reached the agent: it advertised the model it was told to.
    expect(driver.capabilities(instance())).toMatchObject({ models: ["registry-model"], resume: true, mcpTransport: "http" });

    const events: NormalizedProviderEvent[] = [];
    const session = await driver.openSession({ instance: instance(), threadId: "t", providerSessionId: "p", cwd: work, runtimeMode: "full-access", interactionMode: "default", model: null, mcp: null, onEvent: (event) => events.push(event) });
    try {
      await session.startTurn({ runId: "run-1", input: "hello" });
      await waitForEvent(events, (event) => event.type === "turn.completed", "the turn to end");
      expect(events).toContainEqual(expect.objectContaining({ item: { kind: "assistant_message", text: "Echo: hello" } }));
    } finally {
      await session.stop();
    }
  });

  it("a local executable overrides the installed command but keeps the registry's environment", async () => {
    const catalog = new AcpRegistryCatalog({ cacheRoot: acpCacheRoot(stateDir), location: writeRegistry(archiveSha) });
    await catalog.prepare("scripted-acp");
    const driver = createAcpDriver({ stateDir });
    const local = instance({ command: process.execPath, args: [SCRIPTED_AGENT_PATH] });
    expect(await driver.probe(local)).toEqual({ installed: true, authenticated: true, reason: null });
    expect(driver.capabilities(local).models).toEqual(["registry-model"]);
  });

  it("a checksum mismatch is refused with a typed error and nothing is left installed", async () => {
    const catalog = new AcpRegistryCatalog({ cacheRoot: acpCacheRoot(stateDir), location: writeRegistry("0".repeat(64)) });
    const failure = await catalog.prepare("scripted-acp").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RegistryError);
    expect(failure).toMatchObject({ code: "checksum_mismatch" });
    expect((failure as Error).message).toContain(archiveSha);
    expect(catalog.list()).toEqual([]);
    expect(existsSync(join(acpCacheRoot(stateDir), "scripted-acp"))).toBe(false);
  });

  it("a failed download is a typed error and leaves an earlier install in place", async () => {
    const good = new AcpRegistryCatalog({ cacheRoot: acpCacheRoot(stateDir), location: writeRegistry(archiveSha) });
    await good.prepare("scripted-acp");
    const missing = new AcpRegistryCatalog({ cacheRoot: acpCacheRoot(stateDir), location: writeRegistry(archiveSha, "/releases/missing.tar.gz") });
    await expect(missing.prepare("scripted-acp")).rejects.toMatchObject({ code: "install_failed", message: expect.stringContaining("HTTP 404") });
    expect(missing.list().map((entry) => entry.version)).toEqual(["2.0.0"]);
    expect(readdirSync(join(acpCacheRoot(stateDir), "scripted-acp")).sort()).toEqual(["2.0.0", "current.json"]);
  });
});

describe("package distributions", () => {
  it("npx: installs the package from the npm registry into the versioned cache (never globally) and launches its bin", async () => {
    const catalog = new AcpRegistryCatalog({ cacheRoot: acpCacheRoot(stateDir), location: TESTKIT_REGISTRY });
    const installed = await catalog.prepare("semver-cli");
    const dir = join(acpCacheRoot(stateDir), "semver-cli", "7.8.6");
    expect(installed).toMatchObject({ distribution: "npx", version: "7.8.6", command: join(dir, "node_modules", ".bin", "semver"), args: ["--help"], source: "npm:semver@7.8.6" });
    expect(JSON.parse(readFileSync(join(dir, "node_modules", "semver", "package.json"), "utf8"))).toMatchObject({ name: "semver", version: "7.8.6" });
    // The installed command runs.
    expect(execFileSync(installed.command, ["1.2.3"], { encoding: "utf8" }).trim()).toBe("1.2.3");
  }, 120_000);

  it("uvx without uv: a clear 'uv not installed' error and nothing installed", async () => {
    // A PATH with nothing on it: the real spawn of `uv` fails as on a machine without uv.
    const emptyBin = join(work, "empty-bin");
    mkdirSync(emptyBin);
    const install = { ...defaultInstallEnvironment(), run: (command: string, args: readonly string[], options: { cwd: string }) => runProgram(command, args, { ...options, env: { ...process.env, PATH: emptyBin } }) };
    const catalog = new AcpRegistryCatalog({ cacheRoot: acpCacheRoot(stateDir), location: TESTKIT_REGISTRY, install });
    await expect(catalog.prepare("python-agent")).rejects.toMatchObject({ code: "uv_not_installed", message: expect.stringContaining("uv not installed") });
    expect(catalog.list()).toEqual([]);
    expect(existsSync(join(acpCacheRoot(stateDir), "python-agent"))).toBe(false);
  });
});
