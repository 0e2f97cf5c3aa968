import { describe, expect, it } from "vitest";
import { ROOT, ROOT_RUN, rootWithRun } from "../core/testing/delegationFixtures.js";
import { TEST_PROVIDERS } from "../core/testing/scenario.js";
import { MemoryEventStore } from "../store/memory/memoryEventStore.js";
import { Orchestrator } from "./orchestrator.js";
import { reconcileOnBoot } from "./reconcile.js";

/**
 * Boot reconciliation of a steer the previous process never delivered: its
 * run ends interrupted (the steer is part of that end), or starts again
 * after the crash (onCrash resume), and then the steer's message is sent
 * again as a follow-up run behind it, since the new attempt's input is the
 * run's own message (docs/runs.md, "Restart").
 */

async function steeredThenLost(): Promise<{ orchestrator: Orchestrator; store: MemoryEventStore }> {
  const store = new MemoryEventStore();
  const events = rootWithRun("steerable").map((event) => ({ ...event }));
  await store.commit([{ receipt: { status: "accepted", commandId: "cmd:seed", commandType: "test.seed", acceptedAt: new Date(0).toISOString() }, events, outbox: [] }]);
  const orchestrator = await Orchestrator.open({ store, providers: (id) => TEST_PROVIDERS[id] ?? null });
  const steered = await orchestrator.dispatch({ type: "message.dispatch", commandId: "cmd:steer", data: { threadId: ROOT, text: "also check the docs", mode: "steer", messageId: "message:steer" } });
  expect(steered.status).toBe("accepted");
  expect((await store.listOutbox("pending")).map((row) => row.kind)).toContain("provider.turn.steer");
  return { orchestrator, store };
}

describe("a steer lost with the previous process", () => {
  it("is sent again behind its run when the run resumes after the crash", async () => {
    const { orchestrator, store } = await steeredThenLost();
    const report = await reconcileOnBoot(orchestrator, store, "boot-1", () => "resume");
    expect(report).toMatchObject({ resumedRuns: 1, interruptedRuns: 0, resentSteers: 1 });
    expect(orchestrator.state.runs.get(ROOT_RUN)).toMatchObject({ status: "starting", resumes: [expect.objectContaining({ reason: "server_restarted" })] });
    const resent = [...orchestrator.state.runs.values()].filter((run) => run.threadId === ROOT && run.id !== ROOT_RUN);
    expect(resent).toEqual([expect.objectContaining({ kind: "system_follow_up", status: "queued", messageId: "message:steer:resent" })]);
    // A second boot over the same rows writes nothing twice.
    await reconcileOnBoot(orchestrator, store, "boot-1", () => "resume");
    expect([...orchestrator.state.runs.values()].filter((run) => run.threadId === ROOT)).toHaveLength(2);
  });

  it("goes with its run when the run ends interrupted", async () => {
    const { orchestrator, store } = await steeredThenLost();
    const report = await reconcileOnBoot(orchestrator, store, "boot-1");
    expect(report).toMatchObject({ resumedRuns: 0, interruptedRuns: 1, resentSteers: 0 });
    expect(orchestrator.state.runs.get(ROOT_RUN)?.status).toBe("interrupted");
    expect([...orchestrator.state.runs.values()].filter((run) => run.threadId === ROOT)).toHaveLength(1);
  });
});
