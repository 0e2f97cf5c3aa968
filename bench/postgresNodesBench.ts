import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "../src/contracts/commands.js";
import { Orchestrator } from "../src/engine/orchestrator.js";
import { PostgresEventStore } from "../src/store/postgres/postgresEventStore.js";
import { LoomMcpClient } from "../src/testkit/mcpClient.js";
import { pollUntil } from "../src/testkit/poll.js";
import { startPostgresCluster } from "../src/testkit/postgresCluster.js";
import { fmt, now, printTable, rate, seconds } from "./stats.js";

/**
 * Several Loom nodes on one PostgreSQL database (docs/postgres.md "Several
 * nodes"), in one run:
 * 1. commands committed per second with three nodes writing at once against
 *    one node alone (goal: total ≥ one node's). A node here is an
 *    Orchestrator on its own PostgresEventStore (its own pool, LISTEN
 *    connection and folded state); the three share this process's event loop.
 * 2. takeover time after `kill -9` of the `loom serve` process running an
 *    agent, against the configured lease (goal ≤ lease + 2 s): from the kill
 *    to the run's recorded end (node_lost) by the surviving node.
 */

const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const IN_FLIGHT = 1_000;
const HEARTBEAT_MS = 500;
const LEASE_MS = 3_000;

function commandsFor(node: string, index: number): Command[] {
  const threadId = `thread:bench-${node}-${index}`;
  return [
    { type: "thread.create", commandId: `cmd:create:${node}:${index}`, data: { threadId, projectId: "bench", title: `Thread ${index}` } },
    { type: "thread.metadata.update", commandId: `cmd:title:${node}:${index}`, data: { threadId, title: `Renamed ${index}` } },
  ];
}

async function dispatchAll(orchestrator: Orchestrator, commands: readonly Command[]): Promise<void> {
  for (let i = 0; i < commands.length; i += IN_FLIGHT) {
    const receipts = await Promise.all(commands.slice(i, i + IN_FLIGHT).map((command) => orchestrator.dispatch(command)));
    if (receipts.some((receipt) => receipt.status !== "accepted")) throw new Error("benchmark command rejected");
  }
}

/** `nodes` orchestrators on one fresh schema, each dispatching its share of `threads` threads' commands at once. */
async function nodesPerSecond(url: string, schema: string, nodes: number, threads: number): Promise<number> {
  const orchestrators: Orchestrator[] = [];
  for (let n = 0; n < nodes; n += 1) orchestrators.push(await Orchestrator.open({ store: await PostgresEventStore.open(url, { schema }) }));
  const shares = orchestrators.map((_, n) => Array.from({ length: Math.ceil(threads / nodes) }, (_, i) => commandsFor(`n${n}`, i)).flat());
  const total = shares.reduce((sum, share) => sum + share.length, 0);
  const start = now();
  await Promise.all(orchestrators.map((orchestrator, n) => dispatchAll(orchestrator, shares[n]!)));
  const perSecond = rate(total, seconds(start));
  const check = await PostgresEventStore.open(url, { schema });
  const events = await check.readAll(0, total + 1);
  await check.close();
  if (events.length !== total || events.some((event, i) => event.sequence !== i + 1)) throw new Error(`expected ${total} gap-free events, read ${events.length}`);
  for (const orchestrator of orchestrators) await orchestrator.close();
  return perSecond;
}

interface Serve {
  readonly child: ChildProcess;
  readonly url: string;
  readonly client: LoomMcpClient;
}

function serve(stateDir: string, url: string, schema: string, root: string): Promise<Serve> {
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "default", root }], database: { schema }, nodes: { heartbeatMs: HEARTBEAT_MS, leaseMs: LEASE_MS } }));
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--state-dir", stateDir, "--database", url], { stdio: ["ignore", "pipe", "ignore"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (!out.includes("\n")) return;
      const address = (JSON.parse(out.split("\n")[0]!) as { url: string }).url;
      const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
      LoomMcpClient.connect(`${address}/mcp`, token, "bench").then((client) => resolve({ child, url: address, client }), reject);
    });
    child.once("exit", (code) => reject(new Error(`loom serve exited early (${code})`)));
  });
}

async function stop(node: Serve): Promise<void> {
  await node.client.close().catch(() => undefined);
  if (node.child.exitCode !== null || node.child.signalCode !== null) return;
  const exited = new Promise((resolve) => node.child.once("exit", resolve));
  node.child.kill("SIGTERM");
  await exited;
}

interface ReadResult {
  runs: { runId: string; status: string; endReason: string | null; endedAt: string | null }[];
}

/** One round: a run on node A alone, node B joins, A is killed; milliseconds from the kill to the run's recorded end. */
async function takeoverMs(url: string, schema: string, dir: string): Promise<number> {
  const a = await serve(join(dir, `${schema}-a`), url, schema, dir);
  let b: Serve | null = null;
  try {
    const launched = await a.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Long", message: JSON.stringify({ script: [{ sleep: 600_000 }] }) });
    await pollUntil(() => a.client.ok<ReadResult>("t3_thread_read", { threadId: launched.threadId, view: "activity" }), (r) => r.runs[0]?.status === "running", "the run running");
    b = await serve(join(dir, `${schema}-b`), url, schema, dir);
    const killed = new Promise((resolve) => a.child.once("exit", resolve));
    const killedAt = Date.now();
    a.child.kill("SIGKILL");
    await killed;
    const survivor = b;
    const ended = await pollUntil(
      () => survivor.client.ok<ReadResult>("t3_thread_read", { threadId: launched.threadId, view: "activity" }),
      (r) => r.runs[0]?.status === "interrupted",
      "the run ended node_lost",
      LEASE_MS + 30_000,
    );
    const run = ended.runs[0]!;
    if (run.endReason !== "node_lost" || run.endedAt === null) throw new Error(`unexpected end ${JSON.stringify(run)}`);
    return Date.parse(run.endedAt) - killedAt;
  } finally {
    await stop(a);
    if (b !== null) await stop(b);
  }
}

export async function runPostgresNodesBench(options: { threads: number; rounds: number }): Promise<void> {
  const cluster = await startPostgresCluster({ durable: true });
  const dir = mkdtempSync(join(tmpdir(), "loom-bench-nodes-"));
  try {
    const url = await cluster.createDatabase();
    const load = () => loadavg().map((l) => l.toFixed(1)).join(" ");
    const loadBefore = load();
    const one = await nodesPerSecond(url, "one_node", 1, options.threads);
    const three = await nodesPerSecond(url, "three_nodes", 3, options.threads);
    const commands = fmt(options.threads * 2);
    printTable("PostgreSQL, several nodes: commands committed per second (thread.create + thread.metadata.update, fsync on)", [
      ["measure", "per second", "ratio"],
      [`one node alone (${commands} commands, baseline)`, fmt(one), "1.00"],
      [`three nodes writing at once, total (${commands} commands)`, fmt(three), (three / one).toFixed(2)],
    ]);
    const takeovers: number[] = [];
    for (let round = 1; round <= options.rounds; round += 1) takeovers.push(await takeoverMs(url, `takeover_${round}`, dir));
    const sorted = [...takeovers].sort((x, y) => x - y);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    printTable(`PostgreSQL, several nodes: takeover after kill -9 (heartbeat ${HEARTBEAT_MS} ms, lease ${LEASE_MS} ms, ${options.rounds} round(s))`, [
      ["measure", "ms", "ratio to the lease"],
      ["configured lease (baseline)", fmt(LEASE_MS), "1.00"],
      [`kill -9 to the run's recorded node_lost end, median (all: ${takeovers.map((t) => fmt(t)).join(", ")})`, fmt(median), (median / LEASE_MS).toFixed(2)],
      ["kill -9 to the run's recorded node_lost end, worst", fmt(sorted[sorted.length - 1]!), (sorted[sorted.length - 1]! / LEASE_MS).toFixed(2)],
    ]);
    console.log(`goal takeover ≤ lease + 2 s: ${sorted[sorted.length - 1]! <= LEASE_MS + 2_000 ? "met" : "not met"}; load average before ${loadBefore}, after ${load()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await cluster.stop();
  }
}
