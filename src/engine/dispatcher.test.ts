import { describe, expect, it } from "vitest";
import type { Command } from "../contracts/commands.js";
import type { DecidedCommit } from "../store/eventStore.js";
import { decide } from "../core/decider.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { Orchestrator, replay } from "./orchestrator.js";

const create = (n: number): Command => ({ type: "thread.create", commandId: `cmd:create:${n}`, data: { threadId: `thread:${n}`, projectId: "p", title: `T${n}` } });

describe("Dispatcher", () => {
  it("tells the outbox wake-up whether each commit wrote outbox effects (the worker is woken only then)", async () => {
    const store = new MemoryEventStore();
    const heard: boolean[] = [];
    // A decider that adds one effect to thread.create for thread:fx, and none otherwise.
    const orchestrator = await Orchestrator.open({
      store,
      wakeOutbox: (wroteEffects) => heard.push(wroteEffects),
      decide: (state, command, ctx) => {
        const decision = decide(state, command, ctx);
        if (decision.kind !== "accepted" || !command.commandId.startsWith("cmd:fx")) return decision;
        const effects = [{ kind: "test.effect", streamId: "thread:fx", payload: {}, replaySafe: true }];
        // cmd:fx-only writes the effect and no event, as provider-session.detach does.
        return command.commandId === "cmd:fx-only" ? { ...decision, events: [], effects } : { ...decision, effects };
      },
    });
    await orchestrator.dispatch(create(1));
    await orchestrator.dispatch({ type: "thread.create", commandId: "cmd:fx", data: { threadId: "thread:fx", projectId: "p" } });
    expect(await orchestrator.dispatch({ type: "thread.create", commandId: "cmd:fx-only", data: { threadId: "thread:fx2", projectId: "p" } })).toMatchObject({ status: "accepted", eventCount: 0 });
    expect(heard).toEqual([false, true, true]);
    expect(await store.listOutbox("pending")).toHaveLength(2);
    await orchestrator.close();
  });

  it("contains a decider failure to its own command: the rest of the group commit is accepted", async () => {
    const store = new MemoryEventStore();
    const orchestrator = await Orchestrator.open({ store });
    const broken = { type: "thread.no-such-command", commandId: "cmd:broken", data: {} } as unknown as Command;
    const [first, bad, last] = await Promise.all([
      orchestrator.dispatch({ type: "thread.create", commandId: "cmd:a", data: { threadId: "thread:a", projectId: "p" } }),
      orchestrator.dispatch(broken),
      orchestrator.dispatch({ type: "thread.create", commandId: "cmd:b", data: { threadId: "thread:b", projectId: "p" } }),
    ]);
    expect(first).toMatchObject({ status: "accepted", eventCount: 1 });
    expect(last).toMatchObject({ status: "accepted", eventCount: 1 });
    expect(bad).toMatchObject({ status: "rejected", rejection: { code: "orchestration_error" } });
    expect([...orchestrator.state.threads.keys()].sort()).toEqual(["thread:a", "thread:b"]);
    expect(await store.lookupReceipt("cmd:broken")).toMatchObject({ status: "rejected" });
    await orchestrator.close();
  });

  it("returns the stored receipt for a commandId repeated within one batch, writing once", async () => {
    const store = new MemoryEventStore();
    const orchestrator = await Orchestrator.open({ store });
    const create: Command = { type: "thread.create", commandId: "cmd:same", data: { threadId: "thread:x", projectId: "p" } };
    const [one, two] = await Promise.all([orchestrator.dispatch(create), orchestrator.dispatch(create)]);
    expect(two).toEqual(one);
    expect(await store.lastSequence()).toBe(1);
    await orchestrator.close();
  });

  it("group-commits the commands that queue while a commit runs: several commands, one transaction, every receipt answered", async () => {
    const store = new MemoryEventStore();
    const batches: number[] = [];
    const commit = store.commitDecided.bind(store);
    store.commitDecided = (decided: DecidedCommit) => {
      batches.push(decided.commandIds.length);
      return commit(decided);
    };
    const orchestrator = await Orchestrator.open({ store });
    const receipts = await Promise.all(Array.from({ length: 50 }, (_, n) => orchestrator.dispatch(create(n))));
    expect(receipts.every((receipt) => receipt.status === "accepted")).toBe(true);
    // The first command commits alone; the 49 that queued behind it share the next transaction.
    expect(batches).toEqual([1, 49]);
    expect(receipts.map((receipt) => (receipt.status === "accepted" ? receipt.sequence : -1))).toEqual(Array.from({ length: 50 }, (_, n) => n + 1));
    expect(orchestrator.state.threads.size).toBe(50);
    await orchestrator.close();
  });

  it("rebuilds the state from the log after a failed commit, so nothing the store refused stays in memory", async () => {
    const store = new MemoryEventStore();
    const orchestrator = await Orchestrator.open({ store });
    await orchestrator.dispatch(create(1));
    const commit = store.commitDecided.bind(store);
    let failNext = true;
    store.commitDecided = (decided: DecidedCommit) => {
      if (failNext) {
        failNext = false;
        // The decision runs (and folds its events into the state), then the write fails.
        decided.decide({ foreign: [], known: new Map(), head: 1 });
        return Promise.reject(new Error("disk full"));
      }
      return commit(decided);
    };
    await expect(orchestrator.dispatch(create(2))).rejects.toThrow("disk full");
    // The decision had folded thread 2 into the state; the rebuild took it out again.
    expect([...orchestrator.state.threads.keys()]).toEqual(["thread:1"]);
    expect(orchestrator.state.lastSequence).toBe(1);
    // The same command succeeds on retry, and the state equals a fresh replay of the log.
    expect(await orchestrator.dispatch(create(2))).toMatchObject({ status: "accepted", sequence: 2 });
    const fresh = await replay(store);
    expect([...orchestrator.state.threads.entries()]).toEqual([...fresh.threads.entries()]);
    await orchestrator.close();
  });
});
