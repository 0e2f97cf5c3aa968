import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PostgresEventStore } from "../src/store/postgres/postgresEventStore.js";
import { LoomMcpClient } from "../src/testkit/mcpClient.js";
import { pollUntil } from "../src/testkit/poll.js";
import { startPostgresCluster } from "../src/testkit/postgresCluster.js";
import { postgresCpuSeconds } from "./processCpu.js";
import { fmt, now, printTable, rate, seconds } from "./stats.js";

/**
 * Several Loom nodes on one PostgreSQL database (docs/postgres.md "Several
 * nodes"), in one run:
 * 1. commands committed per second with three nodes writing at once against
 *    one node alone (goal: total ≥ one node's). A node here is a process
 *    (bench/nodeWriter.ts) running an Orchestrator on its own
 *    PostgresEventStore, so it folds every node's events into its own state.
 * 2. takeover time after `kill -9` of the `loom serve` process running an
 *    agent, against the configured lease (goal ≤ lease + 2 s): from the kill
 *    to the run's recorded end (node_lost) by the surviving node.
 * 3. in the same rounds, a run on an instance with onCrash resume: from the
 *    kill to the run working again on the surviving node (goal ≤ lease +
 *    heartbeat + 2 s), as the survivor's client first sees it (polled every
 *    25 ms).
 */

const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const HEARTBEAT_MS = 500;
const LEASE_MS = 3_000;

const WRITER = fileURLToPath(new URL("./nodeWriter.js", import.meta.url));

/** Waits for a line of a child's stdout that is `text` or starts with `text `; resolves with the rest of that line. */
function printed(child: ChildProcess, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((candidate) => candidate === text || candidate.startsWith(`${text} `));
      if (line !== undefined) {
        child.stdout!.off("data", onData);
        resolve(line.slice(text.length).trim());
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`node writer exited (${code}) before printing ${text}`)));
  });
}

/** One throughput phase: commands per second, and the CPU seconds its node processes and the database used. */
interface Throughput {
  readonly perSecond: number;
  readonly wallSeconds: number;
  readonly nodeCpuSeconds: number;
  readonly databaseCpuSeconds: number | null;
}

/**
 * `nodes` node processes on one fresh schema, each dispatching its share of
 * `threads` threads' commands; timed from the moment all are open and told to
 * start until the last one is done.
 */
async function nodesPerSecond(url: string, schema: string, nodes: number, threads: number): Promise<Throughput> {
  const share = Math.ceil(threads / nodes);
  const writers = Array.from({ length: nodes }, (_, n) =>
    spawn(process.execPath, [WRITER], { env: { ...process.env, LOOM_NODE_WRITER: JSON.stringify({ url, schema, label: `n${n}`, threads: share }) }, stdio: ["pipe", "pipe", "inherit"] }),
  );
  await Promise.all(writers.map((writer) => printed(writer, "ready")));
  const done = writers.map((writer) => printed(writer, "done"));
  const exited = writers.map((writer) => new Promise((resolve) => writer.once("exit", resolve)));
  const port = Number(new URL(url).port);
  const databaseBefore = postgresCpuSeconds(port);
  const start = now();
  for (const writer of writers) writer.stdin.write("go\n");
  const nodeCpuMicros = (await Promise.all(done)).map(Number);
  const wallSeconds = seconds(start);
  const databaseAfter = postgresCpuSeconds(port);
  const total = share * nodes * 2;
  const perSecond = rate(total, wallSeconds);
  await Promise.all(exited);
  const check = await PostgresEventStore.open(url, { schema });
  const events = await check.readAll(0, total + 1);
  await check.close();
  if (events.length !== total || events.some((event, i) => event.sequence !== i + 1)) throw new Error(`expected ${total} gap-free events, read ${events.length}`);
  return {
    perSecond,
    wallSeconds,
    nodeCpuSeconds: nodeCpuMicros.reduce((sum, micros) => sum + micros, 0) / 1e6,
    databaseCpuSeconds: databaseBefore === null || databaseAfter === null ? null : databaseAfter - databaseBefore,
  };
}

interface Serve {
  readonly child: ChildProcess;
  readonly url: string;
  readonly client: LoomMcpClient;
}

function serve(stateDir: string, url: string, schema: string, root: string): Promise<Serve> {
  mkdirSync(stateDir, { recursive: true });
  const providers = [
    { id: "scripted", driver: "scripted" },
    { id: "resumable", driver: "scripted", onCrash: "resume" },
  ];
  writeFileSync(join(stateDir, "config.json"), JSON.stringify({ providers, projects: [{ id: "default", root }], database: { schema }, nodes: { heartbeatMs: HEARTBEAT_MS, leaseMs: LEASE_MS } }));
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
  items: { type: string }[];
}

interface Takeover {
  /** Kill to the recorded node_lost end of a run whose instance fails lost runs. */
  readonly endedMs: number;
  /** Kill to the survivor's client seeing the run of an onCrash resume instance working again. */
  readonly resumedMs: number;
}

/** One round: two runs on node A alone, node B joins, A is killed; milliseconds from the kill to one run's recorded end and to the other's resume. */
async function takeoverMs(url: string, schema: string, dir: string): Promise<Takeover> {
  const a = await serve(join(dir, `${schema}-a`), url, schema, dir);
  let b: Serve | null = null;
  try {
    const launched = await a.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Long", message: JSON.stringify({ script: [{ sleep: 600_000 }] }) });
    const resumable = await a.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
      title: "Resumable",
      message: JSON.stringify({ script: [{ sleep: 600_000 }] }),
      target: { providerInstanceId: "resumable" },
    });
    await pollUntil(() => a.client.ok<ReadResult>("t3_thread_read", { threadId: launched.threadId, view: "activity" }), (r) => r.runs[0]?.status === "running", "the run running");
    await pollUntil(() => a.client.ok<ReadResult>("t3_thread_read", { threadId: resumable.threadId, view: "activity" }), (r) => r.runs[0]?.status === "running", "the resumable run running");
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
    // The resumed run is working again once its second attempt's turn runs, after the resume's notice.
    await pollUntil(
      () => survivor.client.ok<ReadResult>("t3_thread_read", { threadId: resumable.threadId, view: "activity" }),
      (r) => r.runs[0]?.status === "running" && r.items.some((item) => item.type === "system_notice"),
      "the resumable run working again",
      LEASE_MS + 30_000,
    );
    return { endedMs: Date.parse(run.endedAt) - killedAt, resumedMs: Date.now() - killedAt };
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
    const cpu = (phase: Throughput) => {
      const total = phase.databaseCpuSeconds === null ? null : phase.nodeCpuSeconds + phase.databaseCpuSeconds;
      return [
        phase.nodeCpuSeconds.toFixed(2),
        phase.databaseCpuSeconds === null ? "?" : phase.databaseCpuSeconds.toFixed(2),
        total === null ? "?" : (total / phase.wallSeconds).toFixed(2),
        total === null ? "?" : (total / availableParallelism()).toFixed(2),
      ];
    };
    printTable(`PostgreSQL, several nodes: commands committed per second (thread.create + thread.metadata.update, fsync on; ${availableParallelism()} CPUs)`, [
      ["measure", "per second", "ratio", "wall s", "nodes' CPU s", "database CPU s", "CPUs busy", "least wall s on this machine"],
      [`one node alone (${commands} commands, baseline)`, fmt(one.perSecond), "1.00", one.wallSeconds.toFixed(2), ...cpu(one)],
      [`three nodes writing at once, total (${commands} commands)`, fmt(three.perSecond), (three.perSecond / one.perSecond).toFixed(2), three.wallSeconds.toFixed(2), ...cpu(three)],
    ]);
    const rounds: Takeover[] = [];
    for (let round = 1; round <= options.rounds; round += 1) rounds.push(await takeoverMs(url, `takeover_${round}`, dir));
    const takeovers = rounds.map((round) => round.endedMs);
    const sorted = [...takeovers].sort((x, y) => x - y);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const resumes = rounds.map((round) => round.resumedMs).sort((x, y) => x - y);
    const resumeMedian = resumes[Math.floor(resumes.length / 2)]!;
    printTable(`PostgreSQL, several nodes: takeover after kill -9 (heartbeat ${HEARTBEAT_MS} ms, lease ${LEASE_MS} ms, ${options.rounds} round(s))`, [
      ["measure", "ms", "ratio to the lease"],
      ["configured lease (baseline)", fmt(LEASE_MS), "1.00"],
      [`kill -9 to the run's recorded node_lost end, median (all: ${takeovers.map((t) => fmt(t)).join(", ")})`, fmt(median), (median / LEASE_MS).toFixed(2)],
      ["kill -9 to the run's recorded node_lost end, worst", fmt(sorted[sorted.length - 1]!), (sorted[sorted.length - 1]! / LEASE_MS).toFixed(2)],
      [`kill -9 to an onCrash resume run working again on the survivor, median (all: ${rounds.map((round) => fmt(round.resumedMs)).join(", ")})`, fmt(resumeMedian), (resumeMedian / LEASE_MS).toFixed(2)],
      ["kill -9 to an onCrash resume run working again on the survivor, worst", fmt(resumes[resumes.length - 1]!), (resumes[resumes.length - 1]! / LEASE_MS).toFixed(2)],
    ]);
    console.log(`goal takeover ≤ lease + 2 s: ${sorted[sorted.length - 1]! <= LEASE_MS + 2_000 ? "met" : "not met"}; load average before ${loadBefore}, after ${load()}`);
    console.log(`goal resumed ≤ lease + heartbeat + 2 s: ${resumes[resumes.length - 1]! <= LEASE_MS + HEARTBEAT_MS + 2_000 ? "met" : "not met"}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await cluster.stop();
  }
}
