import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  DEFAULT_CONFIG_FILE,
  DEFAULT_CREDENTIALS,
  DEFAULT_LIMITS,
  DEFAULT_WAITS,
  loadConfig,
  parseConfigText,
} from "./config.js";

function tempDir(name = "project"): string {
  const dir = join(mkdtempSync(join(tmpdir(), "loom-config-")), name);
  mkdirSync(dir);
  return dir;
}

function writeConfig(dir: string, content: unknown, file = DEFAULT_CONFIG_FILE): string {
  const path = join(dir, file);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig defaults", () => {
  it("without a file: one default project at cwd and the scripted provider", () => {
    const cwd = tempDir("my-repo");
    const config = loadConfig(undefined, cwd, cwd);
    expect(config.source).toBeNull();
    expect(config.projects).toEqual([{ id: "default", root: cwd, name: "my-repo" }]);
    expect(config.providers).toEqual([
      { id: "scripted", driver: "scripted", enabled: true, displayName: null, models: null, options: {} },
    ]);
    expect(config.limits).toEqual(DEFAULT_LIMITS);
    expect(config.credentials).toEqual({ idleTtlMs: 30 * 60_000, maxLifetimeMs: 24 * 60 * 60_000 });
    expect(config.waits).toEqual(DEFAULT_WAITS);
  });

  it("empty providers and projects lists fall back to the defaults", () => {
    const cwd = tempDir("repo");
    writeConfig(cwd, { providers: [], projects: [] });
    const config = loadConfig(undefined, cwd, cwd);
    expect(config.source).toBe(join(cwd, DEFAULT_CONFIG_FILE));
    expect(config.providers.map((p) => p.id)).toEqual(["scripted"]);
    expect(config.projects.map((p) => [p.id, p.root])).toEqual([["default", cwd]]);
  });
});

describe("loadConfig file parsing", () => {
  it("reads providers, projects and overrides, filling per-field defaults", () => {
    const cwd = tempDir();
    writeConfig(cwd, {
      providers: [
        { id: "codex-main", driver: "codex", displayName: "Codex", models: ["gpt-5"], options: { binary: "/opt/codex" } },
        { id: "claude", driver: "claude", enabled: false },
      ],
      projects: [
        { id: "web", root: "apps/web", name: "Web app" },
        { id: "abs", root: "/srv/abs" },
      ],
      limits: { maxSpawnsPerRootThread: 8 },
      credentials: { idleTtlMs: 60_000 },
      waits: { maxWaitMs: 30_000 },
    });
    const config = loadConfig(undefined, cwd, cwd);
    expect(config.providers).toEqual([
      {
        id: "codex-main",
        driver: "codex",
        enabled: true,
        displayName: "Codex",
        models: ["gpt-5"],
        options: { binary: "/opt/codex" },
      },
      { id: "claude", driver: "claude", enabled: false, displayName: null, models: null, options: {} },
    ]);
    expect(config.projects).toEqual([
      { id: "web", root: join(cwd, "apps/web"), name: "Web app" },
      { id: "abs", root: "/srv/abs", name: "abs" },
    ]);
    expect(config.limits).toEqual({ ...DEFAULT_LIMITS, maxSpawnsPerRootThread: 8 });
    expect(config.credentials).toEqual({ ...DEFAULT_CREDENTIALS, idleTtlMs: 60_000 });
    expect(config.waits).toEqual({ maxWaitMs: 30_000 });
  });

  it("an explicit path resolves against cwd and relative roots against the file's directory", () => {
    const cwd = tempDir();
    const confDir = join(cwd, "conf");
    mkdirSync(confDir);
    writeConfig(confDir, { projects: [{ id: "p", root: "../src" }] }, "custom.json");
    const config = loadConfig("conf/custom.json", cwd, cwd);
    expect(config.source).toBe(join(confDir, "custom.json"));
    expect(config.projects).toEqual([{ id: "p", root: join(cwd, "src"), name: "src" }]);
    expect(config.providers.map((p) => p.id)).toEqual(["scripted"]);
  });
});

describe("loadConfig errors", () => {
  it("an explicit path that does not exist is config_not_found", () => {
    const cwd = tempDir();
    const error = configError(() => loadConfig("missing.json", cwd, cwd));
    expect(error.code).toBe("config_not_found");
    expect(error.message).toContain(join(cwd, "missing.json"));
    expect(error.retryable).toBe(false);
  });

  it("invalid JSON names the file", () => {
    const cwd = tempDir();
    const file = writeConfig(cwd, "{ providers: [");
    const error = configError(() => loadConfig(undefined, cwd, cwd));
    expect(error.code).toBe("invalid_config");
    expect(error.message).toContain(file);
    expect(error.message).toContain("not valid JSON");
  });

  it("a bad price names the provider, the model and the field", () => {
    const cwd = tempDir();
    for (const [prices, expected] of [
      [{ "*": { inputPerMTok: -1, outputPerMTok: 1 } }, "providers[0].prices.*.inputPerMTok: must be at least 0"],
      [{ m: { inputPerMTok: 1, outputPerMTok: "3" } }, "providers[0].prices.m.outputPerMTok: must be a number"],
      [{ m: { inputPerMTok: 1, outputPerMTok: 1, perRequest: 2 } }, "perRequest"],
      [{ m: { outputPerMTok: 1 } }, "providers[0].prices.m.inputPerMTok"],
    ] as const) {
      writeConfig(cwd, { providers: [{ id: "x", driver: "scripted", prices }] });
      const error = configError(() => loadConfig(undefined, cwd, cwd));
      expect(error.code).toBe("invalid_config");
      expect(error.message).toContain(expected);
    }
    writeConfig(cwd, { providers: [{ id: "x", driver: "scripted", prices: { "*": { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 } } }] });
    expect(loadConfig(undefined, cwd, cwd).providers[0]?.prices).toEqual({ "*": { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 } });
  });

  it("a bad field names the file and the field's path", () => {
    const cwd = tempDir();
    const file = writeConfig(cwd, { providers: [{ id: "ok", driver: "codex" }, { id: "x", driver: "codex", enabled: "yes" }] });
    const error = configError(() => loadConfig(undefined, cwd, cwd));
    expect(error.code).toBe("invalid_config");
    expect(error.message).toContain(file);
    expect(error.message).toContain("providers[1].enabled: must be true or false");
  });

  it("providers[].toolProfile is core or full, absent by default (full), anything else a typed invalid_config", () => {
    const parsed = parseConfigText(JSON.stringify({ providers: [{ id: "lean", driver: "scripted", toolProfile: "core" }, { id: "all", driver: "scripted" }] }), "/c.json", "/");
    expect(parsed.providers.map((p) => p.toolProfile)).toEqual(["core", undefined]);
    const bad = configError(() => parseConfigText(JSON.stringify({ providers: [{ id: "x", driver: "scripted", toolProfile: "minimal" }] }), "/c.json", "/"));
    expect(bad.code).toBe("invalid_config");
    expect(bad.retryable).toBe(false);
    expect(bad.message).toContain('providers[0].toolProfile: must be "core" or "full"');
  });

  it("workspaces.portRangeStart and portBlockSize default to 41000 and 10; a port below 1024 or a block of 0 is a typed invalid_config", () => {
    expect(parseConfigText("{}", "/c.json", "/").workspaces).toMatchObject({ portRangeStart: 41_000, portBlockSize: 10 });
    expect(parseConfigText(JSON.stringify({ workspaces: { portRangeStart: 30_000, portBlockSize: 4 } }), "/c.json", "/").workspaces).toMatchObject({ portRangeStart: 30_000, portBlockSize: 4 });
    const low = configError(() => parseConfigText(JSON.stringify({ workspaces: { portRangeStart: 80 } }), "/c.json", "/"));
    expect(low.code).toBe("invalid_config");
    expect(low.message).toContain("workspaces.portRangeStart: must be at least 1024");
    const empty = configError(() => parseConfigText(JSON.stringify({ workspaces: { portBlockSize: 0 } }), "/c.json", "/"));
    expect(empty.message).toContain("workspaces.portBlockSize: must be greater than 0");
  });

  it("unknown keys are rejected (strict)", () => {
    const error = configError(() => parseConfigText(JSON.stringify({ projects: [{ id: "p", root: ".", rooot: "x" }] }), "/c.json", "/"));
    expect(error.message).toMatch(/projects\[0\]: Unrecognized key: "rooot"/);
  });

  it("a missing required field and a bad id are both reported", () => {
    const error = configError(() =>
      parseConfigText(JSON.stringify({ providers: [{ id: "has space", driver: "codex" }, { id: "b" }] }), "/c.json", "/"),
    );
    expect(error.message).toContain("providers[0].id: must be 1-64 characters");
    expect(error.message).toContain("providers[1].driver: must be a string");
  });

  it("non-positive durations are rejected with the field path", () => {
    const error = configError(() => parseConfigText(JSON.stringify({ credentials: { idleTtlMs: 0 } }), "/c.json", "/"));
    expect(error.message).toContain("credentials.idleTtlMs: must be greater than 0");
  });

  it.each([
    ["waits.maxWaitMs", { waits: { maxWaitMs: 3_600_001 } }, "must be at most 3600000 ms"],
    ["waits.maxWaitMs", { waits: { maxWaitMs: 1e308 } }, "must be at most 3600000 ms"],
    ["sessions.idleMs", { sessions: { idleMs: 7 * 24 * 3_600_000 + 1 } }, "must be at most"],
    ["credentials.maxLifetimeMs", { credentials: { maxLifetimeMs: 31 * 24 * 3_600_000 } }, "must be at most"],
    ["limits.maxDelegationDepth", { limits: { maxDelegationDepth: 65 } }, "must be at most 64"],
    ["limits.maxActiveChildrenPerThread", { limits: { maxActiveChildrenPerThread: 1_001 } }, "must be at most 1000"],
    ["limits.maxSpawnsPerRootThread", { limits: { maxSpawnsPerRootThread: 100_001 } }, "must be at most 100000"],
    ["workflows.maxConcurrentAgents", { workflows: { maxConcurrentAgents: 1_001 } }, "must be at most 1000"],
  ])("%s above its upper bound is rejected", (field, config, message) => {
    const error = configError(() => parseConfigText(JSON.stringify(config), "/c.json", "/"));
    expect(error.message).toContain(`${field}: ${message}`);
  });

  it("workflows.maxConcurrentAgents defaults to 8 (or a narrower limits.maxActiveChildrenPerThread) and may not pass that limit", () => {
    expect(parseConfigText("{}", "/c.json", "/").workflows).toEqual({ maxConcurrentAgents: 8 });
    expect(parseConfigText(JSON.stringify({ workflows: { maxConcurrentAgents: 16 } }), "/c.json", "/").workflows).toEqual({ maxConcurrentAgents: 16 });
    const above = configError(() => parseConfigText(JSON.stringify({ workflows: { maxConcurrentAgents: 17 } }), "/c.json", "/"));
    expect(above.message).toContain("workflows.maxConcurrentAgents: must be at most limits.maxActiveChildrenPerThread (16)");
    const narrowed = configError(() => parseConfigText(JSON.stringify({ limits: { maxActiveChildrenPerThread: 4 }, workflows: { maxConcurrentAgents: 5 } }), "/c.json", "/"));
    expect(narrowed.message).toContain("workflows.maxConcurrentAgents: must be at most limits.maxActiveChildrenPerThread (4)");
    // Unset, it follows a narrower limit down.
    expect(parseConfigText(JSON.stringify({ limits: { maxActiveChildrenPerThread: 4 } }), "/c.json", "/").workflows.maxConcurrentAgents).toBe(4);
  });

  it("wire.compression is \"remote\" by default, may be true or false, and takes nothing else", () => {
    expect(parseConfigText("{}", "/c.json", "/").wire).toEqual({ compression: "remote" });
    expect(parseConfigText(JSON.stringify({ wire: { compression: false } }), "/c.json", "/").wire).toEqual({ compression: false });
    expect(parseConfigText(JSON.stringify({ wire: { compression: true } }), "/c.json", "/").wire).toEqual({ compression: true });
    const word = configError(() => parseConfigText(JSON.stringify({ wire: { compression: "off" } }), "/c.json", "/"));
    expect(word.code).toBe("invalid_config");
    expect(word.message).toContain('wire.compression: must be true, false or "remote"');
    const unknown = configError(() => parseConfigText(JSON.stringify({ wire: { gzip: false } }), "/c.json", "/"));
    expect(unknown.message).toMatch(/wire: Unrecognized key: "gzip"/);
    const notObject = configError(() => parseConfigText(JSON.stringify({ wire: false }), "/c.json", "/"));
    expect(notObject.message).toContain("wire:");
  });

  it("a top-level value that is not an object is reported at (root)", () => {
    const error = configError(() => parseConfigText("[]", "/c.json", "/"));
    expect(error.message).toMatch(/^invalid config \/c\.json: \(root\): /);
  });

  it("duplicate provider ids are errors", () => {
    const cwd = tempDir();
    writeConfig(cwd, { providers: [{ id: "a", driver: "codex" }, { id: "a", driver: "claude" }] });
    const error = configError(() => loadConfig(undefined, cwd, cwd));
    expect(error.code).toBe("invalid_config");
    expect(error.message).toContain('providers[1].id: duplicate provider id "a"');
  });

  it("autoResume is true or false, absent by default (work a usage limit stopped resumes)", () => {
    const providers = (autoResume: unknown) => JSON.stringify({ providers: [{ id: "a", driver: "claude", ...(autoResume === undefined ? {} : { autoResume }) }] });
    expect(parseConfigText(providers(false), "/c.json", "/").providers[0]).toMatchObject({ id: "a", autoResume: false });
    expect(parseConfigText(providers(undefined), "/c.json", "/").providers[0]).not.toHaveProperty("autoResume");
    expect(configError(() => parseConfigText(providers("yes"), "/c.json", "/")).message).toContain("providers[0].autoResume: must be true or false");
  });

  it("a failover list names other configured instances, each once", () => {
    const providers = (failover: string[]) => JSON.stringify({ providers: [{ id: "a", driver: "claude", failover }, { id: "b", driver: "codex" }] });
    expect(parseConfigText(providers(["b"]), "/c.json", "/").providers[0]).toMatchObject({ id: "a", failover: ["b"] });
    expect(parseConfigText(providers([]), "/c.json", "/").providers[0]).not.toHaveProperty("failover");
    expect(configError(() => parseConfigText(providers(["a"]), "/c.json", "/")).message).toContain("providers[0].failover[0]: an instance cannot fail over to itself");
    expect(configError(() => parseConfigText(providers(["c"]), "/c.json", "/")).message).toContain('providers[0].failover[0]: no provider instance named "c"; the instances are a, b');
    expect(configError(() => parseConfigText(providers(["b", "b"]), "/c.json", "/")).message).toContain('providers[0].failover[1]: "b" is listed twice');
  });

  it("duplicate project ids are errors", () => {
    const error = configError(() =>
      parseConfigText(JSON.stringify({ projects: [{ id: "p", root: "a" }, { id: "q", root: "b" }, { id: "p", root: "c" }] }), "/c.json", "/"),
    );
    expect(error.message).toContain('projects[2].id: duplicate project id "p"');
  });
});
