import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import { type LoomServer, startLoomServer } from "../src/server/loomServer.js";
import { fmt, now, percentile, printTable } from "./stats.js";

/**
 * MCP latency against the number of threads: t3_thread_list (default page of
 * the caller's project) and delegate_task (mode async, scripted child) on a
 * server holding 100,000 threads, against the same calls on a server holding
 * 1,000, both in this process and measured in alternating blocks so drift
 * lands on both. Threads are created in bulk through the dispatcher
 * (thread.create), not through MCP. Goal: each ratio ≤ 1.5.
 */
const BLOCK = 50;
const CREATE_BATCH = 2_000;

interface Stand {
  readonly threads: number;
  readonly server: LoomServer;
  readonly dir: string;
  readonly owner: LoomMcpClient;
  readonly agent: LoomMcpClient;
  readonly parentThreadId: string;
}

async function populate(server: LoomServer, count: number): Promise<void> {
  for (let done = 0; done < count; done += CREATE_BATCH) {
    const batch = Math.min(CREATE_BATCH, count - done);
    const receipts = await Promise.all(
      Array.from({ length: batch }, (_, i) =>
        server.orchestrator.dispatch({
          type: "thread.create",
          commandId: `cmd:bench-create:${done + i}`,
          data: { threadId: `thread:bench-${done + i}`, projectId: "default", title: `Bench thread ${done + i}` },
        }),
      ),
    );
    if (receipts.some((receipt) => receipt.status !== "accepted")) throw new Error("a bulk thread.create was rejected");
  }
}

/** A server with `threads` threads and a parent agent whose run stays live, connected with its own credential. */
async function stand(threads: number): Promise<Stand> {
  const dir = mkdtempSync(join(tmpdir(), "loom-bench-scale-"));
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify({ limits: { maxActiveChildrenPerThread: 1_000, maxSpawnsPerRootThread: 100_000 } }));
  const server = await startLoomServer({ stateDir: join(dir, ".loom"), cwd: dir, configPath });
  await populate(server, threads);
  const owner = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(dir, ".loom", "owner-token"), "utf8").trim(), "loom-bench");
  const parent = await owner.ok<{ threadId: string; runId: string }>("t3_thread_launch", { message: JSON.stringify({ script: [{ sleep: 3_600_000 }] }), title: "Bench parent" });
  for (;;) {
    const run = server.orchestrator.state.runs.get(parent.runId);
    if (run?.status === "running") break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const session = [...server.orchestrator.state.providerSessions.values()].find((s) => s.threadId === parent.threadId && s.releasedAt === null);
  if (session === undefined) throw new Error("the bench parent has no provider session");
  const credential = await server.credentials.issue({ environmentId: server.environmentId, threadId: parent.threadId, providerInstanceId: session.providerInstanceId, providerSessionId: session.id });
  const agent = await LoomMcpClient.connect(server.mcpUrl, credential.token, "loom-bench-agent");
  return { threads, server, dir, owner, agent, parentThreadId: parent.threadId };
}

async function close(s: Stand): Promise<void> {
  await s.agent.close();
  await s.owner.close();
  await s.server.close();
  rmSync(s.dir, { recursive: true, force: true });
}

const calls = {
  list: (s: Stand) => s.agent.ok<{ total: number; threads: unknown[] }>("t3_thread_list", {}),
  delegate: (s: Stand) => s.agent.ok<{ taskId: string }>("delegate_task", { task: JSON.stringify({ script: [{ say: "done" }] }), mode: "async" }),
} as const;

async function timeBlock(into: number[], count: number, call: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i++) {
    const start = now();
    await call();
    into.push(Number(now() - start) / 1e6);
  }
}

export async function runScaleBench(options: { small: number; large: number; calls: number; warmup: number }): Promise<void> {
  const start = now();
  const small = await stand(options.small);
  const large = await stand(options.large);
  const setupSeconds = Number(now() - start) / 1e9;
  try {
    const listed = await calls.list(large);
    if (listed.total < options.large || listed.threads.length !== 25) throw new Error(`t3_thread_list at ${options.large} threads answered total ${listed.total}`);
    const times = new Map<string, number[]>();
    const key = (tool: string, s: Stand) => `${tool}:${s.threads}`;
    for (const tool of ["list", "delegate"] as const) {
      for (const s of [small, large]) {
        times.set(key(tool, s), []);
        await timeBlock([], options.warmup, () => calls[tool](s));
      }
      for (let done = 0; done < options.calls; done += BLOCK) {
        const count = Math.min(BLOCK, options.calls - done);
        const order = (done / BLOCK) % 2 === 0 ? [small, large] : [large, small];
        for (const s of order) await timeBlock(times.get(key(tool, s))!, count, () => calls[tool](s));
      }
    }
    const p = (tool: string, s: Stand, q: number) => percentile([...times.get(key(tool, s))!].sort((a, b) => a - b), q);
    const rows = (["list", "delegate"] as const).flatMap((tool) => {
      const name = tool === "list" ? "t3_thread_list (25 per page)" : "delegate_task (async, scripted child)";
      return [small, large].map((s) => [name, fmt(s.threads), p(tool, s, 50).toFixed(3), p(tool, s, 99).toFixed(3), (p(tool, s, 50) / p(tool, small, 50)).toFixed(2)]);
    });
    printTable(
      `MCP latency against thread count (${fmt(options.calls)} calls per tool and size, alternating blocks of ${BLOCK}; setup with ${fmt(options.small + options.large)} bulk thread.create: ${setupSeconds.toFixed(1)} s)`,
      [["tool", "threads", "p50 ms", "p99 ms", "p50 ratio"], ...rows],
    );
  } finally {
    await close(small);
    await close(large);
  }
}
