import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LoomMcpClient } from "../src/client/loomMcpClient.js";
import type { Command } from "../src/contracts/commands.js";
import type { TelemetrySettings } from "../src/config/telemetry.js";
import { Orchestrator } from "../src/engine/orchestrator.js";
import { DEFAULT_SCRIPTED_CAPABILITIES } from "../src/providers/scripted/options.js";
import { startLoomServer } from "../src/server/loomServer.js";
import { SqliteEventStore } from "../src/store/sqlite/sqliteEventStore.js";
import { LiveTraceExport } from "../src/telemetry/liveTraceExport.js";
import { LOOM_VERSION } from "../src/version.js";
import { Recorder, STARTUP_MS, fanOut, median } from "./fanoutBench.js";
import { fmt, now, printTable, rate, seconds } from "./stats.js";

/**
 * Trace export's cost (docs/telemetry.md): the same work with export off and
 * with every span sent live to an OTLP/HTTP receiver on 127.0.0.1 (its own
 * process, bench/otlpReceiver.ts, which only reads and counts the bodies), measured in the same run and
 * interleaved, so the machine's load falls on both alike. Ratios are
 * throughput on / off: 1.00 costs nothing.
 */

const IN_FLIGHT = 1_000;

const RECEIVER = join(fileURLToPath(new URL(".", import.meta.url)), "otlpReceiver.js");

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the OTLP receiver exited (${code ?? "signal"})`));
    child.once("exit", onExit);
    child.once("message", (message) => {
      child.off("exit", onExit);
      resolve(message as T);
    });
  });
}

/** The receiver (bench/otlpReceiver.ts) in its own process, as a collector is: the dispatcher's event loop never serves it. */
async function drainReceiver(): Promise<{ url: string; counts: () => Promise<{ requests: number; bytes: number }>; close: () => Promise<void> }> {
  const child = fork(RECEIVER, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const { url } = await nextMessage<{ url: string }>(child);
  return {
    url,
    counts: () => {
      const answer = nextMessage<{ requests: number; bytes: number }>(child);
      child.send("counts");
      return answer;
    },
    close: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send("close");
      await exited;
    },
  };
}

function settings(url: string): TelemetrySettings {
  return { tracesUrl: `${url}/v1/traces`, protocol: "http/protobuf", headers: {}, serviceName: "loom-bench", sampler: "always_on", samplerRatio: 1 };
}

/** One thread's whole turn, as a provider would report it: a run and an attempt that end, so each thread ends two spans. */
function turnOf(index: number, round: string): Command[] {
  const threadId = `thread:bench-${round}-${index}`;
  const runId = `run:bench-${round}-${index}`;
  const providerSessionId = `session:bench-${round}-${index}`;
  const id = (what: string) => `cmd:${what}:${round}:${index}`;
  return [
    { type: "thread.create", commandId: id("create"), data: { threadId, projectId: "bench", title: `Thread ${index}`, modelSelection: { providerInstanceId: "bench", model: null } } },
    { type: "message.dispatch", commandId: id("send"), data: { threadId, text: "go", messageId: `message:bench-${round}-${index}`, runId } },
    { type: "provider-runtime.session-opened", commandId: id("session"), data: { threadId, providerSessionId, providerInstanceId: "bench", driver: "scripted" } },
    { type: "provider-runtime.attempt-started", commandId: id("attempt"), data: { threadId, runId, providerSessionId } },
    { type: "provider-runtime.turn-completed", commandId: id("end"), data: { threadId, runId, status: "completed", error: null, usage: { inputTokens: 100, outputTokens: 20 } } },
  ] as Command[];
}

/** The core benchmark's workload (thread.create + thread.metadata.update): it ends no span, so it measures what following the log costs. */
function renameOf(index: number, round: string): Command[] {
  const threadId = `thread:bench-${round}-${index}`;
  return [
    { type: "thread.create", commandId: `cmd:create:${round}:${index}`, data: { threadId, projectId: "bench", title: `Thread ${index}` } },
    { type: "thread.metadata.update", commandId: `cmd:title:${round}:${index}`, data: { threadId, title: `Renamed ${index}` } },
  ];
}

const WORKLOADS = { turns: turnOf, renames: renameOf } as const;
type Workload = keyof typeof WORKLOADS;

async function dispatcherRound(workload: Workload, threads: number, round: string, exportTo: string | null): Promise<{ perSecond: number; ended: number; accepted: number }> {
  const dir = mkdtempSync(join(tmpdir(), "loom-bench-otel-"));
  const store = SqliteEventStore.open(join(dir, "loom.db"));
  const orchestrator = await Orchestrator.open({ store, providers: () => ({ driver: "scripted", capabilities: DEFAULT_SCRIPTED_CAPABILITIES }) });
  // A queue that holds a whole round: the export worker sends while the loop below runs, but may fall behind it. start() waits for the worker, as a server's start does.
  const live = exportTo === null ? null : new LiveTraceExport({ orchestrator, settings: settings(exportTo), version: LOOM_VERSION, log: (line) => console.log(line), batch: { maxQueueSize: threads * 4 } });
  await live?.start();
  const commands = Array.from({ length: threads }, (_, i) => WORKLOADS[workload](i, round)).flat();
  const start = now();
  for (let i = 0; i < commands.length; i += IN_FLIGHT) {
    const receipts = await Promise.all(commands.slice(i, i + IN_FLIGHT).map((c) => orchestrator.dispatch(c)));
    const refused = receipts.find((r) => r.status !== "accepted");
    if (refused !== undefined) throw new Error(`benchmark command rejected: ${JSON.stringify(refused)}`);
  }
  // What the worker has not sent yet is sent at stop, which the figure includes: the cost of every span, sent.
  await live?.stop();
  const perSecond = rate(commands.length, seconds(start));
  const { ended, exported } = live?.stats() ?? { ended: 0, exported: 0 };
  await orchestrator.close();
  rmSync(dir, { recursive: true, force: true });
  return { perSecond, ended, accepted: exported };
}

async function fanoutServer(exportTo: string | null) {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-otel-fanout-"));
  writeFileSync(
    join(stateDir, "config.json"),
    JSON.stringify({
      workspaces: { checkpoints: false },
      providers: [
        { id: "fast", driver: "scripted" },
        { id: "slow", driver: "scripted", options: { startupDelayMs: STARTUP_MS } },
      ],
      ...(exportTo === null ? {} : { telemetry: { endpoint: exportTo, serviceName: "loom-bench" } }),
    }),
  );
  const server = await startLoomServer({ stateDir, cwd: stateDir });
  const recorder = new Recorder();
  const recording = server.orchestrator.follow(server.orchestrator.state.lastSequence, (event) => recorder.onEvents([event]));
  const client = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim(), "loom-bench");
  return {
    server,
    run: (n: number, round: string) => fanOut(client, recorder, n, round),
    async close() {
      recording.close();
      await client.close();
      await server.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

export async function runTelemetryBench(options: { threads: number; rounds: number; fanoutRounds: number; children: number }): Promise<void> {
  const receiver = await drainReceiver();
  try {
    const rows: string[][] = [["workload", "export off (commands/s)", "exporting live (commands/s)", "ratio", "spans of the measured rounds"]];
    for (const workload of ["renames", "turns"] as const) {
      const off: number[] = [];
      const on: number[] = [];
      let ended = 0;
      let accepted = 0;
      await dispatcherRound(workload, Math.min(options.threads, 2_000), `warm-off-${workload}`, null);
      await dispatcherRound(workload, Math.min(options.threads, 2_000), `warm-on-${workload}`, receiver.url);
      for (let round = 0; round < options.rounds; round++) {
        off.push((await dispatcherRound(workload, options.threads, `off-${workload}-${round}`, null)).perSecond);
        const traced = await dispatcherRound(workload, options.threads, `on-${workload}-${round}`, receiver.url);
        on.push(traced.perSecond);
        ended += traced.ended;
        accepted += traced.accepted;
      }
      const label = workload === "renames" ? `thread.create + thread.metadata.update (the core benchmark's; no span ends), ${fmt(options.threads)} threads` : `a whole turn per thread (create, send, session, attempt, end: 5 commands, 2 spans), ${fmt(options.threads)} threads`;
      rows.push([label, fmt(median(off)), fmt(median(on)), (median(on) / median(off)).toFixed(2), `${fmt(ended)} ended, ${fmt(accepted)} accepted`]);
    }
    const received = await receiver.counts();
    if (received.requests === 0) throw new Error("no span reached the receiver");
    printTable(`Dispatcher throughput with trace export (median of ${options.rounds}, off and on interleaved; ${fmt(received.bytes)} bytes of spans in ${fmt(received.requests)} requests)`, rows);

    const plain = await fanoutServer(null);
    const traced = await fanoutServer(receiver.url);
    try {
      await plain.run(1, "warmup");
      await traced.run(1, "warmup");
      const offTimes: number[] = [];
      const onTimes: number[] = [];
      for (let round = 0; round < options.fanoutRounds; round++) {
        offTimes.push((await plain.run(options.children, `off-${round}`)).results);
        onTimes.push((await traced.run(options.children, `on-${round}`)).results);
      }
      await traced.server.traces.live!.flush();
      const offMs = median(offTimes) * 1000;
      const onMs = median(onTimes) * 1000;
      printTable(`Fan-out of ${options.children} children with trace export (startupDelayMs ${STARTUP_MS}, checkpoints off; median of ${options.fanoutRounds}, interleaved; ms until every result)`, [
        ["measure", "all results (ms)", "ratio (off / on)"],
        ["export off (baseline)", offMs.toFixed(0), "1.00"],
        ["exporting every span live to a local OTLP/HTTP receiver", onMs.toFixed(0), (offMs / onMs).toFixed(2)],
      ]);
    } finally {
      await plain.close();
      await traced.close();
    }
  } finally {
    await receiver.close();
  }
}
