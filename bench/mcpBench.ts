import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { fmt, now, percentile, printTable, rate } from "./stats.js";

/**
 * MCP round trips through the real server: t3_thread_read of a thread with a
 * few dozen items against loom_echo, the cheapest call the endpoint serves.
 * The same SDK client makes every call, one at a time, in alternating blocks
 * so drift (GC, JIT, the OS) lands on both tools alike.
 */
const BLOCK = 100;
const SAY_STEPS = 20;

interface Latencies {
  readonly samples: number[];
  totalSeconds: number;
}

async function timeBlock(into: Latencies, count: number, call: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i++) {
    const start = now();
    await call();
    const seconds = Number(now() - start) / 1e9;
    into.samples.push(seconds * 1000);
    into.totalSeconds += seconds;
  }
}

/** A finished scripted thread whose timeline is the prompt and SAY_STEPS assistant messages. */
async function threadWithTimeline(client: LoomMcpClient): Promise<string> {
  const script = { script: Array.from({ length: SAY_STEPS }, (_, i) => ({ say: `Step ${i + 1}: ${"lorem ipsum dolor sit amet ".repeat(8).trim()}` })) };
  const launched = await client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { message: JSON.stringify(script), title: "bench", target: { providerInstanceId: "scripted" } });
  for (;;) {
    const waited = await client.ok<{ status: string; waitTimedOut: boolean }>("t3_thread_wait", { threadId: launched.threadId, runId: launched.runId });
    if (waited.waitTimedOut) continue;
    if (waited.status !== "completed") throw new Error(`benchmark thread ended ${waited.status}`);
    return launched.threadId;
  }
}

function row(name: string, measured: Latencies, baselineP50: number): string[] {
  const sorted = [...measured.samples].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  return [name, p50.toFixed(3), percentile(sorted, 99).toFixed(3), fmt(rate(sorted.length, measured.totalSeconds)), (p50 / baselineP50).toFixed(2)];
}

export async function runMcpBench(options: { calls: number; warmup: number }): Promise<void> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-mcp-"));
  const server = await startLoomServer({ stateDir, cwd: stateDir, diagnosticsTools: true });
  const client = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim(), "loom-bench");
  try {
    const threadId = await threadWithTimeline(client);
    const echo = () => client.ok("loom_echo", { text: "ping" });
    const read = () => client.ok<{ items: unknown[] }>("t3_thread_read", { threadId });
    const sample = await read();
    const items = sample.items.length;
    if (items !== SAY_STEPS + 1) throw new Error(`benchmark thread reads ${items} items, expected ${SAY_STEPS + 1}`);
    const readBytes = JSON.stringify(sample).length;

    const echoTimes: Latencies = { samples: [], totalSeconds: 0 };
    const readTimes: Latencies = { samples: [], totalSeconds: 0 };
    const discard = (): Latencies => ({ samples: [], totalSeconds: 0 });
    await timeBlock(discard(), options.warmup, echo);
    await timeBlock(discard(), options.warmup, read);
    for (let done = 0; done < options.calls; done += BLOCK) {
      const count = Math.min(BLOCK, options.calls - done);
      // Alternate which tool goes first in each pair of blocks.
      const pair = (done / BLOCK) % 2 === 0 ? [[echoTimes, echo], [readTimes, read]] as const : [[readTimes, read], [echoTimes, echo]] as const;
      for (const [into, call] of pair) await timeBlock(into, count, call);
    }

    const baselineP50 = percentile([...echoTimes.samples].sort((a, b) => a - b), 50);
    printTable(`MCP round trips (${fmt(options.calls)} sequential calls each, one SDK client, Streamable HTTP, alternating blocks of ${BLOCK})`, [
      ["tool", "p50 ms", "p99 ms", "calls/s", "p50 ratio"],
      row("loom_echo (baseline)", echoTimes, baselineP50),
      row(`t3_thread_read (${items} items, ${fmt(readBytes)} B of JSON)`, readTimes, baselineP50),
    ]);
  } finally {
    await client.close();
    await server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
