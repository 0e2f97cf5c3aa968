import { describe, expect, it } from "vitest";
import type { Command } from "../contracts/commands.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { Orchestrator } from "./orchestrator.js";

describe("Dispatcher", () => {
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
});
