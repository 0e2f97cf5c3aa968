import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_PATH, type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";

/**
 * `loom mcp-config <agent>` output fed to each agent's own config loader,
 * offline: codex, gemini and opencode list the t3-code server (gemini and
 * opencode also connect to the running Loom with the token from the
 * environment variable); claude parses the project .mcp.json.
 */
const BIN = fileURLToPath(new URL("../../node_modules/.bin/", import.meta.url));
const CLAUDE = fileURLToPath(new URL("../../node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude", import.meta.url));

interface Ran {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(file, [...args], { cwd: options.cwd, env: options.env ?? process.env, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr });
    });
  });
}

let stateDir: string;
let work: string;
let serve: ServeProcess;
let token: string;

function baseEnv(): NodeJS.ProcessEnv {
  const { LOOM_STATE_DIR: _a, LOOM_OWNER_TOKEN: _b, ...rest } = process.env;
  return rest;
}

function mcpConfig(...args: string[]): Promise<Ran> {
  return run(process.execPath, [CLI_PATH, "mcp-config", ...args, "--state-dir", stateDir], { env: baseEnv() });
}

/** A fresh directory per agent, so no loader sees another's files. */
function dir(name: string): string {
  const path = join(work, name);
  mkdirSync(path, { recursive: true });
  return path;
}

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "loom-mcp-config-"));
  work = mkdtempSync(join(tmpdir(), "loom-mcp-config-agents-"));
  serve = await spawnServe(["--state-dir", stateDir, "--port", "0"], baseEnv());
  token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
});

afterAll(async () => {
  serve.child.kill("SIGTERM");
  await waitForExit(serve.child);
  rmSync(stateDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

describe("loom mcp-config", () => {
  it("codex: config.toml that codex mcp list reads, the token by variable", async () => {
    const out = await mcpConfig("codex");
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).not.toContain(token);
    expect(out.stderr).toContain('export LOOM_OWNER_TOKEN="$(cat');
    const home = dir("codex");
    writeFileSync(join(home, "config.toml"), out.stdout);
    const listed = await run(join(BIN, "codex"), ["mcp", "list", "--json"], { env: { ...baseEnv(), CODEX_HOME: home } });
    expect(listed.status, listed.stderr).toBe(0);
    const servers = JSON.parse(listed.stdout) as { name: string; enabled: boolean; transport: { type: string; url: string; bearer_token_env_var: string } }[];
    expect(servers).toEqual([expect.objectContaining({ name: "t3-code", enabled: true, transport: expect.objectContaining({ type: "streamable_http", url: `${serve.url}/mcp`, bearer_token_env_var: "LOOM_OWNER_TOKEN" }) })]);
  });

  it("gemini: settings.json that gemini mcp list loads and connects with", async () => {
    const out = await mcpConfig("gemini", "--env", "MY_LOOM_TOKEN");
    expect(out.stdout).toContain("Bearer ${MY_LOOM_TOKEN}");
    const home = dir("gemini");
    mkdirSync(join(home, ".gemini"));
    writeFileSync(join(home, ".gemini", "settings.json"), out.stdout);
    const env = { ...baseEnv(), GEMINI_CLI_HOME: home, GEMINI_CLI_TRUST_WORKSPACE: "true", GEMINI_API_KEY: "offline", MY_LOOM_TOKEN: token };
    const listed = await run(join(BIN, "gemini"), ["mcp", "list"], { cwd: home, env });
    expect(`${listed.stdout}${listed.stderr}`).toContain(`t3-code: ${serve.url}/mcp (http) - Connected`);
    // With the variable unset the header is wrong and Loom refuses it.
    const { MY_LOOM_TOKEN: _unset, ...without } = env;
    const refused = await run(join(BIN, "gemini"), ["mcp", "list"], { cwd: home, env: without });
    expect(`${refused.stdout}${refused.stderr}`).not.toContain("Connected");
  });

  it("opencode: opencode.json that opencode mcp list loads and connects with", async () => {
    const out = await mcpConfig("opencode");
    expect(out.stdout).toContain("Bearer {env:LOOM_OWNER_TOKEN}");
    const home = dir("opencode");
    writeFileSync(join(home, "opencode.json"), out.stdout);
    const env = {
      ...baseEnv(),
      HOME: home,
      XDG_CONFIG_HOME: join(home, "xdg-config"),
      XDG_DATA_HOME: join(home, "xdg-data"),
      XDG_CACHE_HOME: join(home, "xdg-cache"),
      XDG_STATE_HOME: join(home, "xdg-state"),
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      LOOM_OWNER_TOKEN: token,
    };
    const listed = await run(join(BIN, "opencode"), ["mcp", "list"], { cwd: home, env });
    expect(stripVTControlCharacters(listed.stdout)).toMatch(new RegExp(`✓ t3-code\\s+connected\\s+[│|]?\\s*${serve.url.replace(/[.]/g, "\\.")}/mcp`));
  });

  it("claude: a project .mcp.json that claude mcp get parses as an http server", async () => {
    const out = await mcpConfig("claude");
    const project = dir("claude");
    writeFileSync(join(project, ".mcp.json"), out.stdout);
    const env = { ...baseEnv(), CLAUDE_CONFIG_DIR: join(project, ".config"), ANTHROPIC_API_KEY: "offline", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" };
    const got = await run(CLAUDE, ["mcp", "get", "t3-code"], { cwd: project, env });
    const text = `${got.stdout}${got.stderr}`;
    expect(text).toContain("Type: http");
    expect(text).toContain(`URL: ${serve.url}/mcp`);
    expect(text).toContain("Authorization: Bearer ${LOOM_OWNER_TOKEN}");
  });

  it("cursor and json print the same server; --inline-token writes the token; bad input exits 2", async () => {
    const cursor = JSON.parse((await mcpConfig("cursor")).stdout) as { mcpServers: Record<string, { url: string; headers: Record<string, string> }> };
    expect(cursor.mcpServers["t3-code"]).toEqual({ url: `${serve.url}/mcp`, headers: { Authorization: "Bearer ${env:LOOM_OWNER_TOKEN}" } });
    const generic = JSON.parse((await mcpConfig("json")).stdout) as Record<string, unknown>;
    expect(generic).toEqual({ name: "t3-code", transport: "streamable-http", url: `${serve.url}/mcp`, headers: { Authorization: "Bearer ${LOOM_OWNER_TOKEN}" }, tokenEnv: "LOOM_OWNER_TOKEN" });
    const inline = await mcpConfig("codex", "--inline-token");
    expect(inline.stdout).toContain(`http_headers = { Authorization = "Bearer ${token}" }`);
    expect(inline.stderr).toContain("keep it private");
    for (const args of [["vim"], [], ["codex", "--env", "1BAD"], ["codex", "--inline-token", "--env", "X"]]) {
      const bad = await mcpConfig(...args);
      expect({ args, status: bad.status, stdout: bad.stdout }).toEqual({ args, status: 2, stdout: "" });
    }
    const empty = mkdtempSync(join(tmpdir(), "loom-mcp-config-empty-"));
    const none = await run(process.execPath, [CLI_PATH, "mcp-config", "codex", "--state-dir", empty], { env: baseEnv() });
    expect(none.status).toBe(3);
    const given = await run(process.execPath, [CLI_PATH, "mcp-config", "json", "--state-dir", empty, "--url", "http://127.0.0.1:9/mcp"], { env: baseEnv() });
    expect(JSON.parse(given.stdout)).toMatchObject({ url: "http://127.0.0.1:9/mcp" });
    rmSync(empty, { recursive: true, force: true });
  });
});
