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
 * run, after a full GC each. The first figure keeps every thread's turn items
 * in the heap (an unbounded hot set, measured after reading every timeline:
 * what the state held before items moved to the store); the second is the
 * orchestrator as it starts and runs, which keeps only live and recently
 * used threads' items and reads the rest from the store.
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

    // Every thread's timeline is still there: read from the heap or the store.
    const readAll = (loaded: Orchestrator): number => {
      let items = 0;
      for (const threadId of loaded.state.threads.keys()) items += loaded.timeline.size(threadId) > 0 ? loaded.timeline.items(threadId).length : 0;
      return items;
    };
    /** Heap after opening; with `readFirst`, after reading every timeline too (an unbounded hot set then keeps every item). */
    const open = async (hotThreads: number | undefined, readFirst: boolean): Promise<{ heap: number; items: number }> => {
      const before = heapUsed(gc);
      const loaded = await Orchestrator.open({ store: SqliteEventStore.open(fullPath), snapshotEvery: null, hotThreads });
      if (loaded.state.threads.size !== options.threads || loaded.state.lastSequence !== options.threads * EVENTS_PER_THREAD) throw new Error("the orchestrator folded the wrong log");
      const read = readFirst ? readAll(loaded) : 0;
      const heap = heapUsed(gc) - before;
      const items = readFirst ? read : readAll(loaded);
      await loaded.close();
      return { heap, items };
    };
    const everything = await open(Number.MAX_SAFE_INTEGER, true);
    const running = await open(undefined, false);
    if (running.items !== everything.items) throw new Error("the orchestrator lost turn items");

    const perThread = (bytes: number): string => fmt(Math.round((bytes - emptyHeap) / options.threads));
    printTable(`Memory per finished thread (${fmt(options.threads)} threads, ${fmt(everything.items)} turn items, heap after a full GC)`, [
      ["orchestrator state", "heap bytes", "bytes per thread", "vs all items in the heap"],
      ["empty log (baseline)", fmt(emptyHeap), "-", "-"],
      ["every thread's turn items in the heap (as before)", fmt(everything.heap), perThread(everything.heap), "1.000"],
      ["turn items in the store, live and recent threads' in the heap", fmt(running.heap), perThread(running.heap), (running.heap / everything.heap).toFixed(3)],
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
