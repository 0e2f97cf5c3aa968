import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PROTOCOL_VERSION } from "@agentclientprotocol/sdk/unstable";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import type { StoredEvent } from "../src/contracts/envelopes.js";
import { type ModelServer, startModelServer } from "../src/modelServer/server.js";
import { AgentProcess } from "../src/providers/acp/agentProcess.js";
import { sessionConfig, sessionEnv } from "../src/providers/opencode/opencodeConfig.js";
import { opencodeOptions } from "../src/providers/opencode/options.js";
import { installedBinary } from "../src/providers/opencode/probe.js";
import { piOptions } from "../src/providers/pi/options.js";
import { modelsJson, piEnv } from "../src/providers/pi/piConfig.js";
import { installedCli } from "../src/providers/pi/probe.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { acpAgentInstance } from "../src/testkit/acpRealAgents.js";
import { claudeEnv, codexConfigToml } from "../src/testkit/agentConfig.js";
import { now, printTable, seconds } from "./stats.js";

/**
 * Agent start-up under Loom: seconds from a thread's launch (t3_thread_launch)
 * until the agent's first call to one of Loom's MCP tools is committed (the
 * scripted model asks for t3_thread_list at once), for each real agent
 * driver that runs offline (codex, claude, opencode, pi, and Gemini CLI,
 * Claude Code ACP and Codex ACP under the generic acp driver; cursor needs
 * Cursor's backend). Baseline, in the same run: the agent alone (`codex
 * exec`, `claude -p`, `opencode run`, `pi -p`, `gemini -p`; the two ACP-only
 * agents driven by a bare ACP client: initialize, session/new without MCP
 * servers, session/prompt) on the same prompt and model, from spawn until
 * the model server receives its first model request. Median of ROUNDS each;
 * the ratio is Loom's cost on top of the agent's own start-up.
 */
const ROUNDS = 3;
const PROMPT = "List the threads.";
const MODEL = "loom/scripted";

const AGENTS = ["codex", "claude", "opencode", "pi", "gemini", "claude-code-acp", "codex-acp"] as const;
type Agent = (typeof AGENTS)[number];
/** Agents that speak only ACP: no CLI of their own to run a prompt. */
const ACP_ONLY = ["claude-code-acp", "codex-acp"] as const;
type AcpOnly = (typeof ACP_ONLY)[number];
const isAcpOnly = (agent: Agent): agent is AcpOnly => (ACP_ONLY as readonly string[]).includes(agent);
/** LOOM_BENCH_AGENTS=a,b measures only those agents (all by default). */
function selectedAgents(): Agent[] {
  const only = process.env.LOOM_BENCH_AGENTS;
  if (only === undefined || only.trim() === "") return [...AGENTS];
  const names = only.split(",").map((name) => name.trim());
  const unknown = names.filter((name) => !(AGENTS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`LOOM_BENCH_AGENTS names unknown agents: ${unknown.join(", ")}; known: ${AGENTS.join(", ")}`);
  return names as Agent[];
}
const GEMINI_MODEL = "gemini-2.5-pro";
/** Codex does not know this model, so it offers Loom's tools as plain function tools the model server reads. */
const CODEX_MODEL = "loom-test-model";
const NODE_MODULES = fileURLToPath(new URL("../../node_modules/", import.meta.url));
const BIN = join(NODE_MODULES, ".bin");
/** The claude executable the Agent SDK bundles (the same one the claude driver runs). */
const CLAUDE = join(NODE_MODULES, "@anthropic-ai", "claude-agent-sdk-linux-x64", "claude");

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function instance(agent: "opencode" | "pi", model: ModelServer) {
  const options = { modelProvider: { id: "loom", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } };
  return { id: agent, driver: agent, enabled: true, displayName: null, models: [MODEL], options };
}

/** The config file's entry for `agent`; Gemini CLI (under the generic `acp` driver) keeps its settings in `home`. */
function configEntry(agent: Agent, model: ModelServer, home: string) {
  if (agent === "codex") {
    return { id: agent, driver: agent, models: [CODEX_MODEL], options: { modelProvider: { id: "loom", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } } };
  }
  if (agent === "claude") return { id: agent, driver: agent, options: { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } } };
  if (agent === "gemini" || isAcpOnly(agent)) {
    // The testkit finds node_modules/.bin from src/; compiled into dist-bench/ it must be told.
    const entry = acpAgentInstance(agent, model.url, home);
    return { ...entry, options: { ...entry.options, command: join(BIN, agent) } };
  }
  const { enabled: _enabled, displayName: _displayName, ...entry } = instance(agent, model);
  return entry;
}

/**
 * The CLI alone: spawn, wait for its first model request, kill. The prompt
 * carries a marker of its own and only a request carrying it counts: a Loom
 * thread of an earlier round may still be talking to the same model server.
 */
async function alone(agent: Agent, model: ModelServer, round: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), `loom-bench-${agent}-`));
  const marker = `[bench ${agent} alone ${round}]`;
  const prompt = `${PROMPT} ${marker}`;
  const seen = (): boolean => model.requests.some((request) => request.normalized?.messages.some((message) => message.text.includes(marker)) === true);
  if (isAcpOnly(agent)) return acpAlone(agent, model, dir, prompt, seen);
  let child: ChildProcess;
  const start = now();
  if (agent === "codex") {
    const home = join(dir, "codex-home");
    mkdirSync(home);
    writeFileSync(join(home, "config.toml"), codexConfigToml(model.url));
    const env = { ...process.env, CODEX_HOME: home, LOOM_MODEL_KEY: "dummy" };
    child = spawn(join(BIN, "codex"), ["exec", "--skip-git-repo-check", "-m", CODEX_MODEL, prompt], { cwd: dir, env, stdio: "ignore", detached: true });
  } else if (agent === "claude") {
    const env = claudeEnv(model.url, join(dir, "claude-config"));
    child = spawn(CLAUDE, ["-p", prompt, "--no-session-persistence"], { cwd: dir, env, stdio: "ignore", detached: true });
  } else if (agent === "opencode") {
    const options = opencodeOptions.parse(instance(agent, model));
    const configPath = join(dir, "opencode.json");
    writeFileSync(configPath, JSON.stringify(sessionConfig({ options, runtimeMode: "full-access", model: MODEL, mcp: null })));
    const env = sessionEnv({ options, baseEnv: process.env, home: join(dir, "home"), configPath, password: "bench", mcpToken: null });
    child = spawn(installedBinary() ?? "opencode", ["run", prompt], { cwd: dir, env, stdio: "ignore", detached: true });
  } else if (agent === "gemini") {
    const env = acpAgentInstance("gemini", model.url, join(dir, "home")).options?.env as Record<string, string>;
    child = spawn(join(BIN, "gemini"), ["-p", prompt, "--approval-mode", "yolo", "-m", GEMINI_MODEL], { cwd: dir, env: { ...process.env, ...env }, stdio: "ignore", detached: true });
  } else {
    const options = piOptions.parse(instance(agent, model));
    const agentDir = join(dir, "agent");
    mkdirSync(agentDir);
    writeFileSync(join(agentDir, "models.json"), JSON.stringify(modelsJson(options)));
    const env = piEnv({ options, baseEnv: process.env, agentDir, mcp: null, instructions: null, runtimeMode: "full-access", interactionMode: "default" });
    child = spawn(process.execPath, [installedCli() ?? "pi", "-p", "--no-session", "--offline", "--model", MODEL, prompt], { cwd: dir, env, stdio: "ignore", detached: true });
  }
  try {
    await until(seen, 120_000, `${agent}'s first model request`);
    return seconds(start);
  } finally {
    // The CLI's own process group: Gemini CLI and OpenCode leave helpers (a relaunched node, a snapshot git) behind otherwise.
    const running = child.exitCode === null && child.signalCode === null;
    const exited = running ? new Promise((resolve) => child.once("exit", resolve)) : Promise.resolve();
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // The group is gone already.
    }
    await exited;
    removeDir(dir);
  }
}

/** A killed agent's files may still be settling for a moment: retry. */
function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
}

/** An ACP-only agent under a bare ACP client: spawn, initialize, session/new without MCP servers, session/prompt; until its first model request. */
async function acpAlone(agent: AcpOnly, model: ModelServer, dir: string, prompt: string, seen: () => boolean): Promise<number> {
  const options = acpAgentInstance(agent, model.url, join(dir, "home")).options as { args?: string[]; env: Record<string, string> };
  const start = now();
  const process_ = new AgentProcess({
    command: join(BIN, agent),
    args: options.args ?? [],
    env: { ...process.env, ...options.env },
    cwd: dir,
    secrets: [],
    onUpdate: () => undefined,
    onPermission: () => Promise.resolve({ outcome: { outcome: "cancelled" } }),
    extensionMethods: [],
    onExtension: () => Promise.reject(new Error("no extensions")),
    onExit: () => undefined,
  });
  try {
    await process_.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } }, 120_000);
    const created = await process_.request<{ sessionId: string }>("session/new", { cwd: dir, mcpServers: [] }, 120_000);
    void process_.request("session/prompt", { sessionId: created.sessionId, prompt: [{ type: "text", text: prompt }] }, null).catch(() => undefined);
    await until(seen, 120_000, `${agent}'s first model request`);
    return seconds(start);
  } finally {
    await process_.close(0);
    removeDir(dir);
  }
}

export async function runAgentStartupBench(): Promise<void> {
  const model = await startModelServer({
    rules: [
      { when: { toolAvailable: "t3_thread_list", lastIsToolResult: false }, reply: { toolCall: { tool: "t3_thread_list", arguments: {} } } },
      { reply: { text: "done" } },
    ],
  });
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-startup-"));
  const configPath = join(stateDir, "config.json");
  writeFileSync(configPath, JSON.stringify({ providers: AGENTS.map((agent) => configEntry(agent, model, join(stateDir, `${agent}-home`))) }));
  const server = await startLoomServer({ stateDir, cwd: stateDir, configPath });
  const firstToolCall = new Map<string, bigint>();
  const followed = server.orchestrator.follow(server.orchestrator.state.lastSequence, (event: StoredEvent) => {
    const at = now();
    const item = (event.data as { item?: { type?: string; threadId?: string } }).item;
    if (item?.type === "dynamic_tool" && item.threadId !== undefined && !firstToolCall.has(item.threadId)) firstToolCall.set(item.threadId, at);
  });
  const client = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim(), "loom-bench");
  const rows: string[][] = [["agent", "CLI alone: to first model request (s, median of 3)", "under Loom: launch to first MCP call (s, median of 3)", "ratio"]];
  try {
    for (const agent of selectedAgents()) {
      const baseline: number[] = [];
      const loom: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        baseline.push(await alone(agent, model, round));
        const start = now();
        const launched = await client.ok<{ threadId: string }>("t3_thread_launch", { message: PROMPT, title: `bench ${agent} ${round}`, target: { providerInstanceId: agent } });
        await until(() => firstToolCall.has(launched.threadId), 120_000, `${agent}'s first MCP call`);
        loom.push(Number(firstToolCall.get(launched.threadId)! - start) / 1e9);
      }
      rows.push([agent, median(baseline).toFixed(2), median(loom).toFixed(2), (median(loom) / median(baseline)).toFixed(2)]);
      console.log(`${agent}: CLI alone ${median(baseline).toFixed(2)} s, under Loom ${median(loom).toFixed(2)} s`);
    }
  } finally {
    followed.close();
    await client.close();
    await server.close();
    await model.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
  printTable("Agent start-up: under Loom vs the agent's CLI alone (same prompt, same scripted model)", rows);
}
