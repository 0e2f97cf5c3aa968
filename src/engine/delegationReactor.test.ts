import { describe, expect, it } from "vitest";
import type { DomainEvent } from "../contracts/events.js";
import { delegate, finish, rootWithRun, taskIds } from "../core/testing/delegationFixtures.js";
import { cmd } from "../core/testing/fixtures.js";
import { TEST_PROVIDERS } from "../core/testing/scenario.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { DelegationReactor } from "./delegationReactor.js";
import { Orchestrator } from "./orchestrator.js";

/** The delegation reactor follows the committed log and catches up on what a restart left behind. */

async function seeded(history: readonly DomainEvent[]): Promise<MemoryEventStore> {
  const store = new MemoryEventStore();
  await store.commit([
    { receipt: { status: "accepted", commandId: "cmd:seed", commandType: "test.seed", acceptedAt: new Date(0).toISOString() }, events: history.map((event) => ({ ...event })), outbox: [] },
  ]);
  return store;
}

function open(store: MemoryEventStore): Promise<Orchestrator> {
  return Orchestrator.open({ store, providers: (id) => TEST_PROVIDERS[id] ?? null });
}

/** Resolve once `check` holds for the state, checked after every committed event. */
function whenState(orchestrator: Orchestrator, check: () => boolean): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve) => {
    const subscription = orchestrator.follow(orchestrator.state.lastSequence, () => {
      if (!check()) return;
      subscription.close();
      resolve();
    });
  });
}

describe("DelegationReactor", () => {
  it("delivers a result that became pending while no reactor ran (a restart) when it starts", async () => {
    const { taskId, childThreadId, childRunId } = taskIds("lost");
    const store = await seeded(rootWithRun());
    const before = await open(store);
    for (const command of [delegate("lost"), cmd("provider-runtime.turn-started", { threadId: childThreadId, runId: childRunId }), ...finish(childThreadId, childRunId, "the answer")]) {
      expect(await before.dispatch(command)).toMatchObject({ status: "accepted" });
    }
    // No reactor was running: the result is pending and the parent was never told.
    expect(before.state.tasks.get(taskId)).toMatchObject({ completionDelivery: "pending", notices: [] });

    const after = await open(store);
    const reactor = new DelegationReactor(after);
    await reactor.start();
    await whenState(after, () => after.state.tasks.get(taskId)?.completionDelivery === "delivered");
    expect(after.state.tasks.get(taskId)!.notices.map((notice) => notice.kind)).toEqual(["completion"]);
    // Starting again (another restart) changes nothing: the delivery is no longer pending.
    const sequence = after.state.lastSequence;
    const again = new DelegationReactor(after);
    await again.start();
    await after.dispatch({ type: "thread.create", commandId: "cmd:fence", data: { threadId: "thread:fence", projectId: "p" } });
    expect(after.state.lastSequence).toBe(sequence + 1);
    reactor.stop();
    again.stop();
  });

  it("follows the log: a result committed after start is delivered, unless a recorded wait holds the task", async () => {
    const store = await seeded(rootWithRun());
    const orchestrator = await open(store);
    const reactor = new DelegationReactor(orchestrator);
    await reactor.start();

    const held = taskIds("held");
    expect(await orchestrator.dispatch(delegate("held"))).toMatchObject({ status: "accepted" });
    const hold = { waitId: "wait:1", taskIds: [held.taskId] };
    expect(await orchestrator.dispatch(cmd("delegated-task.wait-hold", { ...hold, runId: null, holder: "node:a" }))).toMatchObject({ status: "accepted" });
    for (const command of [cmd("provider-runtime.turn-started", { threadId: held.childThreadId, runId: held.childRunId }), ...finish(held.childThreadId, held.childRunId, "mine")]) {
      await orchestrator.dispatch(command);
    }
    expect(orchestrator.state.tasks.get(held.taskId)).toMatchObject({ completionDelivery: "pending", notices: [] });
    // The wait ends without taking the result: the reactor delivers it then.
    expect(await orchestrator.dispatch(cmd("delegated-task.wait-release", { ...hold, took: [], owed: [] }))).toMatchObject({ status: "accepted" });
    await whenState(orchestrator, () => orchestrator.state.tasks.get(held.taskId)?.completionDelivery === "delivered");
    reactor.stop();
  });
});
