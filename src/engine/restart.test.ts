import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import { DIST_TESTKIT, waitForExit } from "../testkit/loomProcess.js";
import { Orchestrator, replay } from "./orchestrator.js";
import { STATE_SNAPSHOT_VERSION, encodeState } from "./stateSnapshot.js";
import { shellSnapshot } from "./projections.js";
import { ALL_PROJECTS, ThreadListKind } from "./threadIndex.js";

/**
 * Start-up from a state snapshot on a real SQLite file: the orchestrator
 * saves snapshots as the log grows and on close, loads the latest one and
 * replays only the tail, and falls back to a full replay when the snapshot
 * is of another state version, does not decode, or was being written when
 * the process was killed.
 */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-restart-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function createThreads(orchestrator: Orchestrator, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const threadId = `thread:${i}`;
    await orchestrator.dispatch({ type: "thread.create", commandId: `cmd:create:${i}`, data: { threadId, projectId: i % 2 === 0 ? "even" : "odd", title: `T${i}` } });
    if (i % 3 === 0) await orchestrator.dispatch({ type: "thread.archive", commandId: `cmd:archive:${i}`, data: { threadId } });
    if (i % 5 === 0) await orchestrator.dispatch({ type: "thread.pin", commandId: `cmd:pin:${i}`, data: { threadId } });
  }
}

/** What a restart must reproduce: the state, and the thread lists kept beside it. */
function view(orchestrator: Orchestrator): unknown {
  const ids = (project: string, kind: ThreadListKind): string[] => [...orchestrator.threads.list(project, kind).newestFirst()].map((entry) => entry.id);
  return {
    shell: shellSnapshot(orchestrator.state, { includeArchived: true }),
    main: ids(ALL_PROJECTS, ThreadListKind.main),
    even: ids("even", ThreadListKind.all),
    pinned: [...orchestrator.threads.pinned].sort(),
    unarchived: [...orchestrator.threads.unarchived.newestFirst()].map((entry) => entry.id),
  };
}

describe("restart from a state snapshot", () => {
  it("saves snapshots as the log grows, loads the latest and replays only the tail", async () => {
    const path = join(dir, "loom.db");
    const first = await Orchestrator.open({ store: SqliteEventStore.open(path), snapshotEvery: 10 });
    expect(first.restored).toEqual({ snapshotSequence: null, replayed: 0, discarded: null });
    await createThreads(first, 0, 30);
    // Ask once more so the test waits on the periodic save that may be in flight.
    await first.snapshot();
    const head = first.state.lastSequence;
    const before = view(first);
    const store = SqliteEventStore.open(path);
    const saved = await store.loadSnapshot(STATE_SNAPSHOT_VERSION);
    expect(saved?.sequence).toBe(head);
    await store.close();
    // Fewer events than `snapshotEvery` after the last snapshot, then the process ends without close (as in a crash).
    await createThreads(first, 30, 4);
    expect(first.state.lastSequence - head).toBeLessThan(10);
    const after = view(first);
    await first["store"].close();

    const second = await Orchestrator.open({ store: SqliteEventStore.open(path), snapshotEvery: 10 });
    expect(second.restored.snapshotSequence).toBe(head);
    expect(second.restored.replayed).toBe(second.state.lastSequence - head);
    expect(second.restored.replayed).toBeGreaterThan(0);
    expect(view(second)).toEqual(after);
    expect(before).not.toEqual(after);
    const full = await replay(second["store"]);
    expect(second.state).toStrictEqual(full);
    // It keeps taking commands where the log left off.
    await createThreads(second, 40, 1);
    await second.close();
  });

  it("saves a snapshot on close, so a clean restart replays nothing", async () => {
    const path = join(dir, "loom.db");
    const first = await Orchestrator.open({ store: SqliteEventStore.open(path) });
    await createThreads(first, 0, 12);
    const before = view(first);
    const head = first.state.lastSequence;
    await first.close();
    const second = await Orchestrator.open({ store: SqliteEventStore.open(path) });
    expect(second.restored).toEqual({ snapshotSequence: head, replayed: 0, discarded: null });
    expect(view(second)).toEqual(before);
    await second.close();
  });

  it("ignores a snapshot of an older state shape and replays the whole log", async () => {
    const path = join(dir, "loom.db");
    const first = await Orchestrator.open({ store: SqliteEventStore.open(path), snapshotEvery: null });
    await createThreads(first, 0, 9);
    const before = view(first);
    const head = first.state.lastSequence;
    await first.close();
    const store = SqliteEventStore.open(path);
    const { turnItems: _gone, ...olderShape } = (await replay(store)) as unknown as Record<string, unknown>;
    await store.saveSnapshot({ version: "state-from-an-older-build", sequence: head, body: encodeState(olderShape as never) });
    const second = await Orchestrator.open({ store, snapshotEvery: null });
    expect(second.restored).toEqual({ snapshotSequence: null, replayed: head, discarded: null });
    expect(view(second)).toEqual(before);
    await second.close();
  });

  it("discards a snapshot of this version that does not decode, and says why", async () => {
    const path = join(dir, "loom.db");
    const first = await Orchestrator.open({ store: SqliteEventStore.open(path), snapshotEvery: null });
    await createThreads(first, 0, 6);
    const before = view(first);
    const head = first.state.lastSequence;
    await first.close();
    const store = SqliteEventStore.open(path);
    await store.saveSnapshot({ version: STATE_SNAPSHOT_VERSION, sequence: head, body: new Uint8Array([0xff, 0x0f, 0x6f, 0x22]) });
    const second = await Orchestrator.open({ store, snapshotEvery: null });
    expect(second.restored.snapshotSequence).toBeNull();
    expect(second.restored.replayed).toBe(head);
    expect(second.restored.discarded).toMatch(/snapshot/);
    expect(view(second)).toEqual(before);
    await second.close();
  });

  it("starts cleanly after a kill -9 while snapshots were being written", async () => {
    const path = join(dir, "loom.db");
    const child = spawn(process.execPath, [join(DIST_TESTKIT, "snapshotCrashWriter.js"), path], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("snapshot 8\n")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`writer exited early (${code}): ${stderr}`)));
    });
    child.kill("SIGKILL");
    expect((await waitForExit(child)).signal).toBe("SIGKILL");

    const orchestrator = await Orchestrator.open({ store: SqliteEventStore.open(path), snapshotEvery: null });
    expect(orchestrator.restored.discarded).toBeNull();
    expect(orchestrator.restored.snapshotSequence).toBeGreaterThanOrEqual(800);
    expect(orchestrator.state).toStrictEqual(await replay(orchestrator["store"]));
    expect(orchestrator.state.threads.size).toBe(orchestrator.state.lastSequence);
    await orchestrator.close();
  });
});
