import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type Server, createServer, request } from "node:http";
import { type AddressInfo, type Socket, connect, createServer as createTcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser } from "playwright-core";
import { compactRecord } from "../src/api/wireCompaction.js";
import { boundedSnapshot } from "../src/app/orchestration/threadViews.js";
import { LoomWsClient } from "../src/client/loomWsClient.js";
import { bearerWebSocket } from "../src/client/nodeWebSocket.js";
import { Orchestrator } from "../src/engine/orchestrator.js";
import { sendJson } from "../src/http/http.js";
import { type LoomServer, startLoomServer } from "../src/server/loomServer.js";
import { MemoryEventStore } from "../src/store/memory/memoryEventStore.js";
import { launchChromium } from "../src/testkit/browser.js";
import { playRecordedThread, recordedProviderFacts, recordedTurns } from "../src/testkit/recordedThreads.js";
import { fmt, percentile, printTable } from "./stats.js";

/**
 * What compression saves on the wire (docs/wire.md#compression):
 * - bounded-snapshot bytes with compactIds+dedupeBodies and br, against the
 *   raw JSON uncompressed, on the thread wireBench plays from every recorded
 *   transcript, sent over HTTP by Loom's own sendJson;
 * - a cold web UI load in chromium (sign in, open a thread), every byte the
 *   server sent counted on the TCP connections, against the same load from a
 *   server with `wire.compression: false`.
 */

export interface CompressionBenchOptions {
  /** How many times the recorded transcripts are played into the snapshot thread. */
  readonly transcriptRepeats: number;
  /** Lines the UI thread's scripted run says. */
  readonly uiLines: number;
  readonly rounds: number;
}

export async function runCompressionBench(options: CompressionBenchOptions): Promise<void> {
  printTable(
    `Snapshot bytes on the wire: bounded snapshots of a thread played from every recorded transcript ${options.transcriptRepeats} times, HTTP body bytes (goal: compactIds+dedupeBodies+br ≤ 0.2 of raw JSON)`,
    await snapshotWireBytes(options.transcriptRepeats),
  );
  await coldUiLoad(options);
}

/** Body bytes of GET `path` from `port` offering `acceptEncoding` (none: no header), as they crossed the wire. */
function bodyBytes(port: number, path: string, acceptEncoding: string | null): Promise<number> {
  return new Promise((done, fail) => {
    const req = request({ host: "127.0.0.1", port, path, headers: acceptEncoding === null ? {} : { "accept-encoding": acceptEncoding } }, (res) => {
      let bytes = 0;
      res.on("data", (chunk: Buffer) => (bytes += chunk.length));
      res.on("end", () => done(bytes));
    });
    req.on("error", fail);
    req.end();
  });
}

async function snapshotWireBytes(repeats: number): Promise<string[][]> {
  const orchestrator = await Orchestrator.open({ store: new MemoryEventStore(), providers: recordedProviderFacts });
  const threadId = "thread:bench-recorded";
  await playRecordedThread(orchestrator, threadId, Array.from({ length: repeats }, () => recordedTurns()).flat());
  const snapshots = new Map<number, unknown>();
  for (const limit of [100, 500]) snapshots.set(limit, await orchestrator.readCommitted((state) => boundedSnapshot(state, orchestrator.timeline, threadId, limit)));
  // Answered as Loom's bounded-snapshot route answers (threadRoutes.ts): compactRecord, then sendJson.
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://bench.invalid");
    const snapshot = snapshots.get(Number(url.searchParams.get("limit")))!;
    sendJson(res, 200, url.searchParams.get("compact") === "1" ? compactRecord(snapshot, { compactIds: true, dedupeBodies: true }) : snapshot);
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const port = (server.address() as AddressInfo).port;
  try {
    const rows: string[][] = [["snapshot", "items", "coding", "raw JSON bytes", "ratio", "compactIds+dedupeBodies bytes", "ratio"]];
    for (const limit of snapshots.keys()) {
      const raw = await bodyBytes(port, `/?limit=${limit}`, null);
      for (const coding of [null, "gzip", "br"]) {
        const plain = await bodyBytes(port, `/?limit=${limit}`, coding);
        const compact = await bodyBytes(port, `/?limit=${limit}&compact=1`, coding);
        rows.push([`bounded-snapshot?limit=${limit}`, String((snapshots.get(limit) as { items: unknown[] }).items.length), coding ?? "identity (baseline)", fmt(plain), (plain / raw).toFixed(3), fmt(compact), (compact / raw).toFixed(3)]);
      }
    }
    return rows;
  } finally {
    await new Promise<void>((done) => server.close(() => done()));
  }
}

/** A TCP relay that counts the bytes each way; it listens on `host` at the target's own port. */
interface CountingRelay {
  /** Bytes from the server to the browser, and back; `ws`: the part of `down` on WebSocket connections. */
  readonly counted: { down: number; up: number; ws: number };
  close(): Promise<void>;
}

async function countingRelay(host: string, port: number): Promise<CountingRelay> {
  const counted = { down: 0, up: 0, ws: 0 };
  const sockets = new Set<Socket>();
  const relay = createTcpServer((browserSide) => {
    const serverSide = connect(port, "127.0.0.1");
    for (const socket of [browserSide, serverSide]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        browserSide.destroy();
        serverSide.destroy();
      });
    }
    let websocket: boolean | null = null;
    browserSide.on("data", (chunk: Buffer) => {
      // A connection is a WebSocket when its first request asks for the upgrade.
      websocket ??= /\r\nupgrade:\s*websocket/i.test(chunk.toString("latin1"));
      counted.up += chunk.length;
    });
    serverSide.on("data", (chunk: Buffer) => {
      counted.down += chunk.length;
      if (websocket === true) counted.ws += chunk.length;
    });
    browserSide.pipe(serverSide);
    serverSide.pipe(browserSide);
  });
  await new Promise<void>((ready, fail) => {
    relay.once("error", (error) => fail(new Error(`the byte-counting relay cannot listen on [${host}]:${port} (${error.message}); it needs IPv6 loopback`)));
    relay.listen(port, host, ready);
  });
  return {
    counted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => relay.close(() => done()));
    },
  };
}

/** A server with the UI and one finished thread of `lines` said lines; compression as `compression`. */
async function uiServer(compression: boolean, lines: number): Promise<{ server: LoomServer; token: string; threadId: string; stateDir: string }> {
  const stateDir = mkdtempSync(join(tmpdir(), "loom-bench-compression-"));
  const configPath = join(stateDir, "config.json");
  writeFileSync(configPath, JSON.stringify({ wire: { compression } }));
  const server = await startLoomServer({ stateDir, port: 0, cwd: stateDir, configPath, uiDir: resolve("dist/ui") });
  const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
  const ws = await LoomWsClient.connect({ url: server.url, connect: bearerWebSocket(token) });
  try {
    const steps = Array.from({ length: lines }, (_, i) => ({ say: `Line ${i}: checked \`src/module${i % 37}.ts\`, ${(i * 7919) % 1000} tests pass, nothing else changed.` }));
    const launched = await ws.request("orchestration.launchThread", { message: JSON.stringify({ script: steps }), title: "Bench thread" });
    await new Promise<void>((done, fail) => {
      const deadline = Date.now() + 600_000;
      const poll = setInterval(() => {
        if (server.orchestrator.state.runs.get(launched.runId!)?.endedAt != null) done();
        else if (Date.now() > deadline) fail(new Error("bench: the UI thread's run did not finish"));
        else return;
        clearInterval(poll);
      }, 20);
    });
    return { server, token, threadId: launched.threadId, stateDir };
  } finally {
    await ws.close();
  }
}

/**
 * Cold loads (a fresh browser context each, so an empty cache): the login
 * link, the home page, then the thread's page until its first item shows and
 * the network is idle. The browser talks to a relay on [::1] at the server's
 * port, one of the server's own origins, so every byte is counted.
 */
async function coldLoads(browser: Browser, target: { server: LoomServer; token: string; threadId: string }, rounds: number): Promise<{ total: number; ws: number }[]> {
  const port = Number(new URL(target.server.url).port);
  const relay = await countingRelay("::1", port);
  const origin = `http://[::1]:${port}`;
  const totals: { total: number; ws: number }[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const res = await fetch(`${target.server.url}/api/ui/login-link`, { method: "POST", headers: { authorization: `Bearer ${target.token}` } });
      const link = new URL(((await res.json()) as { url: string }).url);
      const context = await browser.newContext();
      const page = await context.newPage();
      const before = { ...relay.counted };
      await page.goto(`${origin}${link.pathname}${link.search}`);
      await page.getByRole("heading", { name: "Needs you" }).waitFor();
      await page.goto(`${origin}/t/${encodeURIComponent(target.threadId)}`);
      await page.locator(".timeline .item").first().waitFor({ timeout: 60_000 });
      await page.waitForLoadState("networkidle");
      await context.close();
      totals.push({ total: relay.counted.down - before.down, ws: relay.counted.ws - before.ws });
    }
    return totals;
  } finally {
    await relay.close();
  }
}

async function coldUiLoad(options: CompressionBenchOptions): Promise<void> {
  const browser = await launchChromium();
  const servers = [await uiServer(true, options.uiLines), await uiServer(false, options.uiLines)];
  try {
    const [compressed, plain] = [await coldLoads(browser, servers[0]!, options.rounds), await coldLoads(browser, servers[1]!, options.rounds)];
    const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
    const row = (name: string, loads: { total: number; ws: number }[], ratio: string) => {
      const total = median(loads.map((l) => l.total));
      const ws = median(loads.map((l) => l.ws));
      return [name, fmt(total), fmt(total - ws), fmt(ws), ratio];
    };
    const ratio = median(compressed.map((l) => l.total)) / median(plain.map((l) => l.total));
    printTable(`Cold web UI load, bytes the server sent (chromium, fresh context, sign-in + a thread of ${fmt(options.uiLines + 1)} items, median of ${options.rounds}) (goal: compressed ≤ 0.35 of uncompressed)`, [
      ["server", "bytes sent", "HTTP", "WebSocket", "ratio"],
      row("wire.compression false (baseline)", plain, "1.00"),
      row("wire.compression true", compressed, ratio.toFixed(3)),
    ]);
  } finally {
    await browser.close();
    for (const { server, stateDir } of servers) {
      await server.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  }
}
