import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { type Run, isTerminalRunStatus } from "../src/contracts/entities/runs.js";
import type { Block, BlockTimes, Way } from "./mcpTaskClient.js";
import { percentile, printTable } from "./stats.js";

/**
 * delegate_task as an MCP task against the same delegation in mode wait
 * (docs/benchmarks.md, "MCP tasks"): one agent's SDK client
 * (bench/mcpTaskClient.ts, its own process), over real Streamable HTTP,
 * delegates a scripted child. A task round trip is the task-augmented call,
 * one tasks/get poll and tasks/result (which blocks until the task ends, so
 * the client does not sleep out a poll interval); the baseline is one
 * tools/call in mode wait. The calls alternate in blocks so drift lands on
 * both alike. Server CPU is this process's (the server, its workers and the
 * scripted child's turn) over each block until every child has finished,
 * per delegation; the client's is its own process's. Run with a child that answers at once (the overhead
 * alone) and with one whose turn takes `childSleepMs` (still far shorter
 * than an agent's).
 */
const BLOCK = 10;
const CLIENT = join(fileURLToPath(new URL(".", import.meta.url)), "mcpTaskClient.js");
const childOf = (sleepMs: number) => JSON.stringify({ script: [...(sleepMs === 0 ? [] : [{ sleep: sleepMs }]), { say: "child done" }] });

interface Measured {
  readonly ms: number[];
  serverCpuMicros: number;
  clientCpuMicros: number;
  readonly phases: { readonly create: number[]; readonly get: number[]; readonly result: number[] };
}

const measured = (): Measured => ({ ms: [], serverCpuMicros: 0, clientCpuMicros: 0, phases: { create: [], get: [], result: [] } });

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the benchmark client exited (${code ?? "signal"}) mid-block`));
    child.once("exit", onExit);
    child.once("message", (message) => {
      child.off("exit", onExit);
      resolve(message as T);
    });
  });
}

/** Every run but the parent's has ended: a block's children have finished their work (an async call's child outlives the call). */
async function settled(runs: () => Iterable<Run>, parentRunId: string): Promise<void> {
  const busy = () => [...runs()].some((run) => run.id !== parentRunId && !isTerminalRunStatus(run.status));
  for (let tries = 0; busy(); tries++) {
    if (tries > 60_000) throw new Error("the benchmark's children never finished");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function timeBlock(child: ChildProcess, into: Measured, way: Way, count: number, settle: () => Promise<void>): Promise<void> {
  const cpu = process.cpuUsage();
  const answer = nextMessage<BlockTimes>(child);
  child.send({ way, count } satisfies Block);
  const times = await answer;
  await settle();
  const used = process.cpuUsage(cpu);
  into.serverCpuMicros += used.user + used.system;
  into.clientCpuMicros += times.clientCpuMicros;
  into.ms.push(...times.ms);
  for (const phase of ["create", "get", "result"] as const) into.phases[phase].push(...times.phases[phase]);
}

export async function runMcpTaskBench(options: { delegations: number; warmup: number; childSleepMs: number }): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-mcp-task-"));
  // Every delegation is one more spawn of the parent's tree: lift the per-root cap past the run's count.
  const configPath = join(stateDir, "loom-config.json");
  writeFileSync(configPath, JSON.stringify({ limits: { maxSpawnsPerRootThread: 100_000 } }));
  const server = await startLoomServer({ stateDir, cwd: stateDir, configPath });
  const owner = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim(), "loom-bench");
  let child: ChildProcess | undefined;
  try {
    // A parent whose turn stays live, so its agent may delegate; its provider session's credential makes the calls.
    const parent = await owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "parent", message: JSON.stringify({ script: [{ sleep: 3_600_000 }] }), target: { providerInstanceId: "scripted" } });
    let session: { readonly id: string; readonly providerInstanceId: string } | undefined;
    for (let tries = 0; session === undefined && tries < 5_000; tries++) {
      session = [...server.orchestrator.state.providerSessions.values()].find((candidate) => candidate.threadId === parent.threadId && candidate.releasedAt === null);
      if (session === undefined) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    if (session === undefined) throw new Error("the benchmark parent's provider session never opened");
    const credential = await server.credentials.issue({ environmentId: server.environmentId, threadId: parent.threadId, providerInstanceId: session.providerInstanceId, providerSessionId: session.id });
    const client = fork(CLIENT, [server.mcpUrl, credential.token, childOf(options.childSleepMs)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    child = client;
    if ((await nextMessage<string>(client)) !== "ready") throw new Error("the benchmark client did not start");

    const settle = () => settled(() => server.orchestrator.state.runs.values(), parent.runId);
    const warm = measured();
    await timeBlock(client, warm, "wait", options.warmup, settle);
    await timeBlock(client, warm, "task", options.warmup, settle);
    const wait = measured();
    const task = measured();
    const async = measured();
    for (let done = 0; done < options.delegations; done += BLOCK) {
      const count = Math.min(BLOCK, options.delegations - done);
      await timeBlock(client, wait, "wait", count, settle);
      await timeBlock(client, task, "task", count, settle);
      await timeBlock(client, async, "async", count, settle);
    }
    const median = (samples: readonly number[]) => percentile([...samples].sort((a, b) => a - b), 50);
    const p50 = (m: Measured) => median(m.ms);
    const serverCpu = (m: Measured) => m.serverCpuMicros / m.ms.length / 1000;
    const clientCpu = (m: Measured) => m.clientCpuMicros / m.ms.length / 1000;
    printTable(`MCP tasks: delegate_task round trip, child turn ${options.childSleepMs} ms, ${options.delegations} delegations each`, [
      ["call", "p50 ms", "p99 ms", "ratio", "server CPU ms / delegation", "server CPU ratio", "client CPU ms / delegation"],
      ["delegate_task mode wait (baseline)", p50(wait).toFixed(2), percentile([...wait.ms].sort((a, b) => a - b), 99).toFixed(2), "1.00", serverCpu(wait).toFixed(2), "1.00", clientCpu(wait).toFixed(2)],
      [
        "as a task: create + tasks/get + tasks/result",
        p50(task).toFixed(2),
        percentile([...task.ms].sort((a, b) => a - b), 99).toFixed(2),
        (p50(task) / p50(wait)).toFixed(2),
        serverCpu(task).toFixed(2),
        (serverCpu(task) / serverCpu(wait)).toFixed(2),
        clientCpu(task).toFixed(2),
      ],
    ]);
    console.log(
      `task phases, p50 ms: create ${median(task.phases.create).toFixed(2)} (a plain mode async call: ${p50(async).toFixed(2)}, server CPU ${serverCpu(async).toFixed(2)} ms), tasks/get ${median(task.phases.get).toFixed(2)}, tasks/result ${median(task.phases.result).toFixed(2)}`,
    );
  } finally {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once("exit", resolve));
      child.send("close");
      await exited;
    }
    await owner.close();
    await server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
