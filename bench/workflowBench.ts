import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import type { StoredEvent } from "../src/contracts/envelopes.js";
import type { Workflow } from "../src/contracts/entities/workflows.js";
import type { DelegatedTask } from "../src/contracts/entities/delegatedTasks.js";
import { type LoomServer, startLoomServer } from "../src/server/loomServer.js";
import { median } from "./fanoutBench.js";
import { now, printTable, seconds } from "./stats.js";

/**
 * Workflow scripts (docs/benchmarks.md, "Workflows"), each figure a ratio
 * against a baseline measured in the same run:
 *
 * - best-of-4 plus a judge as a workflow (`bestOfN`) against the same pattern
 *   hand-rolled by a scripted parent: four async delegate_task calls,
 *   t3_background_wait, then a judge delegate_task in wait mode; time from the
 *   parent's launch call to the judged result (goal ≤ 1.2×);
 * - a parallel() of 16 agent() calls against one (goal ≤ 2×), and of 8, on a
 *   server with `workflows.maxConcurrentAgents` 16; and the 16 calls on a
 *   server with the default of 8, where they run as two waves of 8;
 * - a restart with a 200-call journal against one with a 1-call journal: the
 *   time from opening the server until the re-run script has answered every
 *   finished call from the journal and re-issued the call the restart cut
 *   short (goal ≤ 1 s), with the journal bytes each step wrote.
 *
 * Children run on `slow` (startupDelayMs 300, like an agent CLI starting)
 * for the first two, on `fast` for the journal.
 */
const STARTUP_MS = 300;
const child = (...steps: readonly Record<string, unknown>[]) => JSON.stringify({ script: steps });
const VERDICT = { winner: 2, scores: [5, 6, 9, 4], rationale: "the third attempt is best" };

interface Bench {
  readonly server: LoomServer;
  readonly client: LoomMcpClient;
  readonly workflows: Map<string, { workflow: Workflow; at: bigint }>;
  readonly tasks: Map<string, { task: DelegatedTask; at: bigint }>;
  /** Bytes of the workflow journal's events (workflow.* and the parent's workflow item) per workflow id. */
  readonly journalBytes: Map<string, number>;
  close(): Promise<void>;
}

async function boot(stateDir: string): Promise<Bench> {
  const server = await startLoomServer({ stateDir, cwd: stateDir });
  const workflows = new Map<string, { workflow: Workflow; at: bigint }>();
  const tasks = new Map<string, { task: DelegatedTask; at: bigint }>();
  const journalBytes = new Map<string, number>();
  const itemOwners = new Map<string, string>();
  const followed = server.orchestrator.follow(server.orchestrator.state.lastSequence, (event: StoredEvent) => {
    const at = now();
    if (event.type === "workflow.updated" || event.type === "workflow.step.updated") {
      const data = event.data as { workflow?: Workflow; workflowId?: string };
      const id = data.workflow?.workflowId ?? data.workflowId!;
      if (data.workflow !== undefined) {
        workflows.set(id, { workflow: data.workflow, at });
        itemOwners.set(data.workflow.itemId, id);
      }
      journalBytes.set(id, (journalBytes.get(id) ?? 0) + JSON.stringify(event.data).length);
    } else if (event.type === "turn-item.updated") {
      const owner = itemOwners.get((event.data as { item: { id: string } }).item.id);
      if (owner !== undefined) journalBytes.set(owner, (journalBytes.get(owner) ?? 0) + JSON.stringify(event.data).length);
    } else if (event.type === "subagent.updated") {
      const task = (event.data as { task: DelegatedTask | null }).task;
      if (task !== null) tasks.set(task.taskId, { task, at });
    }
  });
  const client = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim(), "loom-bench");
  return {
    server,
    client,
    workflows,
    tasks,
    journalBytes,
    close: async () => {
      followed.close();
      await client.close();
      await server.close();
    },
  };
}

async function until<T>(probe: () => T | undefined, what: string, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`workflow benchmark timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function launch(b: Bench, title: string, steps: readonly Record<string, unknown>[]) {
  return b.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title, message: JSON.stringify({ script: steps }), target: { providerInstanceId: "fast" } });
}

/** Seconds from the launch call until the parent's workflow ended; it must have completed. */
async function timedWorkflow(b: Bench, title: string, script: string, args: unknown = null): Promise<number> {
  const start = now();
  const parent = await launch(b, title, [{ call: "t3_workflow_start", args: { script, args, mode: "async" }, as: "w" }, { say: "started" }]);
  const ended = await until(() => [...b.workflows.values()].find((entry) => entry.workflow.parentThreadId === parent.threadId && entry.workflow.status !== "running"), `workflow ${title}`);
  if (ended.workflow.status !== "completed") throw new Error(`workflow ${title} ended ${ended.workflow.status}: ${ended.workflow.error?.message ?? ""}`);
  return Number(ended.at - start) / 1e9;
}

function bestOfFourWorkflow(): string {
  const judge = { prompt: child({ say: JSON.stringify(VERDICT) }), target: "slow" };
  return `return await bestOfN({ task: ${JSON.stringify(child({ say: "an attempt" }))}, n: 4, targets: ["slow"], judges: [${JSON.stringify(judge)}] });`;
}

/** The same pattern by hand: four async delegations, a background wait, a judge told the attempts. */
async function timedHandRolled(b: Bench, round: string): Promise<number> {
  const attempt = (i: number) => ({ call: "delegate_task", args: { task: child({ say: "an attempt" }), target: { providerInstanceId: "slow" }, mode: "async", clientRequestId: `${round}-${i}` } });
  const judgeTask = `${child({ say: JSON.stringify(VERDICT) })}\n\nAttempts:\n{{w.tasks}}`;
  const start = now();
  const parent = await launch(b, `hand-rolled ${round}`, [
    ...[0, 1, 2, 3].map(attempt),
    { call: "t3_background_wait", args: { timeoutMs: 120_000 }, as: "w" },
    { call: "delegate_task", args: { task: judgeTask, target: { providerInstanceId: "slow" }, mode: "wait", timeoutMs: 120_000, clientRequestId: `${round}-judge` } },
    { say: "judged" },
  ]);
  const judged = await until(() => {
    const mine = [...b.tasks.values()].filter((entry) => entry.task.parentThreadId === parent.threadId);
    const judge = mine.find((entry) => entry.task.task.startsWith(child({ say: JSON.stringify(VERDICT) })));
    return mine.length === 5 && judge !== undefined && judge.task.resultContextTransferId !== null ? judge : undefined;
  }, `the hand-rolled judge of ${round}`);
  if (judged.task.status !== "completed") throw new Error(`the hand-rolled judge of ${round} ended ${judged.task.status}`);
  return Number(judged.at - start) / 1e9;
}

function parallelWorkflow(n: number): string {
  return `return await parallel(Array.from({ length: ${n} }, (_, i) => () => agent(${JSON.stringify(child({ say: "done" }))}, { label: "agent " + i, target: { providerInstanceId: "slow" } })));`;
}

/** A script of `calls` finished agent() calls (in parallel), then one whose child is still working. */
function journalWorkflow(calls: number): string {
  return `
const done = await parallel(Array.from({ length: ${calls} }, (_, i) => () => agent(${JSON.stringify(child({ say: "done" }))}, { label: "call " + i })));
const last = await agent(${JSON.stringify(child({ sleep: 600_000 }, { say: "late" }))}, { label: "blocker" });
return [done.length, last];`;
}

interface JournalRound {
  readonly build: number;
  readonly bytesPerStep: number;
  readonly replay: number;
}

/** Build a journal of `calls` finished steps, restart on the same state dir, time until the blocker is re-issued. */
async function journalRound(calls: number): Promise<JournalRound> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-workflow-journal-"));
  writeConfig(stateDir);
  try {
    let b = await boot(stateDir);
    const start = now();
    const parent = await launch(b, `journal ${calls}`, [{ call: "t3_workflow_start", args: { script: journalWorkflow(calls) }, as: "w" }, { say: "started" }]);
    const blocked = await until(() => {
      const workflow = [...b.server.orchestrator.state.workflows.values()].find((candidate) => candidate.parentThreadId === parent.threadId);
      const blocker = workflow?.steps.find((step) => step.label === "blocker");
      const task = blocker?.taskId == null ? undefined : b.server.orchestrator.state.tasks.get(blocker.taskId);
      const run = task?.childRunId == null ? undefined : b.server.orchestrator.state.runs.get(task.childRunId);
      return run?.status === "running" ? workflow : undefined;
    }, `the ${calls}-call journal`);
    const build = seconds(start);
    if (blocked.steps.filter((step) => step.status === "completed").length !== calls) throw new Error(`the ${calls}-call journal did not finish its calls`);
    const bytesPerStep = (b.journalBytes.get(blocked.workflowId) ?? 0) / (calls + 1);
    await b.close();
    const reopened = now();
    b = await boot(stateDir);
    await until(() => {
      const blocker = b.server.orchestrator.state.workflows.get(blocked.workflowId)?.steps.find((step) => step.label === "blocker");
      return (blocker?.attempt ?? 1) >= 2 ? blocker : undefined;
    }, `the replay of the ${calls}-call journal`);
    const replay = seconds(reopened);
    await b.client.ok("t3_workflow_stop", { workflowId: blocked.workflowId });
    await b.close();
    return { build, bytesPerStep, replay };
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

function writeConfig(stateDir: string, maxConcurrentAgents?: number): void {
  writeFileSync(
    join(stateDir, "config.json"),
    JSON.stringify({
      ...(maxConcurrentAgents === undefined ? {} : { workflows: { maxConcurrentAgents } }),
      providers: [
        { id: "fast", driver: "scripted" },
        { id: "slow", driver: "scripted", options: { startupDelayMs: STARTUP_MS } },
      ],
      workspaces: { checkpoints: false },
      // The 200-call journal is 201 tasks under one root thread (the default ceiling is 64).
      limits: { maxSpawnsPerRootThread: 1_000 },
    }),
  );
}

export async function runWorkflowBench(options: { rounds: number; journalCalls: number }): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-workflow-"));
  writeConfig(stateDir, 16);
  const b = await boot(stateDir);
  const defaultDir = mkdtempSync(join(tmpdir(), "loom-bench-workflow-default-"));
  writeConfig(defaultDir);
  const d = await boot(defaultDir);
  const ms = (value: number) => (value * 1000).toFixed(0);
  try {
    await timedWorkflow(b, "warmup", parallelWorkflow(1));
    await timedWorkflow(d, "warmup", parallelWorkflow(1));
    const handRolled: number[] = [];
    const sixteenDefault: number[] = [];
    const workflow: number[] = [];
    const one: number[] = [];
    const eight: number[] = [];
    const sixteen: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      handRolled.push(await timedHandRolled(b, `r${round}`));
      workflow.push(await timedWorkflow(b, `best-of-4 r${round}`, bestOfFourWorkflow()));
      one.push(await timedWorkflow(b, `parallel 1 r${round}`, parallelWorkflow(1)));
      eight.push(await timedWorkflow(b, `parallel 8 r${round}`, parallelWorkflow(8)));
      sixteen.push(await timedWorkflow(b, `parallel 16 r${round}`, parallelWorkflow(16)));
      sixteenDefault.push(await timedWorkflow(d, `parallel 16, default limit r${round}`, parallelWorkflow(16)));
    }
    const base = median(handRolled);
    const single = median(one);
    printTable(`workflows: time to result with children on a scripted instance with startupDelayMs ${STARTUP_MS} (median of ${options.rounds}; ms from the parent's launch call)`, [
      ["pattern", "ms", "ratio", "goal"],
      ["best-of-4 + judge, hand-rolled delegate_task parent", ms(base), "1.00", ""],
      ["best-of-4 + judge, bestOfN workflow", ms(median(workflow)), (median(workflow) / base).toFixed(2), "≤ 1.2"],
      ["parallel() of 1 agent()", ms(single), "1.00", ""],
      ["parallel() of 8 agent()", ms(median(eight)), (median(eight) / single).toFixed(2), ""],
      ["parallel() of 16 agent(), maxConcurrentAgents 16", ms(median(sixteen)), (median(sixteen) / single).toFixed(2), "≤ 2"],
      ["parallel() of 16 agent(), the default maxConcurrentAgents (8): two waves", ms(median(sixteenDefault)), (median(sixteenDefault) / single).toFixed(2), ""],
    ]);
  } finally {
    await b.close();
    await d.close();
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(defaultDir, { recursive: true, force: true });
  }
  const small = await journalRound(1);
  const large = await journalRound(options.journalCalls);
  printTable("workflow journal: build, then restart and replay (ms; replay from opening the server until the cut-short call is re-issued)", [
    ["finished calls", "build", "journal bytes per step", "replay after restart", "ratio", "goal"],
    ["1", ms(small.build), small.bytesPerStep.toFixed(0), ms(small.replay), "1.00", ""],
    [String(options.journalCalls), ms(large.build), large.bytesPerStep.toFixed(0), ms(large.replay), (large.replay / small.replay).toFixed(2), "≤ 1000 ms"],
  ]);
}
