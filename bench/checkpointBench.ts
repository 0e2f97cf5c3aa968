import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommitEntry } from "../src/store/eventStore.js";
import { SqliteEventStore } from "../src/store/sqlite/sqliteEventStore.js";
import { now, percentile, printTable } from "./stats.js";

/**
 * WAL checkpoints on a worker thread against SQLite's own, inside the commit
 * that crosses the threshold (src/store/sqlite/walCheckpointer.ts). One
 * writer commits `commits` single-event commands one after another, each with
 * a receipt and an event of about 600 bytes, like a provider's turn item,
 * letting the event loop turn between them as a server's requests do; the
 * figure is how long each commit call held the event loop. Baseline: the same
 * run with background checkpoints off. The tail is what moves: SQLite's
 * checkpoint runs every ~40 MB of WAL and takes its time out of one commit.
 */
const BODY = "x".repeat(600);
/** A commit this long is a stall a client notices; the time in them is the figure that moves. */
const STALL_MS = 5;
const LONG_MS = 50;

function entry(i: number): CommitEntry {
  return {
    receipt: { status: "accepted", commandId: `cmd:bench:${i}`, commandType: "bench.item", acceptedAt: new Date().toISOString() },
    events: [{ type: "bench.item", streamId: `thread:${i % 64}`, data: { n: i, body: BODY } }],
    outbox: [],
  };
}

interface Timings {
  readonly sorted: readonly number[];
  readonly totalMs: number;
  readonly checkpoints: number;
}

async function commitAll(file: string, commits: number, background: boolean): Promise<Timings> {
  const store = SqliteEventStore.open(file, background ? {} : { backgroundCheckpoints: false });
  const durations: number[] = [];
  let checkpoints = 0;
  const count = (): void => {
    void store.checkpointer?.nextCheckpoint().then(() => {
      checkpoints += 1;
      count();
    });
  };
  count();
  try {
    for (let i = 0; i < commits; i++) {
      const started = now();
      await store.commit([entry(i)]);
      durations.push(Number(now() - started) / 1e6);
      // A server's commands arrive from I/O callbacks: the loop turns between them (and hears the worker).
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    await store.close();
  }
  return { sorted: durations.sort((a, b) => a - b), totalMs: durations.reduce((a, b) => a + b, 0), checkpoints };
}

export async function runCheckpointBench(options: { commits: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "loom-bench-checkpoint-"));
  try {
    const off = await commitAll(join(dir, "off.db"), options.commits, false);
    const on = await commitAll(join(dir, "on.db"), options.commits, true);
    const stalls = (t: Timings, overMs: number): number[] => t.sorted.filter((ms) => ms >= overMs);
    const stalledMs = (t: Timings): number => stalls(t, STALL_MS).reduce((a, b) => a + b, 0);
    const row = (name: string, t: Timings, base: Timings): string[] => [
      name,
      percentile(t.sorted, 50).toFixed(3),
      percentile(t.sorted, 99.9).toFixed(2),
      t.sorted[t.sorted.length - 1]!.toFixed(1),
      String(stalls(t, LONG_MS).length),
      (stalledMs(t) / 1000).toFixed(2),
      (percentile(t.sorted, 99.9) / percentile(base.sorted, 99.9)).toFixed(2),
      (stalledMs(t) / stalledMs(base)).toFixed(2),
    ];
    printTable(`${options.commits.toLocaleString("en-US")} commits one after another, ms each call held the event loop`, [
      ["checkpoints", "p50", "p99.9", "max", `commits ≥ ${LONG_MS} ms`, `s in commits ≥ ${STALL_MS} ms`, "p99.9 ratio", "stalled ratio"],
      row("SQLite's, in the commit (baseline)", off, off),
      row(`worker thread (${on.checkpoints} run)`, on, off),
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
