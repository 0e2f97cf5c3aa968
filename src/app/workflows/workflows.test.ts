import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childScript, launchParent, startDelegationHarness, tasksOf, toolResults } from "../../testkit/delegationHarness.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type LoomHarness, script as script_ } from "../../testkit/loomHarness.js";
import type { WorkflowOutput } from "../../contracts/tools/workflowTools.js";

/**
 * Workflow scripts over real MCP (docs/workflows.md): a parent on scripted
 * instance `a` calls t3_workflow_start; every agent() call is a delegated
 * task whose scripted child runs on `a` or `b`. Outcomes are read from the
 * tool result and Loom's own state.
 */

let h: LoomHarness;
beforeAll(async () => {
  h = await startDelegationHarness();
});
afterAll(async () => {
  await h.close();
});

/** A prompt an agent() child runs as its script: it answers `text`. */
const says = (text: string) => childScript({ say: text });
const js = (value: unknown) => JSON.stringify(value);

async function runWorkflow(args: Record<string, unknown>) {
  const parent = await launchParent(h, [{ call: "t3_workflow_start", args: { mode: "wait", timeoutMs: 20_000, ...args }, as: "w" }, { say: "done" }]);
  await h.waitForEnd(parent.runId, 30_000);
  const [call] = toolResults<WorkflowOutput & { error?: { code: string; message: string } }>(h, parent.threadId, "t3_workflow_start");
  return { parent, result: call!.result };
}

const FINDINGS = { type: "object", properties: { file: { type: "string" }, issues: { type: "integer" } }, required: ["file", "issues"] };
const VERDICT = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] };

describe("workflow scripts", () => {
  it("runs a pipeline review then a parallel adversarial verify with schemas, across two providers", async () => {
    const script = `
export const meta = { name: "review-verify", description: "review each file, then verify", phases: [{ title: "Review" }, { title: "Verify" }] };
phase("Review");
const reviews = await pipeline(args.files, (file) => agent(${js(says('{"file": "F", "issues": 2}'))}.replace("F", file), { label: "review " + file, schema: ${js(FINDINGS)}, target: { providerInstanceId: "b" } }));
phase("Verify");
const checks = await parallel(reviews.map((review) => () => agent(${js(says('{"ok": true}'))}, { label: "verify " + review.file, schema: ${js(VERDICT)}, target: { providerInstanceId: "a" } })));
return { reviews, checks };
`;
    const { parent, result } = await runWorkflow({ script, args: { files: ["x.ts", "y.ts"] } });
    expect(result.status).toBe("completed");
    expect(result.result).toEqual({ reviews: [{ file: "x.ts", issues: 2 }, { file: "y.ts", issues: 2 }], checks: [{ ok: true }, { ok: true }] });
    expect(result.phases).toEqual([
      { title: "Review", status: "done" },
      { title: "Verify", status: "done" },
    ]);
    expect(result.steps.map((step) => [step.label, step.phase, step.status, step.providerInstanceId])).toEqual([
      ["review x.ts", "Review", "completed", "b"],
      ["review y.ts", "Review", "completed", "b"],
      ["verify x.ts", "Verify", "completed", "a"],
      ["verify y.ts", "Verify", "completed", "a"],
    ]);
    // Every agent() is a visible child thread whose task points back to its workflow step.
    const tasks = tasksOf(h, parent.threadId);
    expect(tasks).toHaveLength(4);
    for (const step of result.steps) {
      const task = h.state.tasks.get(step.taskId!)!;
      expect(task.workflowStep).toEqual({ workflowId: result.workflowId, stepId: expect.any(String) });
      expect(h.state.threads.get(step.childThreadId!)!.lineage.parentThreadId).toBe(parent.threadId);
    }
    // The parent's timeline shows the workflow item with its steps and result.
    const item = h.items(parent.threadId).find((candidate) => candidate.type === "dynamic_tool" && candidate.toolName === "t3_workflow");
    expect(item).toMatchObject({ status: "completed", result: { status: "completed", steps: expect.arrayContaining([expect.objectContaining({ label: "verify y.ts", status: "completed" })]) } });
    // t3_workflow_status reads the same journal.
    const status = await h.owner.ok<WorkflowOutput>("t3_workflow_status", { workflowId: result.workflowId });
    expect(status.result).toEqual(result.result);
  });

  it("bestOfN: attempts on two providers and a judge panel with a split vote decided by majority", async () => {
    const judge = (winner: number, scores: number[]) => ({ prompt: says(js({ winner, scores, rationale: `judge picks ${winner}` })), target: "b" });
    const script = `return await bestOfN({ task: ${js(says("an attempt"))}, n: 3, targets: ["a", "b"], judges: [${js(judge(1, [3, 8, 5]))}, ${js(judge(2, [3, 6, 9]))}, ${js(judge(1, [4, 9, 5]))}] });`;
    const { result } = await runWorkflow({ script });
    expect(result.status).toBe("completed");
    const outcome = result.result as { winner: number; verdict: { winner: number; votes: number[]; split: boolean; scores: number[]; rationale: string } };
    expect(outcome.winner).toBe(1);
    expect(outcome.verdict).toMatchObject({ winner: 1, votes: [1, 2, 1], split: true, rationale: "judge picks 1\njudge picks 1" });
    expect(outcome.verdict.scores[1]).toBeCloseTo(23 / 3);
    expect(result.steps.filter((step) => step.phase === "Attempts").map((step) => step.providerInstanceId)).toEqual(["a", "b", "a"]);
    expect(result.steps.filter((step) => step.phase === "Judging")).toHaveLength(3);
  });

  it("verify: findings, a fix, then a clean round", async () => {
    const findings = (list: unknown[]) => says(js({ findings: list }));
    // The verifier prompt may be a function of the round: one finding against the first work, none against the fix.
    const script = `return await verify({
      work: { task: ${js(says("v1"))}, fixPrompt: ${js(says("v2"))} },
      verifier: { prompt: (round) => round === 1 ? ${js(findings([{ severity: "high", description: "off by one" }]))} : ${js(findings([]))}, target: "b" },
      rounds: 3,
    });`;
    const { result } = await runWorkflow({ script });
    expect(result.status).toBe("completed");
    expect(result.result).toMatchObject({ result: "v2", clean: true, rounds: [{ round: 1, findings: [{ description: "off by one" }] }, { round: 2, findings: [] }] });
    expect(result.steps.map((step) => step.label)).toEqual(["work", "verify 1", "fix 1", "verify 2"]);
  });

  it("loopUntil: repeats until the check holds, as a named built-in workflow", async () => {
    const script = `return await loopUntil({ task: (i) => i < 3 ? ${js(says('{"done": false}'))} : ${js(says('{"done": true}'))}, until: { check: "done" }, schema: { type: "object" }, maxIterations: 5 });`;
    const { result } = await runWorkflow({ script });
    expect(result.result).toMatchObject({ iterations: 3, done: true, result: { done: true } });
    const named = await runWorkflow({ name: "loopUntil", args: { task: says('{"done": true}'), until: { check: "done" }, schema: { type: "object" } } });
    expect(named.result).toMatchObject({ name: "loopUntil", status: "completed", result: { iterations: 1, done: true } });
  });

  it("loopUntil until { command }: repeats until a real shell command in the workspace exits 0, journaling each check", async () => {
    const write = (content: string) => childScript({ write: { path: "loop-status.txt", content } }, { say: `wrote ${content.trim()}` });
    const command = "grep -qx pass loop-status.txt && echo tests passed";
    const script = `return await loopUntil({ task: (i, previous, check) => i < 3 ? ${js(write("fail\n"))} : ${js(write("pass\n"))}, until: { command: ${js(command)} }, maxIterations: 4 });`;
    const { result } = await runWorkflow({ script });
    expect(result.status).toBe("completed");
    expect(result.result).toMatchObject({ iterations: 3, done: true, result: "wrote pass", command: { exitCode: 0, output: "tests passed\n" } });
    // Each iteration is an agent step followed by its command check; the failed checks carry grep's exit code.
    expect(result.steps.map((step) => [step.label, step.status, step.taskId === null])).toEqual([
      ["iteration 1", "completed", false],
      ["check 1", "completed", true],
      ["iteration 2", "completed", false],
      ["check 2", "completed", true],
      ["iteration 3", "completed", false],
      ["check 3", "completed", true],
    ]);
    expect(result.steps[1]!.result).toEqual({ exitCode: 1, output: "" });
    expect(readFileSync(join(h.dir, "loop-status.txt"), "utf8")).toBe("pass\n");
  });

  it("loopUntil until { command } is refused for a parent that is not in full-access mode", async () => {
    const script = `try { await loopUntil({ task: ${js(says("x"))}, until: { command: "true" }, maxIterations: 1 }); return "ran"; } catch (error) { return error.code + ": " + error.message; }`;
    const parent = await h.launch({
      message: script_({ call: "t3_workflow_start", args: { mode: "wait", timeoutMs: 20_000, script }, as: "w" }, { say: "done" }),
      target: { providerInstanceId: "a" },
      runtimeMode: "auto-accept-edits",
    });
    await h.waitForEnd(parent.runId!, 30_000);
    const [call] = toolResults<WorkflowOutput>(h, parent.threadId, "t3_workflow_start");
    expect(call!.result.result).toBe("command_not_allowed: a workspace command needs a parent thread in full-access mode (it is auto-accept-edits)");
  });

  it("t3_workflow_stop mid-phase stops the running child and journals nothing more", async () => {
    const script = `
phase("Slow");
try { await agent(${js(childScript({ sleep: 30_000 }, { say: "late" }))}, { label: "slow" }); } catch (error) { /* stopped */ }
await agent(${js(says("after"))}, { label: "after" });
return "finished";`;
    const parent = await launchParent(h, [{ call: "t3_workflow_start", args: { script }, as: "w" }, { say: "started" }]);
    const workflow = () => [...h.state.workflows.values()].find((candidate) => candidate.parentThreadId === parent.threadId);
    const step = await h.until(() => {
      const slow = workflow()?.steps[0];
      const task = slow?.taskId == null ? undefined : h.state.tasks.get(slow.taskId);
      return task?.childRunId != null && h.state.runs.get(task.childRunId)?.status === "running" ? slow : null;
    }, "the slow agent to be running");
    const stopped = await h.owner.ok<WorkflowOutput>("t3_workflow_stop", { workflowId: workflow()!.workflowId, reason: "enough" });
    expect(stopped).toMatchObject({ status: "stopped", stopReason: "enough", currentPhase: "Slow" });
    expect(stopped.steps).toEqual([expect.objectContaining({ label: "slow", status: "failed", error: { code: "workflow_stopped", message: "enough" } })]);
    const task = await h.until(() => {
      const current = h.state.tasks.get(step.taskId!);
      return current?.resultContextTransferId != null ? current : null;
    }, "the slow child's task to settle");
    expect(task.status).toBe("interrupted");
    expect(workflow()).toMatchObject({ status: "stopped", steps: [expect.objectContaining({ label: "slow" })] });
    const item = h.items(parent.threadId).find((candidate) => candidate.type === "dynamic_tool" && candidate.toolName === "t3_workflow");
    expect(item).toMatchObject({ status: "declined" });
  });

  it("Stop on the parent thread stops its workflow and every agent() child still working, in one decision", async () => {
    const slow = js(childScript({ sleep: 30_000 }, { say: "late" }));
    const script = `await parallel([1, 2].map((i) => () => agent(${slow}, { label: "slow " + i }))); return "finished";`;
    const parent = await launchParent(h, [{ call: "t3_workflow_start", args: { script }, as: "w" }, { say: "started" }]);
    const workflow = () => [...h.state.workflows.values()].find((candidate) => candidate.parentThreadId === parent.threadId);
    const tasks = await h.until(() => {
      const running = (workflow()?.steps ?? []).flatMap((step) => {
        const task = step.taskId === null ? undefined : h.state.tasks.get(step.taskId);
        return task?.childRunId != null && h.state.runs.get(task.childRunId)?.status === "running" ? [task] : [];
      });
      return running.length === 2 ? running : null;
    }, "both slow agents to be running");
    expect(await h.dispatch("thread.stop", { threadId: parent.threadId })).toMatchObject({ status: 200, body: { status: "accepted" } });
    // The workflow ended at once; its two children were told to stop in the same decision.
    expect(workflow()).toMatchObject({ status: "stopped", stopReason: "its parent thread was stopped" });
    for (const task of tasks) expect(h.state.tasks.get(task.taskId)!.cancelRequestedAt).not.toBeNull();
    const settled = await h.until(() => {
      const current = tasks.map((task) => h.state.tasks.get(task.taskId)!);
      return current.every((task) => task.resultContextTransferId !== null) ? current : null;
    }, "both children to settle");
    // As t3_workflow_stop leaves them: interrupted, with the stop requested.
    expect(settled.map((task) => task.status)).toEqual(["interrupted", "interrupted"]);
    expect(tasksOf(h, parent.threadId)).toHaveLength(2);
  });

  it("stopping one agent() child fails that call with agent_stopped, which the script catches; it is never run again", async () => {
    const slow = js(childScript({ sleep: 30_000 }, { say: "late" }));
    const script = `
let caught = null;
try { await agent(${slow}, { label: "slow" }); } catch (error) { caught = error.code + ": " + error.message; }
const after = await agent(${js(says("after"))}, { label: "after" });
return { caught, after };`;
    const parent = await launchParent(h, [{ call: "t3_workflow_start", args: { script, mode: "wait", timeoutMs: 30_000 }, as: "w" }, { say: "done" }]);
    const workflow = () => [...h.state.workflows.values()].find((candidate) => candidate.parentThreadId === parent.threadId);
    const task = await h.until(() => {
      const step = workflow()?.steps[0];
      const current = step?.taskId == null ? undefined : h.state.tasks.get(step.taskId);
      return current?.childRunId != null && h.state.runs.get(current.childRunId)?.status === "running" ? current : null;
    }, "the slow agent to be running");
    // The child's own Stop, as the web UI and `loom threads stop` send it.
    expect(await h.dispatch("thread.stop", { threadId: task.childThreadId })).toMatchObject({ status: 200, body: { status: "accepted" } });
    await h.waitForEnd(parent.runId, 30_000);
    const ended = workflow()!;
    expect(ended.status).toBe("completed");
    expect(ended.result).toEqual({ caught: expect.stringMatching(/^agent_stopped: agent slow was stopped \(.+\); it is not run again$/), after: "after" });
    expect(ended.steps.map((step) => [step.label, step.status, step.error?.code ?? null])).toEqual([
      ["slow", "failed", "agent_stopped"],
      ["after", "completed", null],
    ]);
    // No second "slow" task: the stopped call was not re-issued.
    expect(tasksOf(h, parent.threadId).map((candidate) => candidate.title)).toEqual(["slow", "after"]);
  });

  it("refuses a bad script, an unknown name and a widened budget with typed errors, recording nothing", async () => {
    const before = h.state.workflows.size;
    for (const [args, message] of [
      [{ script: "return (" }, "the workflow script does not run: SyntaxError"],
      [{ script: "const x = args.missing.field; return x;" }, "TypeError"],
      [{ script: "export const meta = { phases: 'nope' }; return 1;" }, "meta"],
      [{ name: "noSuchWorkflow" }, "no workflow named noSuchWorkflow"],
      [{ script: "return Date.now();" }, "no clock"],
    ] as const) {
      const { result } = await runWorkflow(args);
      expect(result.error).toMatchObject({ code: "invalid_request", message: expect.stringContaining(message) });
    }
    expect(h.state.workflows.size).toBe(before);
  });

  it("an agent() refused by the workflow's budget throws budget_exceeded, which the script catches", async () => {
    const script = `
const first = await agent(${js(says("one"))}, { label: "one" });
try {
  await agent(${js(says("two"))}, { label: "two" });
  return "not refused";
} catch (error) {
  return { first, code: error.code, message: error.message };
}`;
    const { result } = await runWorkflow({ script, budget: { spawns: 1 } });
    expect(result.status).toBe("completed");
    expect(result.result).toMatchObject({ first: "one", code: "budget_exceeded", message: expect.stringContaining("spawns budget") });
    expect(result.steps.map((step) => [step.label, step.status, step.error?.code ?? null, step.taskId === null])).toEqual([
      ["one", "completed", null, false],
      ["two", "failed", "budget_exceeded", true],
    ]);
    expect(result.budget).toMatchObject({ limits: { spawns: 1 }, spent: { spawns: 1 }, exceeded: true });
  });
});
