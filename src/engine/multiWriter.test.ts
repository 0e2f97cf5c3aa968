import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Command } from "../contracts/commands.js";
import { SqliteEventStore } from "../store/sqlite/sqliteEventStore.js";
import { Orchestrator, replay } from "./orchestrator.js";

/**
 * Two orchestrators writing one database (two Loom nodes, here two
 * connections to one SQLite file): each decides on the latest log, folds in
 * the other's commits, and tells its followers about them.
 */

let dir: string;
let nodes: Orchestrator[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-multi-"));
});
afterEach(async () => {
  for (const node of nodes) await node.close();
  nodes = [];
  rmSync(dir, { recursive: true, force: true });
});

async function node(pollIntervalMs = 5): Promise<Orchestrator> {
  const opened = await Orchestrator.open({ store: SqliteEventStore.open(join(dir, "loom.db"), { pollIntervalMs }) });
  nodes.push(opened);
  return opened;
}

const create = (id: string): Command => ({ type: "thread.create", commandId: `cmd:create:${id}`, data: { threadId: `thread:${id}`, projectId: "p", title: id } });

describe("several writers on one log", () => {
  it("a decision on one node sees what another committed just before", async () => {
    const [a, b] = [await node(), await node()];
    expect(await b.dispatch(create("x"))).toMatchObject({ status: "accepted", sequence: 1 });
    // A has not heard of thread x yet when it decides: the decision folds it in under the lock.
    const archived = await a.dispatch({ type: "thread.archive", commandId: "cmd:archive:x", data: { threadId: "thread:x" } });
    expect(archived).toMatchObject({ status: "accepted", sequence: 2 });
    expect(a.state.threads.get("thread:x")?.archivedAt).not.toBeNull();
  });

  it("syncWithLog folds what another node committed without waiting for the tail (an effect claimed from a shared outbox)", async () => {
    // A's tail polls once a minute: only syncWithLog can bring B's commits in this test's time.
    const [a, b] = [await node(60_000), await node()];
    await b.dispatch(create("y"));
    await b.dispatch(create("z"));
    expect(a.state.threads.has("thread:y")).toBe(false);
    await a.syncWithLog();
    expect([...a.state.threads.keys()].sort()).toEqual(["thread:y", "thread:z"]);
    expect(a.state.lastSequence).toBe(2);
  });

  it("answers a command another node already committed with its receipt, writing nothing", async () => {
    const [a, b] = [await node(), await node()];
    const first = await a.dispatch(create("same"));
    const again = await b.dispatch(create("same"));
    expect(again).toEqual(first);
    expect(b.state.threads.has("thread:same")).toBe(true);
    expect(b.state.lastSequence).toBe(1);
  });

  it("concurrent commands on two nodes land gap-free; both states equal a fresh replay; followers hear every commit once, in order", async () => {
    const [a, b] = [await node(), await node()];
    const heard: number[] = [];
    const following = a.follow(0, (event) => heard.push(event.sequence));
    await Promise.all([
      ...Array.from({ length: 40 }, (_, n) => a.dispatch(create(`a${n}`))),
      ...Array.from({ length: 40 }, (_, n) => b.dispatch(create(`b${n}`))),
    ]);
    const reader = SqliteEventStore.open(join(dir, "loom.db"));
    const fresh = await replay(reader);
    await reader.close();
    expect(fresh.lastSequence).toBe(80);
    // B's last commits reach A through the log feed: wait for them (a fact, with a deadline), then compare.
    const deadline = Date.now() + 10_000;
    while (heard.length < 80 || a.state.lastSequence < 80 || b.state.lastSequence < 80) {
      if (Date.now() > deadline) throw new Error(`followers heard ${heard.length} of 80 events`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(heard).toEqual(Array.from({ length: 80 }, (_, n) => n + 1));
    for (const orchestrator of [a, b]) {
      expect(orchestrator.state.lastSequence).toBe(80);
      expect([...orchestrator.state.threads.keys()].sort()).toEqual([...fresh.threads.keys()].sort());
    }
    following.close();
  });
});
