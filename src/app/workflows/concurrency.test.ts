import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoredEvent } from "../../contracts/envelopes.js";
import { type DelegatedTask, isTerminalDelegatedTaskStatus } from "../../contracts/entities/delegatedTasks.js";
import type { WorkflowOutput } from "../../contracts/tools/workflowTools.js";
import { childScript, launchParent, startDelegationHarness, toolResults } from "../../testkit/delegationHarness.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";

/**
 * `workflows.maxConcurrentAgents` (docs/configuration.md) bounds how many
 * agent() tasks of one workflow are unfinished at once: a real server with
 * the setting at 2 runs a parallel() of 5 calls, and the committed log shows
 * never more than 2 tasks of the workflow unfinished, and 2 at some point.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness({ workflows: { maxConcurrentAgents: 2 } });
});
afterAll(async () => {
  await h.close();
});

describe("workflows.maxConcurrentAgents", () => {
  it("runs at most that many agent() tasks of a workflow at once", async () => {
    const unfinished = new Set<string>();
    let most = 0;
    const followed = h.server.orchestrator.follow(h.server.orchestrator.state.lastSequence, (event: StoredEvent) => {
      if (event.type !== "subagent.updated") return;
      const task = (event.data as { task: DelegatedTask | null }).task;
      if (task === null) return;
      if (isTerminalDelegatedTaskStatus(task.status)) unfinished.delete(task.taskId);
      else unfinished.add(task.taskId);
      most = Math.max(most, unfinished.size);
    });
    try {
      const child = JSON.stringify(childScript({ sleep: 100 }, { say: "done" }));
      const script = `return await parallel(Array.from({ length: 5 }, (_, i) => () => agent(${child}, { label: "call " + i, target: { providerInstanceId: "b" } })));`;
      const parent = await launchParent(h, [{ call: "t3_workflow_start", args: { script, mode: "wait", timeoutMs: 20_000 }, as: "w" }, { say: "done" }]);
      await h.waitForEnd(parent.runId, 30_000);
      const [call] = toolResults<WorkflowOutput>(h, parent.threadId, "t3_workflow_start");
      expect(call!.result).toMatchObject({ status: "completed", result: ["done", "done", "done", "done", "done"] });
      expect(most).toBe(2);
      expect(unfinished.size).toBe(0);
    } finally {
      followed.close();
    }
  });
});
