import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import type { StoredEvent } from "../src/contracts/envelopes.js";
import type { DelegatedTask } from "../src/contracts/entities/delegatedTasks.js";
import type { Run } from "../src/contracts/entities/runs.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { now, printTable } from "./stats.js";

/**
 * Delegation fan-out: a parent on a fast scripted instance delegates N
 * children (mode async) to `slow`, whose sessions take STARTUP_MS to open,
 * like an agent CLI starting. Timed from the parent's launch call until
 * every child run is `running` and until every task has its result, read
 * from the committed events. Session start-up must not be serialized: the
 * outbox worker runs different threads' effects in parallel, so N = 16
 * should stay within 2x of N = 1.
 */
export const STARTUP_MS = 300;
const CHILD_TASK = JSON.stringify({ script: [{ say: "done" }] });

export interface Round {
  /** Seconds from the launch call until the parent's run was running. */
  readonly parentRunning: number;
  /** Seconds from the launch call until the parent's N-th delegate_task was committed (its calls are sequential). */
  readonly lastDelegated: number;
  /** The longest a child run took from its task's commit to running: its session start-up. */
  readonly slowestStart: number;
  /** Seconds from the launch call until all N child runs were running. */
  readonly childrenRunning: number;
  /** Seconds from the launch call until all N tasks had a result. */
  readonly results: number;
}

/** Commit times (hrtime) of the first `running` of each run and the result of each task. */
export class Recorder {
  readonly runningAt = new Map<string, bigint>();
  readonly settledAt = new Map<string, bigint>();
  readonly createdAt = new Map<string, bigint>();
  readonly tasks = new Map<string, DelegatedTask>();

  onEvents(events: readonly StoredEvent[]): void {
    const at = now();
    for (const event of events) {
      if (event.type === "run.updated") {
        const run = (event.data as { run: Run }).run;
        if (run.status === "running" && !this.runningAt.has(run.id)) this.runningAt.set(run.id, at);
      } else if (event.type === "subagent.updated") {
        const task = (event.data as { task: DelegatedTask | null }).task;
        if (task === null) continue;
        this.tasks.set(task.taskId, task);
        if (!this.createdAt.has(task.taskId)) this.createdAt.set(task.taskId, at);
        if (task.resultContextTransferId !== null && !this.settledAt.has(task.taskId)) this.settledAt.set(task.taskId, at);
      }
    }
  }
}

function parentScript(n: number, round: string): string {
  const steps = Array.from({ length: n }, (_, i) => ({
    call: "delegate_task",
    args: { task: CHILD_TASK, target: { providerInstanceId: "slow" }, mode: "async", clientRequestId: `${round}-${i}` },
  }));
  return JSON.stringify({ script: steps });
}

/** Poll `done` every 2 ms until it holds (a benchmark measures, it does not assert); throws after `timeoutMs`. */
export async function until(done: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`benchmark timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export async function fanOut(client: LoomMcpClient, recorder: Recorder, n: number, round: string): Promise<Round> {
  const start = now();
  const parent = await client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
    title: `fan-out ${round}`,
    message: parentScript(n, round),
    target: { providerInstanceId: "fast" },
  });
  const tasks = () => [...recorder.tasks.values()].filter((task) => task.parentThreadId === parent.threadId);
  await until(() => tasks().length === n && tasks().every((task) => recorder.settledAt.has(task.taskId)), `${n} results of ${round}`);
  const childRuns = tasks().map((task) => recorder.runningAt.get(task.childRunId!));
  if (childRuns.some((at) => at === undefined)) throw new Error(`a child run of ${round} never reported running`);
  const failed = tasks().filter((task) => recorder.tasks.get(task.taskId)!.status !== "completed");
  if (failed.length > 0) throw new Error(`${failed.length} task(s) of ${round} did not complete`);
  const since = (at: bigint) => Number(at - start) / 1e9;
  return {
    parentRunning: since(recorder.runningAt.get(parent.runId)!),
    lastDelegated: Math.max(...tasks().map((task) => since(recorder.createdAt.get(task.taskId)!))),
    slowestStart: Math.max(...tasks().map((task) => Number(recorder.runningAt.get(task.childRunId!)! - recorder.createdAt.get(task.taskId)!) / 1e9)),
    childrenRunning: Math.max(...childRuns.map((at) => since(at!))),
    results: Math.max(...tasks().map((task) => since(recorder.settledAt.get(task.taskId)!))),
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function runFanoutBench(options: { sizes: readonly number[]; rounds: number; checkpoints: boolean }): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-fanout-"));
  writeFileSync(
    join(stateDir, "config.json"),
    JSON.stringify({
      workspaces: { checkpoints: options.checkpoints },
      providers: [
        { id: "fast", driver: "scripted" },
        { id: "slow", driver: "scripted", options: { startupDelayMs: STARTUP_MS } },
      ],
    }),
  );
  const server = await startLoomServer({ stateDir, cwd: stateDir });
  const recorder = new Recorder();
  const recording = server.orchestrator.follow(server.orchestrator.state.lastSequence, (event) => recorder.onEvents([event]));
  const client = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim(), "loom-bench");
  try {
    await fanOut(client, recorder, 1, "warmup");
    const measured = new Map<number, Round[]>();
    for (let round = 0; round < options.rounds; round++) {
      for (const n of options.sizes) {
        const rounds = measured.get(n) ?? [];
        rounds.push(await fanOut(client, recorder, n, `n${n}-r${round}`));
        measured.set(n, rounds);
      }
    }
    const summary = options.sizes.map((n) => {
      const rounds = measured.get(n)!;
      return {
        n,
        parent: median(rounds.map((r) => r.parentRunning)),
        delegated: median(rounds.map((r) => r.lastDelegated)),
        start: median(rounds.map((r) => r.slowestStart)),
        running: median(rounds.map((r) => r.childrenRunning)),
        results: median(rounds.map((r) => r.results)),
      };
    });
    const base = summary[0]!;
    const ms = (seconds: number) => (seconds * 1000).toFixed(0);
    printTable(`delegation fan-out to a scripted instance with startupDelayMs ${STARTUP_MS}, checkpoints ${options.checkpoints ? "on" : "off"} (median of ${options.rounds}; ms from the parent's launch call)`, [
      ["children", "parent running", "last delegated", "slowest child start", "all children running", "ratio", "all results", "ratio"],
      ...summary.map((row) => [
        String(row.n),
        ms(row.parent),
        ms(row.delegated),
        ms(row.start),
        ms(row.running),
        (row.running / base.running).toFixed(2),
        ms(row.results),
        (row.results / base.results).toFixed(2),
      ]),
    ]);
    const largest = summary[summary.length - 1]!;
    if (largest.results / base.results > 2) {
      console.log(`warning: ${largest.n} children took ${(largest.results / base.results).toFixed(2)}x as long as ${base.n}; session start-up may be serialized`);
    }
  } finally {
    recording.close();
    await client.close();
    await server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
