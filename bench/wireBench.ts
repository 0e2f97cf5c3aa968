import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocket, WebSocketServer } from "ws";
import { compactRecord } from "../src/api/wireCompaction.js";
import { boundedSnapshot } from "../src/app/orchestration/threadViews.js";
import { LoomWsClient } from "../src/client/loomWsClient.js";
import { bearerWebSocket } from "../src/client/nodeWebSocket.js";
import type { ThreadStreamUpdate } from "../src/contracts/wire/projections.js";
import { Orchestrator } from "../src/engine/orchestrator.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { MemoryEventStore } from "../src/store/memory/memoryEventStore.js";
import { playRecordedThread, recordedProviderFacts, recordedTurns } from "../src/testkit/recordedThreads.js";
import { fmt, now, percentile, printTable } from "./stats.js";

/**
 * The wire protocol (docs/wire.md):
 * - bytes of a bounded snapshot with compactIds+dedupeBodies against the raw
 *   one, on a long thread played from the drivers' recorded real transcripts;
 * - commit-to-subscriber latency (a command dispatched in the server's
 *   process until a subscribeThread client hears its event) against a bare
 *   `ws` echo round trip of a message the same size, one client;
 * - the same with many clients subscribed to the thread, p99 against the
 *   single-client p99.
 * Both latencies twice: with the clients in the server's process, and in
 * a process of their own (bench/wireClients.ts), where a browser's or a
 * CLI's reads would be; the echo client is where the subscribers are.
 */

const WIRE_CLIENTS = fileURLToPath(new URL("./wireClients.js", import.meta.url));

export interface WireBenchOptions {
  /** How many times the recorded transcripts are played into the long thread. */
  readonly transcriptRepeats: number;
  readonly commits: number;
  readonly clients: number;
  readonly warmup: number;
}

async function snapshotBytes(repeats: number): Promise<string[][]> {
  const orchestrator = await Orchestrator.open({ store: new MemoryEventStore(), providers: recordedProviderFacts });
  const turns = recordedTurns();
  const threadId = "thread:bench-recorded";
  await playRecordedThread(orchestrator, threadId, Array.from({ length: repeats }, () => turns).flat());
  const rows: string[][] = [["snapshot", "items", "raw bytes", "compactIds", "ratio", "compactIds+dedupeBodies", "ratio"]];
  for (const limit of [100, 500]) {
    const snapshot = await orchestrator.readCommitted((state) => boundedSnapshot(state, orchestrator.timeline, threadId, limit));
    const raw = JSON.stringify(snapshot).length;
    const ids = JSON.stringify(compactRecord(snapshot, { compactIds: true })).length;
    const both = JSON.stringify(compactRecord(snapshot, { compactIds: true, dedupeBodies: true })).length;
    rows.push([`bounded-snapshot?limit=${limit}`, String(snapshot.items.length), fmt(raw), fmt(ids), (ids / raw).toFixed(2), fmt(both), (both / raw).toFixed(2)]);
  }
  return rows;
}

/** Round trips of `size`-byte text frames to a bare `ws` server that echoes each back. */
async function echoLatencies(count: number, warmup: number, size: number): Promise<number[]> {
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  server.on("connection", (socket) => socket.on("message", (data) => socket.send((data as Buffer).toString("utf8"))));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as { port: number }).port}`);
  await new Promise<void>((resolve) => client.once("open", () => resolve()));
  const payload = "x".repeat(size);
  const samples: number[] = [];
  for (let i = 0; i < warmup + count; i++) {
    const start = now();
    await new Promise<void>((resolve) => {
      client.once("message", () => resolve());
      client.send(payload);
    });
    if (i >= warmup) samples.push(Number(now() - start) / 1e6);
  }
  client.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return samples;
}

interface FanoutResult {
  /** Every (commit, client) delivery latency, ms. */
  readonly samples: number[];
  /** Per commit: until the dispatch resolved (the commit returned), ms. */
  readonly commits: number[];
  /** Bytes of one event frame as a client receives it. */
  readonly frameBytes: number;
}

const BENCH_THREAD = "thread:bench-wire";

/** A real Loom server in a fresh state dir with the one thread the latency runs update; `use` gets it and the owner token. */
async function withBenchServer<T>(use: (server: Awaited<ReturnType<typeof startLoomServer>>, token: string) => Promise<T>): Promise<T> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-wire-"));
  const server = await startLoomServer({ stateDir, cwd: stateDir });
  try {
    const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
    await server.orchestrator.dispatch({ type: "thread.create", commandId: "cmd:bench-wire", data: { threadId: BENCH_THREAD, projectId: "default", title: "bench" } });
    return await use(server, token);
  } finally {
    await server.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/**
 * `clients` WebSocket clients subscribed to one thread; each commit is a
 * thread.metadata.update dispatched in the server's process, timed until every
 * client has its event. Commits go one at a time.
 */
function commitToSubscribers(clients: number, count: number, warmup: number): Promise<FanoutResult> {
  return withBenchServer(async (server, token) => {
    const connected: LoomWsClient[] = [];
    try {
      const threadId = BENCH_THREAD;
      let expected = "";
      let start = now();
      let heard = 0;
      let wake: () => void = () => undefined;
      const samples: number[] = [];
      const commits: number[] = [];
      let frameBytes = 0;
      let recording = false;
      for (let c = 0; c < clients; c++) {
        const client = await LoomWsClient.connect({ url: server.url, connect: bearerWebSocket(token) });
        connected.push(client);
        await new Promise<void>((ready) => {
          client.subscribe("orchestration.subscribeThread", { threadId }, {
            next: (update: ThreadStreamUpdate) => {
              if (update.kind === "snapshot") ready();
              if (update.kind !== "event" || (update.event.data as { thread?: { title?: string } }).thread?.title !== expected) return;
              if (recording) samples.push(Number(now() - start) / 1e6);
              frameBytes = JSON.stringify({ type: "stream", id: "1", update }).length;
              if (++heard === clients) wake();
            },
          });
        });
      }
      for (let i = 0; i < warmup + count; i++) {
        recording = i >= warmup;
        expected = `bench ${i}`;
        heard = 0;
        const all = new Promise<void>((resolve) => (wake = resolve));
        start = now();
        await server.orchestrator.dispatch({ type: "thread.metadata.update", commandId: `cmd:bench-wire:${i}`, data: { threadId, title: expected } });
        if (recording) commits.push(Number(now() - start) / 1e6);
        await all;
      }
      return { samples, commits, frameBytes };
    } finally {
      for (const client of connected) await client.close();
    }
  });
}

function sorted(samples: readonly number[]): number[] {
  return [...samples].sort((a, b) => a - b);
}

export async function runWireBench(options: WireBenchOptions): Promise<void> {
  printTable(`Wire compaction: bounded snapshots of a thread played from every recorded transcript ${options.transcriptRepeats} times (goal: compactIds+dedupeBodies ratio ≤ 0.6)`, await snapshotBytes(options.transcriptRepeats));

  const single = await commitToSubscribers(1, options.commits, options.warmup);
  const echo = await echoLatencies(options.commits, options.warmup, single.frameBytes);
  const many = await commitToSubscribers(options.clients, options.commits, options.warmup);
  printLatencies("clients in the server's process", options, echo, single, many);

  const apartSingle = await commitToClientProcess(1, options.commits, options.warmup);
  const apartEcho = await echoFromClientProcess(options.commits, options.warmup, apartSingle.frameBytes);
  const apartMany = await commitToClientProcess(options.clients, options.commits, options.warmup);
  printLatencies("clients in a process of their own", options, apartEcho, apartSingle, apartMany);
}

function printLatencies(where: string, options: WireBenchOptions, echoSamples: readonly number[], single: FanoutResult, manyResult: FanoutResult): void {
  const echo = sorted(echoSamples);
  const one = sorted(single.samples);
  const many = sorted(manyResult.samples);
  const commits = sorted(single.commits);
  const echoP50 = percentile(echo, 50);
  const oneP99 = percentile(one, 99);
  printTable(`Wire latency, ${where}: ${fmt(options.commits)} sequential commits, each until every subscriber has its event (goals: 1 client p50 ≤ 3× echo p50; ${options.clients} clients p99 ≤ 5× the 1-client p99)`, [
    ["measure", "p50 ms", "p99 ms", "ratio"],
    [`bare ws echo round trip, ${fmt(single.frameBytes)} B (baseline)`, echoP50.toFixed(3), percentile(echo, 99).toFixed(3), "1.00 (p50)"],
    ["dispatch until the commit returns (part of the next row)", percentile(commits, 50).toFixed(3), percentile(commits, 99).toFixed(3), `${(percentile(commits, 50) / echoP50).toFixed(2)} (p50 / echo p50)`],
    ["commit → 1 subscriber", percentile(one, 50).toFixed(3), oneP99.toFixed(3), `${(percentile(one, 50) / echoP50).toFixed(2)} (p50 / echo p50)`],
    [`commit → each of ${options.clients} subscribers`, percentile(many, 50).toFixed(3), percentile(many, 99).toFixed(3), `${(percentile(many, 99) / oneP99).toFixed(2)} (p99 / 1-client p99)`],
  ]);
}

function forkClients(job: Record<string, unknown>): ChildProcess {
  return fork(WIRE_CLIENTS, [], { env: { ...process.env, LOOM_WIRE_CLIENTS: JSON.stringify(job) }, stdio: ["ignore", "inherit", "inherit", "ipc"] });
}

/** The first message from the clients' process that `accept` takes; rejects if the process exits first. */
function messageFrom<T>(child: ChildProcess, accept: (message: T) => boolean): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onMessage = (message: unknown): void => {
      if (!accept(message as T)) return;
      off();
      resolve(message as T);
    };
    const onExit = (code: number | null): void => {
      off();
      reject(new Error(`the benchmark's clients process exited (${String(code)}) before answering`));
    };
    const off = (): void => {
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    child.on("message", onMessage);
    child.on("exit", onExit);
  });
}

async function stopClients(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (child.connected) child.disconnect();
  else child.kill();
  await exited;
}

/** Round trips from a client in its own process to a bare `ws` echo server in this one. */
async function echoFromClientProcess(count: number, warmup: number, size: number): Promise<number[]> {
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  server.on("connection", (socket) => socket.on("message", (data) => socket.send((data as Buffer).toString("utf8"))));
  const child = forkClients({ mode: "echo", url: `ws://127.0.0.1:${(server.address() as { port: number }).port}`, count, warmup, size });
  try {
    return (await messageFrom<{ type: string; samples: number[] }>(child, (message) => message.type === "echo")).samples;
  } finally {
    await stopClients(child);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

interface Heard {
  readonly type: "heard";
  readonly title: string;
  /** Each client's receive time, process.hrtime.bigint() as a decimal string. */
  readonly times: readonly string[];
  readonly frameBytes: number;
}

/** As commitToSubscribers, with the clients in a process of their own (bench/wireClients.ts). */
function commitToClientProcess(clients: number, count: number, warmup: number): Promise<FanoutResult> {
  return withBenchServer(async (server, token) => {
    let child: ChildProcess | null = null;
    try {
      child = forkClients({ mode: "subscribe", url: server.url, token, threadId: BENCH_THREAD, clients });
      await messageFrom<{ type: string }>(child, (message) => message.type === "ready");
      const samples: number[] = [];
      const commits: number[] = [];
      let frameBytes = 0;
      for (let i = 0; i < warmup + count; i++) {
        const title = `bench ${i}`;
        const heard = messageFrom<Heard>(child, (message) => message.type === "heard" && message.title === title);
        const start = now();
        await server.orchestrator.dispatch({ type: "thread.metadata.update", commandId: `cmd:bench-wire:${i}`, data: { threadId: BENCH_THREAD, title } });
        const committed = now();
        const { times, frameBytes: bytes } = await heard;
        if (i < warmup) continue;
        commits.push(Number(committed - start) / 1e6);
        for (const at of times) samples.push(Number(BigInt(at) - start) / 1e6);
        frameBytes = bytes;
      }
      return { samples, commits, frameBytes };
    } finally {
      if (child !== null) await stopClients(child);
    }
  });
}
