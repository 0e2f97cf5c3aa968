import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childScript, launchParent, startDelegationHarness, toolResults } from "../../testkit/delegationHarness.js";
import type { LoomHarness } from "../../testkit/loomHarness.js";
import type { WorkflowOutput } from "../../contracts/tools/workflowTools.js";

/**
 * A workflow's spawns budget under parallel agent() calls (docs/budgets.md,
 * Reservations): every call asks at once, and exactly as many start as the
 * pool allows; the rest get budget_exceeded.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

describe("a workflow's spawns budget under parallel agent() calls", () => {
  it("16 parallel agent() calls under spawns 4 start exactly 4; the other 12 get budget_exceeded", async () => {
    const prompt = JSON.stringify(childScript({ say: "ok" }));
    const script = `
const outcomes = await parallel(Array.from({ length: 16 }, (_, i) => async () => {
  try { return await agent(${prompt}, { label: "s" + i }); } catch (error) { return error.code; }
}));
return outcomes;`;
    const parent = await launchParent(h, [{ call: "t3_workflow_start", args: { mode: "wait", timeoutMs: 30_000, script, budget: { spawns: 4 } }, as: "w" }, { say: "done" }]);
    await h.waitForEnd(parent.runId, 40_000);
    const [call] = toolResults<WorkflowOutput>(h, parent.threadId, "t3_workflow_start");
    const result = call!.result;
    expect(result.status).toBe("completed");
    const outcomes = result.result as string[];
    expect(outcomes.filter((outcome) => outcome === "ok")).toHaveLength(4);
    expect(outcomes.filter((outcome) => outcome === "budget_exceeded")).toHaveLength(12);
    const started = [...h.state.tasks.values()].filter((task) => task.workflowStep?.workflowId === result.workflowId);
    expect(started).toHaveLength(4);
    expect(result.budget).toMatchObject({ limits: { spawns: 4 }, spent: { spawns: 4 }, exceeded: true });
  });
});
