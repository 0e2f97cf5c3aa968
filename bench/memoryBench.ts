import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Orchestrator } from "../src/engine/orchestrator.js";
import { SqliteEventStore } from "../src/store/sqlite/sqliteEventStore.js";
import { EVENTS_PER_THREAD, fillThreadLives } from "./restartBench.js";
import { fmt, printTable } from "./stats.js";

/**
 * Heap per finished thread (docs/benchmarks.md, "Memory per finished
 * thread"): an orchestrator opened on a log of `threads` finished threads
 * (the restart benchmark's thread lives: a run, its attempt, five turn items
 * of which four streamed), against one opened on an empty log, in the same
 * run, after a full GC each. A second figure drops the turn items from the
 * heap, to show what keeping them in the store instead would leave.
 */

function collector(): () => void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  return () => {
    for (let i = 0; i < 3; i++) gc();
  };
}

function heapUsed(gc: () => void): number {
  gc();
  return process.memoryUsage().heapUsed;
}

export async function runMemoryBench(options: { threads: number }): Promise<void> {
  const gc = collector();
  const dir = mkdtempSync(join(tmpdir(), "loom-memory-bench-"));
  try {
    const emptyPath = join(dir, "empty.db");
    const fullPath = join(dir, "loom.db");
    const filling = SqliteEventStore.open(fullPath);
    await fillThreadLives(filling, 0, options.threads);
    await filling.close();

    const base = heapUsed(gc);
    const empty = await Orchestrator.open({ store: SqliteEventStore.open(emptyPath), snapshotEvery: null });
    const emptyHeap = heapUsed(gc) - base;
    await empty.close();

    const before = heapUsed(gc);
    const loaded = await Orchestrator.open({ store: SqliteEventStore.open(fullPath), snapshotEvery: null });
    if (loaded.state.threads.size !== options.threads || loaded.state.lastSequence !== options.threads * EVENTS_PER_THREAD) throw new Error("the orchestrator folded the wrong log");
    const fullHeap = heapUsed(gc) - before;
    const items = [...loaded.state.turnItems.values()].reduce((count, list) => count + list.length, 0);
    loaded.state.turnItems.clear();
    loaded.state.itemThreads.clear();
    const withoutItems = heapUsed(gc) - before;
    await loaded.close();

    const perThread = (bytes: number): string => fmt(Math.round((bytes - emptyHeap) / options.threads));
    printTable(`Memory per finished thread (${fmt(options.threads)} threads, ${fmt(items)} turn items, heap after a full GC)`, [
      ["orchestrator state", "heap bytes", "bytes per thread"],
      ["empty log (baseline)", fmt(emptyHeap), "-"],
      ["all threads, turn items in the heap (today)", fmt(fullHeap), perThread(fullHeap)],
      ["same, turn items dropped from the heap", fmt(withoutItems), perThread(withoutItems)],
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
