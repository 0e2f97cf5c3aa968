import { afterEach, describe, expect, it } from "vitest";
import { delegateStep, launchParent, onlyTask, startDelegationHarness, tasksOf, toolResults } from "../../testkit/delegationHarness.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * Loom's delegation guards (config `limits`): delegation depth, unfinished
 * children per parent, and the spawn budget of a root thread's tree. A
 * refused delegate_task is a tool failure the agent's script can read.
 */

let h: LoomHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

interface Failure {
  error: { code: string; message: string; retryable: boolean };
}

async function finish(runId: string): Promise<void> {
  const run = await h!.waitForEnd(runId);
  expect(run.status, JSON.stringify(h!.items(run.threadId).filter((item) => item.type === "error"))).toBe("completed");
}

describe("delegation guards", () => {
  it("maxDelegationDepth: a child that delegates again gets delegation_depth_exceeded", async () => {
    h = await startDelegationHarness({ limits: { maxDelegationDepth: 1 } });
    const child = [delegateStep([{ say: "too deep" }], { mode: "wait" }, "g"), { say: "refused: {{g.error.code}}" }];
    const parent = await launchParent(h, [delegateStep(child, { mode: "wait" }, "t"), { say: "{{t.summary}}" }]);
    await finish(parent.runId);
    expect(h.assistantTexts(parent.threadId, parent.runId)).toEqual(["refused: delegation_depth_exceeded"]);
    const task = onlyTask(h, parent.threadId);
    const [refused] = toolResults<Failure>(h, task.childThreadId, "delegate_task");
    expect(refused!.status).toBe("failed");
    expect(refused!.result.error).toMatchObject({ code: "delegation_depth_exceeded", retryable: false });
    expect(tasksOf(h, task.childThreadId)).toEqual([]);
    expect([...h.state.threads.values()].filter((thread) => thread.lineage.rootThreadId === parent.threadId)).toHaveLength(2);
  });

  it("maxActiveChildrenPerThread: the third unfinished child gets active_children_exceeded; a retry with the same clientRequestId succeeds once one finishes", async () => {
    h = await startDelegationHarness({ limits: { maxActiveChildrenPerThread: 2 } });
    const parent = await launchParent(h, [
      delegateStep([{ sleep: 300 }, { say: "one" }], {}, "t1"),
      delegateStep([{ sleep: 300 }, { say: "two" }], {}, "t2"),
      delegateStep([{ say: "three" }], { clientRequestId: "third" }, "t3"),
      { say: "{{t3.error.code}} retryable={{t3.error.retryable}}" },
      { sleep: 1_000 },
      delegateStep([{ say: "three" }], { clientRequestId: "third", mode: "wait" }, "retry"),
      { say: "{{retry.status}}: {{retry.summary}}" },
    ]);
    await finish(parent.runId);
    expect(h.assistantTexts(parent.threadId, parent.runId).filter((text) => !text.startsWith("Steered: "))).toEqual([
      "active_children_exceeded retryable=true",
      "completed: three",
    ]);
    expect(tasksOf(h, parent.threadId).map((task) => task.summary)).toEqual(["one", "two", "three"]);
  });

  it("maxSpawnsPerRootThread: the root's whole tree shares the budget", async () => {
    h = await startDelegationHarness({ limits: { maxSpawnsPerRootThread: 2 } });
    const child = [delegateStep([{ say: "grandchild" }], { mode: "wait" }, "g"), { say: "{{g.summary}}" }];
    const parent = await launchParent(h, [
      delegateStep(child, { mode: "wait" }, "t"),
      delegateStep([{ say: "third spawn" }], { mode: "wait" }, "over"),
      { say: "{{t.summary}} / {{over.error.code}}" },
    ]);
    await finish(parent.runId);
    expect(h.assistantTexts(parent.threadId, parent.runId)).toEqual(["grandchild / spawn_budget_exceeded"]);
    expect(h.state.tasks.size).toBe(2);

    // Another root thread has a budget of its own.
    const other = await launchParent(h, [delegateStep([{ say: "fresh budget" }], { mode: "wait" }, "t"), { say: "{{t.summary}}" }], "a", "Other root");
    await finish(other.runId);
    expect(h.assistantTexts(other.threadId, other.runId)).toEqual(["fresh budget"]);
  });
});
