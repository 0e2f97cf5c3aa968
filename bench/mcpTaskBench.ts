import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { now, percentile, printTable } from "./stats.js";

/**
 * delegate_task as an MCP task against the same delegation in mode wait
 * (docs/benchmarks.md, "MCP tasks"): one agent's SDK client, over real
 * Streamable HTTP, delegates a scripted child that answers at once. A task
 * round trip is the task-augmented call, one tasks/get poll and tasks/result
 * (which blocks until the task ends, so the client does not sleep out a
 * poll interval); the baseline is one tools/call in mode wait. The calls
 * alternate in blocks so drift lands on both alike. CPU is the benchmark
 * process's (server and client share it) per delegation. Run with a child
 * that answers at once (the overhead alone) and with one whose turn takes
 * `childSleepMs` (still far shorter than an agent's).
 */
const BLOCK = 10;
const childOf = (sleepMs: number) => JSON.stringify({ script: [...(sleepMs === 0 ? [] : [{ sleep: sleepMs }]), { say: "child done" }] });

interface Measured {
  readonly ms: number[];
  cpuMicros: number;
}

async function timeBlock(into: Measured, count: number, call: () => Promise<void>): Promise<void> {
  for (let i = 0; i < count; i++) {
    const cpu = process.cpuUsage();
    const start = now();
    await call();
    into.ms.push(Number(now() - start) / 1e6);
    const used = process.cpuUsage(cpu);
    into.cpuMicros += used.user + used.system;
  }
}

export async function runMcpTaskBench(options: { delegations: number; warmup: number; childSleepMs: number }): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-mcp-task-"));
  // Every delegation is one more spawn of the parent's tree: lift the per-root cap past the run's count.
  const configPath = join(stateDir, "loom-config.json");
  writeFileSync(configPath, JSON.stringify({ limits: { maxSpawnsPerRootThread: 100_000 } }));
  const server = await startLoomServer({ stateDir, cwd: stateDir, configPath });
  const owner = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim(), "loom-bench");
  const client = new Client({ name: "loom-bench-tasks", version: "1.0.0" });
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
    await client.connect(new StreamableHTTPClientTransport(new URL(server.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${credential.token}` } } }));

    const args = { task: childOf(options.childSleepMs), target: { providerInstanceId: "scripted" } };
    const waitMode = async () => {
      const result = await client.callTool({ name: "delegate_task", arguments: { ...args, mode: "wait" } });
      if ((result.structuredContent as { workState?: string } | undefined)?.workState !== "result_available") throw new Error("a wait-mode delegation ended without its result");
    };
    const asyncMode = async () => {
      await client.callTool({ name: "delegate_task", arguments: { ...args, mode: "async" } });
    };
    const phases = { create: [] as number[], get: [] as number[], result: [] as number[] };
    const asTask = async () => {
      let at = now();
      const lap = (into: number[]) => {
        const next = now();
        into.push(Number(next - at) / 1e6);
        at = next;
      };
      const created = await client.request({ method: "tools/call", params: { name: "delegate_task", arguments: args } }, CreateTaskResultSchema, { task: { ttl: 600_000 } });
      lap(phases.create);
      await client.experimental.tasks.getTask(created.task.taskId);
      lap(phases.get);
      const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      lap(phases.result);
      if ((result.structuredContent as { workState?: string } | undefined)?.workState !== "result_available") throw new Error("a task's result came without the child's result");
    };
    const warm: Measured = { ms: [], cpuMicros: 0 };
    await timeBlock(warm, options.warmup, waitMode);
    await timeBlock(warm, options.warmup, asTask);
    const wait: Measured = { ms: [], cpuMicros: 0 };
    const task: Measured = { ms: [], cpuMicros: 0 };
    const async: Measured = { ms: [], cpuMicros: 0 };
    for (let done = 0; done < options.delegations; done += BLOCK) {
      const count = Math.min(BLOCK, options.delegations - done);
      await timeBlock(wait, count, waitMode);
      await timeBlock(task, count, asTask);
      await timeBlock(async, count, asyncMode);
    }
    const median = (samples: readonly number[]) => percentile([...samples].sort((a, b) => a - b), 50);
    const p50 = (m: Measured) => median(m.ms);
    const cpu = (m: Measured) => m.cpuMicros / m.ms.length / 1000;
    printTable(`MCP tasks: delegate_task round trip, child turn ${options.childSleepMs} ms, ${options.delegations} delegations each`, [
      ["call", "p50 ms", "p99 ms", "ratio", "CPU ms / delegation", "CPU ratio"],
      ["delegate_task mode wait (baseline)", p50(wait).toFixed(2), percentile([...wait.ms].sort((a, b) => a - b), 99).toFixed(2), "1.00", cpu(wait).toFixed(2), "1.00"],
      [
        "as a task: create + tasks/get + tasks/result",
        p50(task).toFixed(2),
        percentile([...task.ms].sort((a, b) => a - b), 99).toFixed(2),
        (p50(task) / p50(wait)).toFixed(2),
        cpu(task).toFixed(2),
        (cpu(task) / cpu(wait)).toFixed(2),
      ],
    ]);
    console.log(
      `task phases, p50 ms: create ${median(phases.create).toFixed(2)} (a plain mode async call: ${p50(async).toFixed(2)}), tasks/get ${median(phases.get).toFixed(2)}, tasks/result ${median(phases.result).toFixed(2)}`,
    );
  } finally {
    await client.close().catch(() => undefined);
    await owner.close();
    await server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
