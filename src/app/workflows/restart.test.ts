import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DELEGATION_PROVIDERS, childScript } from "../../testkit/delegationHarness.js";
import { script } from "../../testkit/loomHarness.js";
import { LoomMcpClient } from "../../testkit/mcpClient.js";
import { pollUntil } from "../../testkit/poll.js";
import { type LoomServer, startLoomServer } from "../../server/loomServer.js";
import type { WorkflowOutput } from "../../contracts/tools/workflowTools.js";

/**
 * A workflow survives a server restart (docs/workflows.md): the real server
 * is stopped while the workflow's second agent() child is mid-turn and
 * started again on the same state dir. The script is re-run from the top:
 * the finished first call is answered from the journal (no second task), the
 * call whose task the restart cut short is re-issued exactly once, and the
 * workflow completes with the same result an uninterrupted run gives.
 */

const dir = mkdtempSync(join(tmpdir(), "loom-workflow-restart-"));
const stateDir = join(dir, ".loom");
mkdirSync(stateDir);
const configPath = join(dir, "loom-config.json");
writeFileSync(configPath, JSON.stringify({ providers: DELEGATION_PROVIDERS, workspaces: { checkpoints: false } }));
const open: { server: LoomServer; client: LoomMcpClient }[] = [];

async function boot() {
  const server = await startLoomServer({ stateDir, cwd: dir, configPath, progressIntervalMs: 100 });
  const client = await LoomMcpClient.connect(server.mcpUrl, readFileSync(join(stateDir, "owner-token"), "utf8").trim(), "workflow-restart-test");
  open.push({ server, client });
  return { server, client };
}

async function shutdown(entry: { server: LoomServer; client: LoomMcpClient }) {
  await entry.client.close().catch(() => undefined);
  await entry.server.close();
}

afterAll(async () => {
  for (const entry of open.splice(0)) await shutdown(entry);
  rmSync(dir, { recursive: true, force: true });
});

const js = (value: unknown) => JSON.stringify(value);

describe("workflow restart", () => {
  it("re-runs the script after a restart with no duplicated agent() work", async () => {
    const first = await boot();
    const workflowScript = `
export const meta = { name: "two-steps", phases: [{ title: "Work" }] };
phase("Work");
const one = await agent(${js(childScript({ say: "one" }))}, { label: "one", target: { providerInstanceId: "b" } });
const two = await agent(${js(childScript({ sleep: 1_500 }, { say: "two" }))}, { label: "two", target: { providerInstanceId: "a" } });
return [one, two];`;
    const parent = await first.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
      title: "Workflow parent",
      message: script({ call: "t3_workflow_start", args: { script: workflowScript, clientRequestId: "restart" }, as: "w" }, { say: "started" }),
      target: { providerInstanceId: "a" },
    });
    const state = () => open.at(-1)!.server.orchestrator.state;
    const workflow = () => [...state().workflows.values()].find((candidate) => candidate.parentThreadId === parent.threadId);
    // Stop while the second agent's child is mid-turn.
    const running = await pollUntil(() => {
      const step = workflow()?.steps.find((candidate) => candidate.label === "two");
      const task = step?.taskId == null ? undefined : state().tasks.get(step.taskId);
      const run = task?.childRunId == null ? undefined : state().runs.get(task.childRunId);
      return run?.status === "running" ? step : undefined;
    }, (step) => step !== undefined, "the second agent() child to be running");
    expect(running).toBeDefined();
    expect(workflow()!.steps[0]).toMatchObject({ label: "one", status: "completed", result: "one" });
    await shutdown(open.pop()!);

    const second = await boot();
    const done = await pollUntil(() => {
      const current = workflow();
      return current !== undefined && current.status !== "running" ? current : undefined;
    }, (ended) => ended !== undefined, "the workflow to end after the restart", 30_000);
    expect(done!.status).toBe("completed");
    expect(done!.result).toEqual(["one", "two"]);
    const stepTasks = (stepId: string) => [...state().tasks.values()].filter((task) => task.workflowStep?.stepId === stepId);
    const [stepOne, stepTwo] = done!.steps;
    // The finished call was answered from the journal: still one task.
    expect(stepTasks(stepOne!.stepId)).toHaveLength(1);
    // The call the restart cut short was re-issued exactly once.
    expect(stepTwo).toMatchObject({ label: "two", status: "completed", attempt: 2 });
    expect(stepTasks(stepTwo!.stepId).map((task) => task.status).sort()).toEqual(["completed", "interrupted"]);
    expect(stepTasks(running!.stepId)).toHaveLength(2);
    expect(done!.steps).toHaveLength(2);
    // The parent is told the result, and t3_workflow_status reads it from the journal.
    const notices = (second.server.orchestrator.state.turnItems.get(parent.threadId) ?? []).filter((item) => item?.type === "notification");
    expect(notices.map((item) => (item as { text: string }).text).join("\n")).toContain('"two"');
    const status = await second.client.ok<WorkflowOutput>("t3_workflow_status", { workflowId: done!.workflowId });
    expect(status).toMatchObject({ status: "completed", result: ["one", "two"] });
  });
});
