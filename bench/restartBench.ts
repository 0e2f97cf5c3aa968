import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NewEvent } from "../src/contracts/envelopes.js";
import type { AppThread } from "../src/contracts/thread.js";
import { existing } from "../src/core/testing/fixtures.js";
import { aProviderThread, aRun, aUserMessage, anAttempt, anItem, attemptCreated, attemptUpdated, itemEvent, runCreated, runUpdated } from "../src/core/testing/runFixtures.js";
import { Orchestrator } from "../src/engine/orchestrator.js";
import { replayAll } from "../src/engine/restore.js";
import { STATE_SNAPSHOT_VERSION } from "../src/engine/stateSnapshot.js";
import type { CommitEntry } from "../src/store/eventStore.js";
import { SqliteEventStore } from "../src/store/sqlite/sqliteEventStore.js";
import { fmt, now, printTable, seconds } from "./stats.js";

/**
 * Restart at a large log (docs/benchmarks.md, "Restart"): the time from
 * opening the SQLite file to an orchestrator ready for commands, from a
 * snapshot against a full replay of the same log, in the same run. The log is
 * finished threads, each 50 events: created, a run and its attempt, a user
 * message, four assistant messages streamed in ten updates each, the run's
 * end and four title changes.
 */

export const EVENTS_PER_THREAD = 50;
const AT = "2026-01-01T00:00:00.000Z";

function threadLife(n: number): NewEvent[] {
  const thread: AppThread = aProviderThread(`thread:restart-${n}`, "steerable", { title: `Thread ${n}`, createdAt: AT, updatedAt: AT });
  const run = aRun(thread, { id: `run:restart-${n}`, messageId: `message:restart-${n}` });
  const attempt = anAttempt(run, 1, null, AT);
  const events: NewEvent[] = [existing(thread), runCreated(run), attemptCreated(attempt)];
  events.push(itemEvent(aUserMessage(thread.id, run.id, 0, `item:restart-${n}-0`, `message:restart-${n}`, `Please look at issue ${n} and fix it.`)));
  for (let item = 1; item <= 4; item++) {
    for (let update = 1; update <= 10; update++) {
      const text = `step ${item} of thread ${n}: `.concat("reading the code and thinking ".repeat(update));
      const body = { type: "assistant_message" as const, messageId: `message:restart-${n}-${item}`, text, streaming: update < 10, createdBy: "agent" as const, creationSource: "provider" as const };
      events.push(itemEvent(anItem(thread.id, run.id, item, `item:restart-${n}-${item}`, body)));
    }
  }
  events.push(attemptUpdated({ ...attempt, status: "completed", endedAt: AT }), runUpdated({ ...run, status: "completed", endReason: "completed", endedAt: AT }));
  for (let k = 1; k <= 4; k++) events.push({ type: "thread.metadata-updated", streamId: thread.id, data: { thread: { ...thread, title: `Thread ${n} (${k})` } } });
  if (events.length !== EVENTS_PER_THREAD) throw new Error(`a thread's life is ${events.length} events, not ${EVENTS_PER_THREAD}`);
  return events;
}

/** Append `threads` thread lives, numbered from `from`, in transactions of 200 threads. */
export async function fillThreadLives(store: SqliteEventStore, from: number, threads: number): Promise<void> {
  for (let i = from; i < from + threads; i += 200) {
    const entries: CommitEntry[] = [];
    for (let n = i; n < Math.min(from + threads, i + 200); n++) {
      entries.push({ receipt: { status: "accepted", commandId: `cmd:restart-${n}`, commandType: "bench.fill", acceptedAt: AT }, events: threadLife(n), outbox: [] });
    }
    await store.commit(entries);
  }
}

/** The longest the event loop went without running a timer while `work` ran, in seconds. */
async function longestPause(work: () => Promise<void>): Promise<number> {
  let longest = 0n;
  let last = now();
  let running = true;
  const tick = (): void => {
    const at = now();
    if (at - last > longest) longest = at - last;
    last = at;
    if (running) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  await work();
  running = false;
  tick();
  return Number(longest) / 1e9;
}

async function timedOpen(path: string): Promise<{ seconds: number; orchestrator: Orchestrator }> {
  const start = now();
  const orchestrator = await Orchestrator.open({ store: SqliteEventStore.open(path) });
  return { seconds: seconds(start), orchestrator };
}

export async function runRestartBench(options: { events: number; tail: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "loom-restart-bench-"));
  try {
    const path = join(dir, "loom.db");
    const threads = Math.floor(options.events / EVENTS_PER_THREAD);
    const tailThreads = Math.floor(options.tail / EVENTS_PER_THREAD);
    let store = SqliteEventStore.open(path);
    await fillThreadLives(store, 0, threads - tailThreads);
    await store.close();

    // A first start replays everything (there is no snapshot yet); a save as a running server makes one.
    const first = await timedOpen(path);
    let start = now();
    const savePause = await longestPause(() => first.orchestrator.snapshot());
    const saveSeconds = seconds(start);
    await first.orchestrator.close();

    // The worst case before the next periodic save: the snapshot plus `tail` events after it.
    store = SqliteEventStore.open(path);
    await fillThreadLives(store, threads - tailThreads, tailThreads);
    const snapshotBytes = (await store.loadSnapshot(STATE_SNAPSHOT_VERSION))?.body.byteLength ?? 0;
    await store.close();
    const withTail = await timedOpen(path);
    if (withTail.orchestrator.restored.replayed !== tailThreads * EVENTS_PER_THREAD) throw new Error("the restart did not replay just the tail");
    await withTail.orchestrator.close();

    // After a clean shutdown: the snapshot is current.
    const clean = await timedOpen(path);
    if (clean.orchestrator.restored.replayed !== 0 || clean.orchestrator.state.lastSequence !== threads * EVENTS_PER_THREAD) throw new Error("the clean restart replayed events");
    const threadCount = clean.orchestrator.state.threads.size;
    await clean.orchestrator.close();

    // Baseline: the same log replayed whole, as a start without a snapshot does.
    store = SqliteEventStore.open(path);
    start = now();
    const full = await replayAll(store);
    const fullSeconds = seconds(start);
    if (full.state.lastSequence !== threads * EVENTS_PER_THREAD || full.state.threads.size !== threadCount) throw new Error("the full replay folded the wrong log");
    await store.close();

    const ratio = (s: number): string => (s / fullSeconds).toFixed(3);
    printTable(`Restart (${fmt(threads * EVENTS_PER_THREAD)} events, ${fmt(threadCount)} finished threads; snapshot ${fmt(Math.round(snapshotBytes / 1024))} KB)`, [
      ["start-up", "seconds", "vs full replay"],
      ["full replay of the log (baseline)", fullSeconds.toFixed(2), "1.000"],
      [`snapshot + ${fmt(tailThreads * EVENTS_PER_THREAD)}-event tail`, withTail.seconds.toFixed(2), ratio(withTail.seconds)],
      ["snapshot, no tail (after a clean shutdown)", clean.seconds.toFixed(2), ratio(clean.seconds)],
      ["saving the snapshot (copy, encode, write)", saveSeconds.toFixed(2), ratio(saveSeconds)],
      ["longest event-loop pause while saving", savePause.toFixed(2), ratio(savePause)],
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
