import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SessionListResult } from "../src/app/sessions.js";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import { type ModelServer, startModelServer } from "../src/modelServer/server.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { claudeEnv } from "../src/testkit/agentConfig.js";
import { type Round, Recorder, fanOut, median } from "./fanoutBench.js";
import { readTreeCpu, treeCpuBetween } from "./processCpu.js";
import { printTable } from "./stats.js";

/**
 * Real agents as delegated children (docs/warm-pools.md): a scripted parent
 * delegates 1 and 4 trivial tasks to real codex and Claude children, each
 * child answering once from the scripted model server; seconds from the
 * parent's launch until every task has its result. Each agent runs without
 * and with a warm pool of 4. In the same run, the baseline the children are held
 * against: Claude Code's own Agent tool (`claude -p`, the model asking for N
 * parallel Agent calls, each subagent answering once), from the model
 * request answered with the Agent calls until the request carrying their
 * results: the subagents' whole life inside one Claude Code process.
 */

const NODE_MODULES = fileURLToPath(new URL("../../node_modules/", import.meta.url));
const CLAUDE = join(NODE_MODULES, "@anthropic-ai", "claude-agent-sdk-linux-x64", "claude");
const CODEX_MODEL = "loom-test-model";

type Agent = "codex" | "claude";

function childInstance(agent: Agent, model: ModelServer, pool: number): Record<string, unknown> {
  const options =
    agent === "codex"
      ? { modelProvider: { id: "loom", baseUrl: `${model.url}/v1`, envKey: "LOOM_MODEL_KEY" }, env: { LOOM_MODEL_KEY: "dummy" } }
      : { env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "dummy" } };
  // `slow` is the instance fanOut delegates to.
  return { id: "slow", driver: agent, ...(agent === "codex" ? { models: [CODEX_MODEL] } : {}), options, pool: { size: pool } };
}

async function pollWarm(url: string, token: string, wanted: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const res = await fetch(`${url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } });
    if (((await res.json()) as SessionListResult).warm.length >= wanted) return;
    if (Date.now() > deadline) throw new Error("the warm pool did not refill");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One round of N children, and the CPU seconds it used: Loom's process (with the model server) and the agent processes. */
interface MeasuredRound extends Round {
  readonly loomCpu: number;
  /** The agent processes running when the round began (the warm ones it takes), and those started during it (refills, cold sessions). */
  readonly agentsCpu: { readonly existing: number; readonly started: number } | null;
}

/** N children of `agent` per round, on a server of their own; a full pool before every round when pooled. */
async function loomChildren(agent: Agent, pool: number, sizes: readonly number[], rounds: number): Promise<Map<number, MeasuredRound[]>> {
  const model = await startModelServer({ rules: [{ reply: { text: "done" } }] });
  const stateDir = mkdtempSync(join(tmpdir(), `loom-bench-${agent}-children-`));
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ providers: [{ id: "fast", driver: "scripted" }, childInstance(agent, model, pool)] }));
  const server = await startLoomServer({ stateDir, cwd: stateDir });
  const recorder = new Recorder();
  const recording = server.orchestrator.follow(server.orchestrator.state.lastSequence, (event) => recorder.onEvents([event]));
  const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
  const client = await LoomMcpClient.connect(server.mcpUrl, token, "loom-bench");
  try {
    const ready = () => (pool > 0 ? pollWarm(server.url, token, pool) : Promise.resolve());
    // The first child primes the instance: a Claude pool warms like its most recent session.
    await fanOut(client, recorder, 1, `warmup-${agent}-${pool}`);
    const measured = new Map<number, MeasuredRound[]>();
    for (let round = 0; round < rounds; round++) {
      for (const n of sizes) {
        await ready();
        const list = measured.get(n) ?? [];
        const loomBefore = process.cpuUsage();
        const agentsBefore = readTreeCpu();
        const timed = await fanOut(client, recorder, n, `${agent}-${pool}-n${n}-r${round}`);
        const agentsAfter = readTreeCpu();
        const loom = process.cpuUsage(loomBefore);
        list.push({ ...timed, loomCpu: (loom.user + loom.system) / 1e6, agentsCpu: agentsBefore === null || agentsAfter === null ? null : treeCpuBetween(agentsBefore, agentsAfter) });
        measured.set(n, list);
      }
    }
    return measured;
  } finally {
    recording.close();
    await client.close();
    await server.close();
    await model.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** Seconds Claude Code's own Agent tool takes to run N subagents, each answering once. */
async function claudeAgentTool(n: number): Promise<number> {
  const marker = `SPAWN-${n}-${Math.random().toString(36).slice(2, 8)}`;
  const model = await startModelServer({
    rules: [
      { when: { requireTools: true, lastIsToolResult: true }, reply: { text: "all done" } },
      { when: { requireTools: true, anyMessageIncludes: "subagent task" }, reply: { text: "done" } },
      {
        when: { requireTools: true, toolAvailable: "Agent", anyMessageIncludes: marker },
        reply: { toolCalls: Array.from({ length: n }, (_, i) => ({ tool: "Agent", arguments: { description: `task ${i}`, prompt: `subagent task ${i}: answer done`, subagent_type: "general-purpose", run_in_background: false } })) },
        times: 1,
      },
    ],
  });
  const dir = mkdtempSync(join(tmpdir(), "loom-bench-claude-agents-"));
  let child: ChildProcess | null = null;
  try {
    child = spawn(CLAUDE, ["-p", marker, "--no-session-persistence", "--dangerously-skip-permissions"], { cwd: dir, env: claudeEnv(model.url, join(dir, "claude-config")), stdio: "ignore" });
    const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));
    const code = await Promise.race([exited, new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 180_000))]);
    if (code !== 0) throw new Error(`claude -p with ${n} subagents ended with ${String(code)}`);
    const conversation = model.requests.filter((request) => request.ruleIndex !== undefined);
    const spawned = conversation.find((request) => request.ruleIndex === 2);
    const results = conversation.find((request) => request.ruleIndex === 0);
    const subagents = conversation.filter((request) => request.ruleIndex === 1).length;
    if (spawned === undefined || results === undefined || subagents < n) throw new Error(`claude -p did not run ${n} subagents (${subagents} answered)`);
    return (Date.parse(results.time) - Date.parse(spawned.time)) / 1000;
  } finally {
    child?.kill("SIGKILL");
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runAgentPoolBench(options: { sizes: readonly number[]; rounds: number }): Promise<void> {
  const codexCold = await loomChildren("codex", 0, options.sizes, options.rounds);
  const codexWarm = await loomChildren("codex", 4, options.sizes, options.rounds);
  const claudeCold = await loomChildren("claude", 0, options.sizes, options.rounds);
  const claudeWarm = await loomChildren("claude", 4, options.sizes, options.rounds);
  const agentTool = new Map<number, number[]>();
  for (let round = 0; round < options.rounds; round++) {
    for (const n of options.sizes) agentTool.set(n, [...(agentTool.get(n) ?? []), await claudeAgentTool(n)]);
  }
  const results = (m: Map<number, MeasuredRound[]>, n: number) => median(m.get(n)!.map((r) => r.results));
  const first = options.sizes[0]!;
  const s = (x: number) => x.toFixed(2);
  printTable(`real agents as ${options.sizes.join(" and ")} delegated children, seconds until every result (median of ${options.rounds}); ratios against 1 child of the same kind and against Claude Code's Agent tool with as many subagents`, [
    ["children", "codex, no pool", "codex, pool 4", "claude, no pool", "claude, pool 4", "Claude Code Agent tool", "codex n/1 (no pool)", "codex n/1 (pool)", "codex pool / no pool", "claude / Agent tool", "claude pool / Agent tool"],
    ...options.sizes.map((n) => [
      String(n),
      s(results(codexCold, n)),
      s(results(codexWarm, n)),
      s(results(claudeCold, n)),
      s(results(claudeWarm, n)),
      s(median(agentTool.get(n)!)),
      s(results(codexCold, n) / results(codexCold, first)),
      s(results(codexWarm, n) / results(codexWarm, first)),
      s(results(codexWarm, n) / results(codexCold, n)),
      s(results(claudeCold, n) / median(agentTool.get(n)!)),
      s(results(claudeWarm, n) / median(agentTool.get(n)!)),
    ]),
  ]);
  // What the machine's CPUs allow: a round cannot end sooner than its CPU time spread over every CPU.
  const cpus = availableParallelism();
  const cpuRow = (label: string, m: Map<number, MeasuredRound[]>, n: number) => {
    const rows = m.get(n)!;
    const loom = median(rows.map((r) => r.loomCpu));
    const known = rows.every((r) => r.agentsCpu !== null);
    const existing = known ? median(rows.map((r) => r.agentsCpu!.existing)) : null;
    const started = known ? median(rows.map((r) => r.agentsCpu!.started)) : null;
    const unknown = "?";
    return [
      label,
      String(n),
      s(results(m, n)),
      s(loom),
      existing === null ? unknown : s(existing),
      started === null ? unknown : s(started),
      existing === null ? unknown : s((loom + existing) / cpus),
    ];
  };
  printTable(`CPU seconds of those rounds (median), and the least wall time the children's own work allows on ${cpus} CPUs`, [
    ["children of", "n", "all results s", "Loom's process CPU s", "warm agents taken, CPU s", "agents started in the round (refills), CPU s", `least wall s on ${cpus} CPUs (Loom + warm agents taken)`],
    ...options.sizes.flatMap((n) => [cpuRow("codex, pool 4", codexWarm, n), cpuRow("claude, pool 4", claudeWarm, n)]),
  ]);
}
