import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELEGATION_PROVIDERS, childScript } from "../../testkit/delegationHarness.js";
import { script } from "../../testkit/loomHarness.js";
import { waitForExit } from "../../testkit/loomProcess.js";
import { type ServedLoom, ServeRig } from "../../testkit/serveRig.js";
import type { LoomMcpClient } from "../../testkit/mcpClient.js";
import type { DelegateTaskResult } from "../../contracts/tools/toolOutputs.js";
import type { WorkflowOutput } from "../../contracts/tools/workflowTools.js";
import { pollUntil } from "../../testkit/poll.js";

/**
 * kill -9 the built `loom serve` while a workflow runs (docs/workflows.md,
 * Durability): once while its three bestOfN attempts run in parallel, once
 * while its judge runs, each time starting a new server on the same state
 * dir. The workflow completes with the result of an uninterrupted run of the
 * same script; every agent() call has exactly one completed child, and a call
 * finished before a crash never runs again. With the default onCrash resume,
 * a call a crash cut short keeps its task: the child's run starts again after
 * the restart (docs/runs.md, "Work after a crash"); with onCrash fail on the
 * instances, the cut task ends interrupted and the call is re-issued once per
 * crash. Runs against dist/: `npm run build` first.
 */

interface ReadResult {
  runs: { runId: string; status: string }[];
  items: { type: string; text: string }[];
}

type Policy = "resume" | "fail";
const rigs = new Map<Policy, { dir: string; rig: ServeRig }>();

beforeAll(() => {
  for (const policy of ["resume", "fail"] as const) {
    const dir = mkdtempSync(join(tmpdir(), `loom-workflow-crash-${policy}-`));
    const stateDir = join(dir, "state");
    mkdirSync(stateDir);
    const providers = policy === "resume" ? DELEGATION_PROVIDERS : DELEGATION_PROVIDERS.map((provider) => ({ ...provider, onCrash: "fail" as const }));
    writeFileSync(join(stateDir, "config.json"), JSON.stringify({ providers, projects: [{ id: "default", root: dir }], workspaces: { checkpoints: false } }));
    rigs.set(policy, { dir, rig: new ServeRig(stateDir, `workflow-crash-${policy}-test`) });
  }
});
afterAll(async () => {
  for (const { dir, rig } of rigs.values()) {
    await rig.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const js = (value: unknown) => JSON.stringify(value);
const VERDICT = { winner: 1, scores: [4, 9, 6], rationale: "the second attempt is best" };
const WORKFLOW = `
export const meta = { name: "crash-best-of-3", phases: [{ title: "Attempts" }, { title: "Judging" }] };
return await bestOfN({
  task: ${js(childScript({ sleep: 2_000 }, { say: "an attempt" }))},
  n: 3,
  targets: ["b"],
  judges: [{ prompt: ${js(childScript({ sleep: 2_000 }, { say: js(VERDICT) }))}, target: "a" }],
});`;

/** Launch a parent that starts the workflow; its run's result is the workflowId. */
async function startWorkflow(client: LoomMcpClient, mode: "async" | "wait"): Promise<string> {
  const parent = await client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
    title: `Workflow parent (${mode})`,
    message: script({ call: "t3_workflow_start", args: { script: WORKFLOW, mode, timeoutMs: 60_000 }, as: "w" }, { say: "{{w.workflowId}}" }),
    target: { providerInstanceId: "a" },
  });
  const ended = await client.ok<{ status: string; result: string }>("t3_thread_wait", { threadId: parent.threadId, runId: parent.runId, timeoutMs: 60_000 });
  expect(ended.status).toBe("completed");
  return ended.result;
}

/** Wait until `count` steps of `phase` are running with their child runs running, then kill -9 the server. */
async function crashWhileRunning(served: ServedLoom, workflowId: string, phase: string, count: number): Promise<WorkflowOutput> {
  const { client } = served;
  const running = await pollUntil(
    async () => {
      const status = await client.ok<WorkflowOutput>("t3_workflow_status", { workflowId });
      const steps = status.steps.filter((step) => step.phase === phase && step.status === "running");
      if (steps.length !== count) return null;
      for (const step of steps) {
        const read = await client.ok<ReadResult>("t3_thread_read", { threadId: step.childThreadId!, view: "activity" });
        if (read.runs.at(-1)?.status !== "running") return null;
      }
      return status;
    },
    (status) => status !== null,
    `${count} ${phase} step(s) with running children`,
    30_000,
  );
  served.serve.child.kill("SIGKILL");
  expect((await waitForExit(served.serve.child)).signal).toBe("SIGKILL");
  return running!;
}

async function tasksOfStep(client: LoomMcpClient, taskIds: readonly string[]) {
  return Promise.all(taskIds.map((taskId) => client.ok<DelegateTaskResult>("task_status", { taskId })));
}

describe.each(["resume", "fail"] as const)("kill -9 while a workflow runs (onCrash %s)", (policy) => {
  it("finishes after crashes in the parallel phase and in the judge with one completed child per call and the uninterrupted result", async () => {
    const rig = rigs.get(policy)!.rig;
    const first = await rig.start();
    const workflowId = await startWorkflow(first.client, "async");
    const inAttempts = await crashWhileRunning(first, workflowId, "Attempts", 3);
    const attemptTasks = inAttempts.steps.map((step) => step.taskId!);

    const second = await rig.start();
    const inJudging = await crashWhileRunning(second, workflowId, "Judging", 1);
    // The attempts finished on the second server: resumed in their own tasks, or each from a re-issued task.
    const attemptsBeforeJudge = inJudging.steps.filter((step) => step.phase === "Attempts");
    expect(attemptsBeforeJudge.map((step) => step.status)).toEqual(["completed", "completed", "completed"]);
    if (policy === "resume") expect(attemptsBeforeJudge.map((step) => step.taskId)).toEqual(attemptTasks);
    else expect(attemptsBeforeJudge.every((step, index) => step.taskId !== attemptTasks[index])).toBe(true);

    const third = await rig.start();
    const done = await pollUntil(
      () => third.client.ok<WorkflowOutput>("t3_workflow_status", { workflowId }),
      (status) => status.status !== "running",
      "the workflow to end after the second restart",
      30_000,
    );
    expect(done.status).toBe("completed");
    // Four calls, four steps: no call was journaled twice.
    expect(done.steps.map((step) => [step.phase, step.status])).toEqual([
      ["Attempts", "completed"],
      ["Attempts", "completed"],
      ["Attempts", "completed"],
      ["Judging", "completed"],
    ]);
    // The attempts were not run again after the second crash: the same tasks as when the judge was running.
    expect(done.steps.slice(0, 3).map((step) => step.taskId)).toEqual(attemptsBeforeJudge.map((step) => step.taskId));
    const judgeCut = inJudging.steps.find((step) => step.phase === "Judging")!.taskId!;
    const finals = await tasksOfStep(third.client, done.steps.map((step) => step.taskId!));
    expect(finals.map((task) => task.status)).toEqual(["completed", "completed", "completed", "completed"]);
    if (policy === "resume") {
      // Each call kept its one task and child, whose run started again once after the crash that cut it.
      expect(done.steps[3]!.taskId).toBe(judgeCut);
      expect(new Set(finals.map((task) => task.childThreadId)).size).toBe(4);
      for (const task of finals) {
        const child = await third.client.ok<ReadResult>("t3_thread_read", { threadId: task.childThreadId, view: "activity", afterPosition: -1 });
        expect(child.runs.map((run) => run.status)).toEqual(["completed"]);
        expect(child.items.filter((item) => item.type === "system_notice")).toHaveLength(1);
      }
    } else {
      // Each call: exactly one completed child; the tasks a crash cut short ended interrupted, one per crash the call lived through.
      expect(done.steps[3]!.taskId).not.toBe(judgeCut);
      const cut = await tasksOfStep(third.client, [...attemptTasks, judgeCut]);
      expect(cut.map((task) => task.status)).toEqual(["interrupted", "interrupted", "interrupted", "interrupted"]);
      expect(new Set([...finals, ...cut].map((task) => task.childThreadId)).size).toBe(8);
    }

    // The same script run without a crash gives the same result.
    const uninterrupted = await startWorkflow(third.client, "wait");
    const reference = await third.client.ok<WorkflowOutput>("t3_workflow_status", { workflowId: uninterrupted });
    expect(reference.status).toBe("completed");
    expect(done.result).toEqual(reference.result);
    expect(done.result).toMatchObject({ winner: 1, attempt: "an attempt", verdict: { winner: 1, votes: [1], split: false } });
  }, 120_000);
});
