import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewEvent } from "../contracts/envelopes.js";
import { toDomainEvent } from "../contracts/events.js";
import { existing } from "../core/testing/fixtures.js";
import { aProviderThread, aRun, aUserMessage, anItem, itemEvent, runCreated, runUpdated } from "../core/testing/runFixtures.js";
import { evolve, initialState, type OrchestrationState } from "../core/state.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import { HotTurnItems } from "./hotTurnItems.js";
import { Orchestrator } from "./orchestrator.js";
import { STATE_SNAPSHOT_VERSION, decodeState } from "./stateSnapshot.js";

/**
 * Turn items leave memory with their thread's run: on a real SQLite file an
 * orchestrator keeps the items of live threads and of the most recently used
 * idle ones, reads every other thread's items from the store, and reads the
 * same timelines as a fold that keeps every item in memory, also after a
 * restart from a snapshot, which then holds no items.
 */

const AT = "2026-01-01T00:00:00.000Z";
const THREADS = 12;

/** A thread with a user message and three assistant messages streamed in two updates; its run ended unless `live`. */
function threadLife(n: number, live = false): NewEvent[] {
  const thread = aProviderThread(`thread:hot-${n}`, "steerable", { title: `Thread ${n}`, createdAt: AT, updatedAt: AT });
  const run = aRun(thread, { id: `run:hot-${n}`, messageId: `message:hot-${n}` });
  const events: NewEvent[] = [existing(thread), runCreated(run), itemEvent(aUserMessage(thread.id, run.id, 0, `item:hot-${n}-0`, `message:hot-${n}`, `Task ${n}`))];
  for (let position = 1; position <= 3; position++) {
    for (const streaming of [true, false]) {
      const body = { type: "assistant_message" as const, messageId: `message:hot-${n}-${position}`, text: `answer ${position} of ${n}${streaming ? "" : ", done"}`, streaming, createdBy: "agent" as const, creationSource: "provider" as const };
      events.push(itemEvent(anItem(thread.id, run.id, position, `item:hot-${n}-${position}`, body)));
    }
  }
  if (!live) events.push(runUpdated({ ...run, status: "completed", endReason: "completed", endedAt: AT }));
  return events;
}

async function fill(store: SqliteEventStore): Promise<void> {
  for (let n = 0; n < THREADS; n++) {
    await store.commit([{ receipt: { status: "accepted", commandId: `cmd:hot-${n}`, commandType: "test.fill", acceptedAt: AT }, events: threadLife(n, n === 0), outbox: [] }]);
  }
}

/** The state a fold that keeps every item in memory reaches. */
async function foldEverything(store: SqliteEventStore): Promise<OrchestrationState> {
  const state = initialState();
  for (const stored of await store.readAll(0)) {
    evolve(state, toDomainEvent(stored));
    state.lastSequence = stored.sequence;
  }
  return state;
}

/** The thread ids whose items are in memory now (Map's own view, which never reads the store). */
function inMemory(state: Readonly<OrchestrationState>): string[] {
  return [...Map.prototype.keys.call(state.turnItems)] as string[];
}

function expectSameTimelines(orchestrator: Orchestrator, everything: OrchestrationState): void {
  for (let n = 0; n < THREADS; n++) {
    const threadId = `thread:hot-${n}`;
    expect(orchestrator.timeline.items(threadId)).toEqual(everything.turnItems.get(threadId));
    expect(orchestrator.timeline.item(threadId, `item:hot-${n}-2`)).toEqual(everything.turnItems.get(threadId)![2]);
    expect(orchestrator.timeline.latestAssistantText(threadId, `run:hot-${n}`)).toBe(`answer 3 of ${n}, done`);
  }
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-hot-items-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("turn items in memory only while needed", () => {
  it("keeps live threads and the most recently used idle ones, and reads the rest from the store", async () => {
    const path = join(dir, "loom.db");
    const store = SqliteEventStore.open(path);
    await fill(store);
    const everything = await foldEverything(store);
    await store.close();

    const orchestrator = await Orchestrator.open({ store: SqliteEventStore.open(path), snapshotEvery: null, hotThreads: 2 });
    expect(orchestrator.state.turnItems).toBeInstanceOf(HotTurnItems);
    // The replay skipped the item events (the store holds the items): none in memory yet.
    expect(inMemory(orchestrator.state)).toEqual([]);

    expectSameTimelines(orchestrator, everything);
    // Reading every thread loaded each; the next commit trims back, keeping the live thread.
    expect(inMemory(orchestrator.state).length).toBe(THREADS);
    await orchestrator.dispatch({ type: "thread.create", commandId: "cmd:another", data: { threadId: "thread:another", projectId: "p", title: "Another" } });
    const afterCommit = inMemory(orchestrator.state);
    expect(afterCommit).toContain("thread:hot-0");
    expect(afterCommit).toEqual(expect.arrayContaining([`thread:hot-${THREADS - 2}`, `thread:hot-${THREADS - 1}`]));
    expect(afterCommit.length).toBe(3);
    expect(orchestrator.state.itemThreads.get(`item:hot-3-1`)).toBe("thread:hot-3");
    await orchestrator.close();
  });

  it("leaves the items out of the snapshot and reads them from the store after a restart", async () => {
    const path = join(dir, "loom.db");
    const store = SqliteEventStore.open(path);
    await fill(store);
    const everything = await foldEverything(store);
    await store.close();

    const first = await Orchestrator.open({ store: SqliteEventStore.open(path), hotThreads: 2 });
    await first.close();
    const check = SqliteEventStore.open(path);
    const saved = decodeState((await check.loadSnapshot(STATE_SNAPSHOT_VERSION))!.body);
    await check.close();
    expect([saved.turnItems.size, saved.itemThreads.size, saved.threads.size]).toEqual([0, 0, THREADS]);

    const second = await Orchestrator.open({ store: SqliteEventStore.open(path), hotThreads: 2 });
    expect(second.restored).toMatchObject({ snapshotSequence: everything.lastSequence, replayed: 0 });
    expect(inMemory(second.state)).toEqual([]);
    expectSameTimelines(second, everything);
    await second.close();
  });
});
