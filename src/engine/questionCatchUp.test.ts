import { describe, expect, it } from "vitest";
import type { DomainEvent } from "../contracts/events.js";
import { ROOT, ROOT_RUN, asks, delegate, rootWithRun, taskIds, turnEnds } from "../core/testing/delegationFixtures.js";
import { cmd } from "../core/testing/fixtures.js";
import { TEST_PROVIDERS } from "../core/testing/scenario.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { DelegationReactor } from "./delegationReactor.js";
import { Orchestrator } from "./orchestrator.js";

/**
 * Spec 000: a parent still blocked in a delegate_task wait gets a blocking
 * question through that wait; when the provider cut the wait short, a
 * still-pending question wakes the parent once its run completes, fails or
 * settles its background work; a stop or an interrupt cancels the catch-up.
 */

async function setup(): Promise<{ orchestrator: Orchestrator; reactor: DelegationReactor; taskId: string; requestId: string }> {
  const store = new MemoryEventStore();
  const history: DomainEvent[] = rootWithRun("plain");
  await store.commit([{ receipt: { status: "accepted", commandId: "cmd:seed", commandType: "test.seed", acceptedAt: new Date(0).toISOString() }, events: history.map((event) => ({ ...event })), outbox: [] }]);
  const orchestrator = await Orchestrator.open({ store, providers: (id) => TEST_PROVIDERS[id] ?? null });
  const reactor = new DelegationReactor(orchestrator);
  await reactor.start();
  const { taskId, childThreadId, childRunId } = taskIds("q");
  // The parent waits on the task (a recorded hold on its run); its child asks a blocking question meanwhile.
  expect(await orchestrator.dispatch(delegate("q"))).toMatchObject({ status: "accepted" });
  const hold = { waitId: "wait:q", taskIds: [taskId] };
  expect(await orchestrator.dispatch(cmd("delegated-task.wait-hold", { ...hold, runId: ROOT_RUN, holder: "node:a" }))).toMatchObject({ status: "accepted" });
  for (const command of [cmd("provider-runtime.turn-started", { threadId: childThreadId, runId: childRunId }), asks(childThreadId, childRunId, "native-q", "Which branch?")]) {
    expect(await orchestrator.dispatch(command)).toMatchObject({ status: "accepted" });
  }
  const requestId = [...orchestrator.state.runtimeRequests.values()].find((request) => request.threadId === childThreadId)!.id;
  // The provider cut the wait short before the question reached the model: its end owes the question to the run.
  expect(await orchestrator.dispatch(cmd("delegated-task.wait-release", { ...hold, took: [], owed: [taskId] }))).toMatchObject({ status: "accepted" });
  expect(orchestrator.state.tasks.get(taskId)).toMatchObject({ heldBy: [], questionsOwedTo: ROOT_RUN });
  return { orchestrator, reactor, taskId, requestId };
}

/** Commit a no-op command: whatever the reactor dispatched on earlier events is committed before it. */
async function fence(orchestrator: Orchestrator): Promise<void> {
  await orchestrator.dispatch({ type: "thread.create", commandId: `cmd:fence:${crypto.randomUUID()}`, data: { projectId: "p" } });
}

describe("question catch-up after a cut-short wait", () => {
  it("waits while the parent's run goes on, then wakes the parent when that run completes", async () => {
    const { orchestrator, reactor, taskId, requestId } = await setup();
    await fence(orchestrator);
    // Releasing the hold delivers no question: the run is still going.
    expect(orchestrator.state.tasks.get(taskId)!.notices).toEqual([]);
    expect(await orchestrator.dispatch(turnEnds(ROOT, ROOT_RUN))).toMatchObject({ status: "accepted" });
    await fence(orchestrator);
    const task = orchestrator.state.tasks.get(taskId)!;
    expect(task.notices).toEqual([{ kind: "question", requestId, runId: expect.any(String), delivery: "queued" }]);
    // The parent was idle: the notice woke it with a follow-up run.
    expect(orchestrator.state.runs.get(task.notices[0]!.runId!)).toMatchObject({ kind: "system_follow_up", status: "starting" });
    reactor.stop();
  });

  it("an interrupted parent gets no catch-up", async () => {
    const { orchestrator, reactor, taskId } = await setup();
    expect(await orchestrator.dispatch(turnEnds(ROOT, ROOT_RUN, "interrupted"))).toMatchObject({ status: "accepted" });
    await fence(orchestrator);
    expect(orchestrator.state.tasks.get(taskId)!.notices).toEqual([]);
    reactor.stop();
  });

  it("a question answered meanwhile is not delivered", async () => {
    const { orchestrator, reactor, taskId, requestId } = await setup();
    const { childThreadId } = taskIds("q");
    expect(await orchestrator.dispatch(cmd("runtime-request.respond", { threadId: childThreadId, requestId, response: { answers: { q1: ["main"] } } }))).toMatchObject({ status: "accepted" });
    expect(await orchestrator.dispatch(turnEnds(ROOT, ROOT_RUN))).toMatchObject({ status: "accepted" });
    await fence(orchestrator);
    expect(orchestrator.state.tasks.get(taskId)!.notices).toEqual([]);
    reactor.stop();
  });
});
