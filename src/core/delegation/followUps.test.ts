import { describe, expect, it } from "vitest";
import type { DomainEvent } from "../../contracts/events.js";
import { subagentEvent } from "../../contracts/events.js";
import { cmd } from "../testing/fixtures.js";
import { delegate, finish, fold, rootWithRun, setupContext, step, steps } from "../testing/delegationFixtures.js";
import { TEST_NOW as NOW } from "../testing/scenario.js";

const CHILD = "thread:t1";
const TASK = "subagent:t1";

/** t1 finished; then the parent sent a follow-up to the child (run:more). */
function withFollowUp(): DomainEvent[] {
  const ctx = setupContext();
  const done = steps(rootWithRun(), [delegate("t1"), ...finish(CHILD, "run:t1", "All done.")], ctx);
  return step(done, cmd("message.dispatch", { threadId: CHILD, text: "one more thing", runId: "run:more", createdBy: "agent", creationSource: "mcp" }), ctx);
}

describe("follow-ups on a finished task", () => {
  it("a message to a finished task's child is a follow-up the parent shows running until its run ends", () => {
    const history = withFollowUp();
    const state = fold(history);
    expect(state.tasks.get(TASK)?.followUps).toEqual([{ runId: "run:more", status: "running", createdAt: expect.any(String), endedAt: null }]);
    const ended = fold(steps(history, finish(CHILD, "run:more", "More done."), setupContext()));
    expect(ended.tasks.get(TASK)?.followUps?.[0]).toMatchObject({ status: "completed" });
    expect(ended.tasks.get(TASK)).toMatchObject({ status: "completed", summary: "All done." });
  });

  it("a message steered into the child's own running task is no follow-up", () => {
    const ctx = setupContext();
    const state = fold(steps(rootWithRun(), [delegate("t1"), cmd("message.dispatch", { threadId: CHILD, text: "also this" })], ctx));
    expect(state.tasks.get(TASK)?.followUps).toBeUndefined();
  });

  it("task_cancel cancels a follow-up that lost its child run and interrupts one that runs", () => {
    const history = withFollowUp();
    const state = fold(history);
    const task = state.tasks.get(TASK)!;
    // A follow-up still running on the parent whose child run is gone (a record the log lost track of).
    const lost: DomainEvent = subagentEvent(state.subagents.get(TASK)!, {
      ...task,
      followUps: [...task.followUps!, { runId: "run:vanished", status: "running", createdAt: NOW, endedAt: null }],
    });
    const stopped = fold(step([...history, lost], cmd("subagent.stop", { taskId: TASK }), setupContext()));
    const followUps = stopped.tasks.get(TASK)!.followUps!;
    expect(followUps.find((followUp) => followUp.runId === "run:vanished")).toMatchObject({ status: "cancelled", endedAt: expect.any(String) });
    // The live follow-up's turn is being interrupted; it settles when the provider reports it.
    expect(followUps.find((followUp) => followUp.runId === "run:more")).toMatchObject({ status: "running" });
    expect(stopped.runs.get("run:more")?.interruptRequestedAt).not.toBeNull();
    // The published result never changes.
    expect(stopped.tasks.get(TASK)).toMatchObject({ status: "completed", summary: "All done." });
  });
});
