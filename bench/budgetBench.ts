import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import type { LaunchEstimate } from "../src/contracts/tools/launchEstimate.js";
import type { OrchestrationState } from "../src/core/state.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { Recorder, median, until } from "./fanoutBench.js";
import { now, printTable } from "./stats.js";

/**
 * Budgets (docs/budgets.md), two figures against baselines of the same run:
 *
 * - The estimate's error: workflows of 2 to 5 parallel agent() calls and a
 *   judge after them, on a scripted instance whose children sleep 100 to
 *   300 ms and say 200 to 600 characters (seeded draws). After a few
 *   workflows of history, each measured workflow is first dry-run
 *   (t3_workflow_start dryRun) and then run for real; the error is
 *   |estimate - actual| / actual, for tokens and for wall-clock time, its
 *   median over the measured workflows (goal: at most 25%).
 * - Delegation throughput with budgets on against off: a root delegates 16
 *   children at once, with a budget over the tree that never runs out
 *   (every delegation and turn is checked and reserved against it) or with
 *   none; alternating rounds, the median time to every result; the ratio is
 *   off / on (goal: at least 0.9).
 */

/** A seeded draw (mulberry32): the same workflows every run. */
function draws(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const between = (draw: () => number, low: number, high: number) => Math.round(low + draw() * (high - low));

function childPrompt(draw: () => number): string {
  return JSON.stringify({ script: [{ sleep: between(draw, 100, 300) }, { say: "w".repeat(between(draw, 200, 600)) }] });
}

/** A workflow script: `width` drafts in parallel on `kids`, then a judge. */
function workflowScript(draw: () => number): string {
  const width = between(draw, 2, 5);
  const drafts = Array.from({ length: width }, () => childPrompt(draw));
  return `const drafts = await parallel(${JSON.stringify(drafts)}.map((prompt) => () => agent(prompt, { target: { providerInstanceId: "kids" } })));
return await agent(${JSON.stringify(childPrompt(draw))}, { target: { providerInstanceId: "kids" }, label: "judge" });`;
}

/** The structuredContent of each `tool` call a thread's agent made, in order. */
function toolAnswers<T>(state: OrchestrationState, threadId: string, tool: string): T[] {
  return (state.turnItems.get(threadId) ?? []).flatMap((item) =>
    item !== undefined && item.type === "dynamic_tool" && item.toolName === tool ? [(item.result as { structuredContent: T }).structuredContent] : [],
  );
}

/** Tokens every agent() task of the workflow spent, and how long the workflow ran. */
function actualOf(state: OrchestrationState, workflowId: string): { tokens: number; wallClockMs: number } {
  const workflow = state.workflows.get(workflowId)!;
  let tokens = 0;
  for (const task of state.tasks.values()) {
    if (task.workflowStep?.workflowId !== workflowId) continue;
    for (const runId of state.threadRuns.get(task.childThreadId) ?? []) {
      for (const attemptId of state.runAttempts.get(runId) ?? []) {
        const usage = state.attempts.get(attemptId)?.usage;
        if (usage !== null && usage !== undefined) tokens += usage.inputTokens + usage.outputTokens;
      }
    }
  }
  return { tokens, wallClockMs: Date.parse(workflow.endedAt!) - Date.parse(workflow.createdAt) };
}

async function serve(): Promise<{ server: Awaited<ReturnType<typeof startLoomServer>>; client: LoomMcpClient; stateDir: string }> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-budget-"));
  writeFileSync(
    join(stateDir, "config.json"),
    JSON.stringify({
      workspaces: { checkpoints: false },
      providers: [
        { id: "parent", driver: "scripted" },
        { id: "kids", driver: "scripted" },
      ],
    }),
  );
  const server = await startLoomServer({ stateDir, cwd: stateDir });
  const client = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim(), "loom-bench");
  return { server, client, stateDir };
}

interface Measured {
  readonly estimate: LaunchEstimate;
  readonly actual: { tokens: number; wallClockMs: number };
}

async function runWorkflow(client: LoomMcpClient, state: OrchestrationState, script: string, dryRunFirst: boolean): Promise<Measured | null> {
  const steps = [
    ...(dryRunFirst ? [{ call: "t3_workflow_start", args: { script, dryRun: true } }] : []),
    { call: "t3_workflow_start", args: { script, mode: "wait", timeoutMs: 120_000 } },
    { say: "done" },
  ];
  const parent = await client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "estimate", message: JSON.stringify({ script: steps }), target: { providerInstanceId: "parent" } });
  await until(() => state.runs.get(parent.runId)?.endedAt != null, "the parent's turn", 120_000);
  const workflow = [...state.workflows.values()].find((candidate) => candidate.parentThreadId === parent.threadId);
  if (workflow?.status !== "completed") throw new Error(`a benchmark workflow ended ${workflow?.status ?? "unstarted"}`);
  if (!dryRunFirst) return null;
  const [estimate] = toolAnswers<LaunchEstimate>(state, parent.threadId, "t3_workflow_start");
  return { estimate: estimate!, actual: actualOf(state, workflow.workflowId) };
}

async function estimateError(options: { history: number; measured: number }): Promise<void> {
  const { server, client, stateDir } = await serve();
  const state = server.orchestrator.state;
  const draw = draws(33);
  try {
    for (let index = 0; index < options.history; index++) await runWorkflow(client, state, workflowScript(draw), false);
    const rows: Measured[] = [];
    for (let index = 0; index < options.measured; index++) rows.push((await runWorkflow(client, state, workflowScript(draw), true))!);
    const error = (estimate: number | null, actual: number) => (estimate === null ? Number.NaN : Math.abs(estimate - actual) / actual);
    const tokenErrors = rows.map((row) => error(row.estimate.total.tokens, row.actual.tokens));
    const wallErrors = rows.map((row) => error(row.estimate.total.wallClockMs, row.actual.wallClockMs));
    const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
    printTable(`launch estimate against the actual run: ${options.measured} workflows of 2-5 parallel agent() calls and a judge, after ${options.history} of history`, [
      ["figure", "median estimate", "median actual", "median |error| / actual", "worst"],
      ["tokens", String(median(rows.map((row) => row.estimate.total.tokens ?? Number.NaN))), String(median(rows.map((row) => row.actual.tokens))), pct(median(tokenErrors)), pct(Math.max(...tokenErrors))],
      [
        "wall-clock ms",
        String(median(rows.map((row) => row.estimate.total.wallClockMs ?? Number.NaN))),
        String(median(rows.map((row) => row.actual.wallClockMs))),
        pct(median(wallErrors)),
        pct(Math.max(...wallErrors)),
      ],
    ]);
    console.log(`sample sizes of the last estimate: ${rows.at(-1)!.estimate.groups.map((group) => `${group.providerInstanceId} ${group.sampleSize}`).join(", ")}`);
  } finally {
    await client.close();
    await server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function throughput(options: { children: number; rounds: number }): Promise<void> {
  const { server, client, stateDir } = await serve();
  const recorder = new Recorder();
  const recording = server.orchestrator.follow(server.orchestrator.state.lastSequence, (event) => recorder.onEvents([event]));
  const child = JSON.stringify({ script: [{ say: "done" }] });
  const round = async (name: string, budget: boolean): Promise<number> => {
    const steps = Array.from({ length: options.children }, (_, i) => ({ call: "delegate_task", args: { task: child, target: { providerInstanceId: "kids" }, clientRequestId: `${name}-${i}` } }));
    const start = now();
    const parent = await client.ok<{ threadId: string }>("t3_thread_launch", {
      title: name,
      message: JSON.stringify({ script: [...steps, { call: "t3_background_wait", args: { timeoutMs: 60_000 } }] }),
      target: { providerInstanceId: "parent" },
      ...(budget ? { budget: { spawns: 10_000, turns: 100_000, tokens: 1_000_000_000 } } : {}),
    });
    const tasks = () => [...recorder.tasks.values()].filter((task) => task.parentThreadId === parent.threadId);
    await until(() => tasks().length === options.children && tasks().every((task) => recorder.settledAt.has(task.taskId)), `${options.children} results of ${name}`);
    return Math.max(...tasks().map((task) => Number(recorder.settledAt.get(task.taskId)! - start) / 1e9));
  };
  try {
    await round("warmup-off", false);
    await round("warmup-on", true);
    const off: number[] = [];
    const on: number[] = [];
    for (let index = 0; index < options.rounds; index++) {
      off.push(await round(`off-${index}`, false));
      on.push(await round(`on-${index}`, true));
    }
    const ms = (seconds: number) => (seconds * 1000).toFixed(0);
    printTable(`delegation throughput, ${options.children} children at once, budgets off (baseline) and on (median of ${options.rounds} alternating rounds; ms to every result)`, [
      ["budget over the tree", "all results", "tasks/s", "ratio (throughput)"],
      ["none (baseline)", ms(median(off)), (options.children / median(off)).toFixed(1), "1.00"],
      ["spawns, turns and tokens limits", ms(median(on)), (options.children / median(on)).toFixed(1), (median(off) / median(on)).toFixed(2)],
    ]);
  } finally {
    recording.close();
    await client.close();
    await server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

export async function runBudgetBench(options: { history: number; measured: number; children: number; rounds: number }): Promise<void> {
  await estimateError(options);
  await throughput(options);
}
