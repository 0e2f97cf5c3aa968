import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childScript, launchParent, startDelegationHarness, tasksOf, toolResults } from "../../testkit/delegationHarness.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";
import type { WorkflowOutput } from "../../contracts/tools/workflowTools.js";

/**
 * Resuming an edited script from a prior workflowId over real MCP
 * (docs/workflows.md, "Resuming an edited script"): the parent starts a
 * workflow, then starts an edited script with `resumeFrom`; the calls before
 * the first changed one are answered from the prior journal (no new task),
 * the changed one and every call after it run fresh.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

const says = (text: string) => childScript({ say: text });
const js = (value: unknown) => JSON.stringify(value);
type Answer = WorkflowOutput & { error?: { code: string; message: string } };

const threeCalls = (second: string) => `
const one = await agent(${js(says("one"))}, { label: "one" });
const two = await agent(${js(says(second))}, { label: "two" });
const three = await agent(${js(says("three"))}, { label: "three" });
return [one, two, three];`;

describe("resuming an edited workflow script", () => {
  it("answers the calls before the first change from the prior journal and runs the rest fresh", async () => {
    const parent = await launchParent(h, [
      { call: "t3_workflow_start", args: { script: threeCalls("two"), mode: "wait", timeoutMs: 20_000 }, as: "w1" },
      { call: "t3_workflow_start", args: { script: threeCalls("TWO"), mode: "wait", timeoutMs: 20_000, resumeFrom: "{{w1.workflowId}}" }, as: "w2" },
      { say: "done" },
    ]);
    await h.waitForEnd(parent.runId, 30_000);
    const [first, second] = toolResults<Answer>(h, parent.threadId, "t3_workflow_start").map((call) => call.result);
    expect(first!.status).toBe("completed");
    expect(second!.status).toBe("completed");
    expect(second!.result).toEqual(["one", "TWO", "three"]);
    const resumed = h.state.workflows.get(second!.workflowId)!;
    expect(resumed.resumeFrom).toBe(first!.workflowId);
    const [one, two, three] = resumed.steps;
    // The unchanged first call: the prior step's result and child, no task of its own.
    expect(one).toMatchObject({ label: "one", status: "completed", result: "one", taskId: first!.steps[0]!.taskId, resumedFrom: { workflowId: first!.workflowId } });
    // The changed call and the identical one after it ran fresh.
    expect(two).toMatchObject({ label: "two", status: "completed", result: "TWO" });
    expect(three).toMatchObject({ label: "three", status: "completed", result: "three" });
    expect(two!.resumedFrom).toBeUndefined();
    expect(three!.resumedFrom).toBeUndefined();
    expect(three!.taskId).not.toBe(first!.steps[2]!.taskId);
    expect(second!.steps[0]).toMatchObject({ resumedFrom: { workflowId: first!.workflowId, stepId: expect.any(String) } });
    // 3 tasks for the first workflow, 2 for the resumed one.
    expect(tasksOf(h, parent.threadId)).toHaveLength(5);
    expect(tasksOf(h, parent.threadId).filter((task) => task.workflowStep?.workflowId === second!.workflowId).map((task) => task.title).sort()).toEqual(["three", "two"]);
  });

  it("refuses an unknown, another thread's and a still-running prior workflow with typed errors, recording nothing", async () => {
    const other = await launchParent(h, [{ call: "t3_workflow_start", args: { script: `return await agent(${js(says("x"))});`, mode: "wait", timeoutMs: 20_000 } }, { say: "done" }]);
    await h.waitForEnd(other.runId, 30_000);
    const [foreign] = toolResults<Answer>(h, other.threadId, "t3_workflow_start");
    const blocking = `return await agent(${js(childScript({ sleep: 30_000 }, { say: "late" }))}, { label: "slow" });`;
    const before = h.state.workflows.size;
    const parent = await launchParent(h, [
      { call: "t3_workflow_start", args: { script: "return 1;", resumeFrom: "workflow:nope" } },
      { call: "t3_workflow_start", args: { script: "return 1;", resumeFrom: foreign!.result.workflowId } },
      { call: "t3_workflow_start", args: { script: blocking }, as: "running" },
      { call: "t3_workflow_start", args: { script: "return 1;", resumeFrom: "{{running.workflowId}}" } },
      { call: "t3_workflow_stop", args: { workflowId: "{{running.workflowId}}" } },
      { say: "done" },
    ]);
    await h.waitForEnd(parent.runId, 30_000);
    const calls = toolResults<Answer>(h, parent.threadId, "t3_workflow_start").map((call) => call.result);
    expect(calls[0]!.error).toMatchObject({ code: "workflow_not_found", message: expect.stringContaining("workflow:nope") });
    expect(calls[1]!.error).toMatchObject({ code: "workflow_not_found" });
    expect(calls[2]!.status).toBe("running");
    expect(calls[3]!.error).toMatchObject({ code: "workflow_running", message: expect.stringContaining("still running") });
    // Only the blocking workflow was recorded.
    expect(h.state.workflows.size).toBe(before + 1);
  });
});
