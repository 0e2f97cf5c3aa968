import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoomWsClient } from "../client/loomWsClient.js";
import { WireError } from "../client/wireErrors.js";
import { childScript, launchParent, startDelegationHarness } from "../testkit/delegationHarness.js";
import type { LoomHarness } from "../testkit/loomHarness.js";
import { wsClient } from "../testkit/wireClients.js";

/**
 * orchestration.getWorkflowScript and orchestration.stopWorkflow (spec 004
 * §3.3) over a real WebSocket: a scripted parent starts a workflow whose
 * agent() child sleeps; the owner reads its script and stops it.
 */

let h: LoomHarness;
let client: LoomWsClient;
beforeAll(async () => {
  h = await startDelegationHarness();
  client = await wsClient(h);
});
afterAll(async () => {
  await client.close();
  await h.close();
});

describe("workflow WebSocket methods", () => {
  it("getWorkflowScript returns the script and args; stopWorkflow stops it and its running child", async () => {
    const script = `phase("Slow");\nreturn await agent(${JSON.stringify(childScript({ sleep: 30_000 }, { say: "late" }))}, { label: "slow" });`;
    const parent = await launchParent(h, [{ call: "t3_workflow_start", args: { script, args: { n: 1 } }, as: "w" }, { say: "started" }]);
    const workflow = await h.until(() => [...h.state.workflows.values()].find((candidate) => candidate.parentThreadId === parent.threadId && candidate.steps.length === 1), "the workflow's step");
    const read = await client.request("orchestration.getWorkflowScript", { workflowId: workflow.workflowId });
    expect(read).toEqual({ workflowId: workflow.workflowId, name: null, description: null, status: "running", script, args: { n: 1 } });

    const stopped = await client.request("orchestration.stopWorkflow", { workflowId: workflow.workflowId });
    expect(stopped).toMatchObject({ workflowId: workflow.workflowId, status: "stopped" });
    const taskId = workflow.steps[0]!.taskId!;
    await h.until(() => h.state.tasks.get(taskId)?.resultContextTransferId != null, "the child to be stopped");
    expect(h.state.tasks.get(taskId)?.status).not.toBe("completed");
    expect(h.state.workflows.get(workflow.workflowId)?.status).toBe("stopped");
  });

  it("an unknown workflow is workflow_not_found; bad params are invalid_request", async () => {
    for (const method of ["orchestration.getWorkflowScript", "orchestration.stopWorkflow"] as const) {
      const missing = await client.request(method, { workflowId: "workflow:none" }).catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(WireError);
      expect((missing as WireError).failure.code).toBe("workflow_not_found");
      const bad = await client.request(method, { nope: 1 } as never).catch((error: unknown) => error);
      expect((bad as WireError).failure.code).toBe("invalid_request");
    }
  });
});
