import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { Workflow } from "../../contracts/entities/workflows.js";
import { WorkflowPhaseSchema } from "../../contracts/entities/workflows.js";
import type { WorkflowScriptOutput, WorkflowStartInput, WorkflowStatusInput, WorkflowStopInput } from "../../contracts/tools/workflowTools.js";
import { joinId } from "../../core/ids.js";
import type { AppThread } from "../../contracts/thread.js";
import { type Caller, resolveCaller } from "../caller.js";
import type { Command } from "../../contracts/commands.js";
import type { LaunchEstimate } from "../../contracts/tools/launchEstimate.js";
import { launchEstimate } from "../budgets/launchEstimate.js";
import { type AppContext, check, execute, freshUuid } from "../context.js";
import { fail } from "../errors.js";
import { type RequestClaim, claimField, claimRequest } from "../idempotency.js";
import { scriptFanOut } from "./dryRun.js";
import { type WaitContext, waitBudget, waitUntil } from "../waits.js";
import { workspacePathOf } from "../workspaces/paths.js";
import { BUILT_IN_WORKFLOWS, WORKFLOW_LIBRARY } from "./library.js";
import type { WorkflowRunner } from "./runner.js";
import { inspectWorkflowScript } from "./sandbox.js";
import { workflowView } from "./view.js";

/** `meta` as Claude Code's workflow API defines it: a pure literal with these fields. */
const MetaSchema = z
  .object({
    name: z.string().min(1).max(200).optional(),
    description: z.string().max(5_000).optional(),
    phases: z.array(WorkflowPhaseSchema).max(100).optional(),
  })
  .passthrough();

const now = (ctx: AppContext) => new Date(ctx.clock()).toISOString();

/** Named workflows: `.loom/workflows/<name>.js` in the caller's project first, then the built-ins. */
async function namedScript(ctx: AppContext, thread: AppThread, name: string): Promise<string> {
  const path = join(workspacePathOf(ctx, thread), ".loom", "workflows", `${name}.js`);
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") fail("invalid_request", `workflow ${name} could not be read from ${path}: ${(error as Error).message}`);
  }
  const builtIn = BUILT_IN_WORKFLOWS[name];
  if (builtIn === undefined) fail("invalid_request", `no workflow named ${name}: not in .loom/workflows/ of the project and not a built-in (${Object.keys(BUILT_IN_WORKFLOWS).join(", ")})`);
  return builtIn;
}

/**
 * t3_workflow_start: check the script (it compiles, its code up to the first
 * agent() call runs, its meta is well formed) and the args, then record the
 * workflow (whose budget the decider checks); the runner picks it up from the
 * log. Nothing is recorded for a bad script, args or budget.
 */
export async function startWorkflow(ctx: AppContext, runner: WorkflowRunner, caller: Caller, input: WorkflowStartInput, wait: WaitContext) {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "t3_workflow_start");
  if (acting.thread === null || acting.activeRun === null) fail("parent_not_active", "t3_workflow_start needs a calling thread with a live run: the workflow's agents are its children");
  const thread = acting.thread;
  const run = acting.activeRun;
  if (input.dryRun === true) return dryRunWorkflow(ctx, thread, run.id, input);
  const workflowId = input.clientRequestId === undefined ? joinId("workflow", freshUuid(ctx)) : joinId("workflow", "client-request", thread.id, "request", input.clientRequestId);
  const { mode: _mode, timeoutMs: _timeoutMs, ...work } = input;
  const claim = claimRequest(ctx, thread.id, "t3_workflow_start", work);
  if (!ctx.orchestrator.state.workflows.has(workflowId)) await execute(ctx, (await startCommand(ctx, thread, run.id, input, workflowId, claim)).command);
  if ((input.mode ?? "async") === "async") return workflowView(ctx.orchestrator.state, currentWorkflow(ctx, workflowId), false, now(ctx));
  const release = runner.hold(workflowId);
  try {
    const ended = () => currentWorkflow(ctx, workflowId).status !== "running";
    const done = await waitUntil(ctx, wait, waitBudget(ctx, input.timeoutMs), ended, () => `workflow ${workflowId} is ${currentWorkflow(ctx, workflowId).status}`);
    return workflowView(ctx.orchestrator.state, currentWorkflow(ctx, workflowId), !done, now(ctx));
  } finally {
    release();
  }
}

/** The checked script and its workflow.start command, built the same for a dry run as for the real one. */
async function startCommand(ctx: AppContext, thread: AppThread, parentRunId: string, input: WorkflowStartInput, workflowId: string, claim: RequestClaim | null) {
  const script = input.script ?? (await namedScript(ctx, thread, input.name!));
  const args = input.args ?? null;
  if (input.resumeFrom !== undefined) resumable(ctx, thread.id, input.resumeFrom);
  const inspection = await inspectWorkflowScript(script, args, WORKFLOW_LIBRARY);
  if (!inspection.ok) fail("invalid_request", `the workflow script does not run: ${inspection.error}`);
  const meta = MetaSchema.safeParse(inspection.meta ?? {});
  if (!meta.success) fail("invalid_request", `the workflow's meta is not { name?, description?, phases?: [{ title, detail? }] }: ${meta.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
  const command: Command = {
    type: "workflow.start",
    commandId: `cmd:${workflowId}:start`,
    ...claimField(claim),
    data: {
      workflowId,
      parentThreadId: thread.id,
      parentRunId,
      itemId: joinId("turn-item", workflowId),
      name: meta.data.name ?? input.name ?? null,
      description: meta.data.description ?? null,
      phases: meta.data.phases ?? [],
      script,
      args,
      // The decider holds the pool to the budgets this thread runs under (src/core/workflows/workflows.ts).
      budget: input.budget ?? null,
      clientRequestId: input.clientRequestId ?? null,
      resumeFrom: input.resumeFrom ?? null,
    },
  };
  return { command, script, args };
}

/**
 * dryRun: the script and budget are checked and decided as the real start
 * would be (the same typed errors), then nothing is recorded: the script runs
 * on stand-in answers to count its agent() calls (dryRun.ts), and the answer
 * is their estimate.
 */
async function dryRunWorkflow(ctx: AppContext, thread: AppThread, parentRunId: string, input: WorkflowStartInput): Promise<LaunchEstimate> {
  const { command, script, args } = await startCommand(ctx, thread, parentRunId, { ...input, clientRequestId: undefined }, joinId("workflow", "dry-run", freshUuid(ctx)), null);
  check(ctx, command);
  const fanOut = await scriptFanOut(script, args);
  const notes = ["A dry run: nothing was started or recorded. The agent() calls were counted by running the script with stand-in answers (an empty text, or the smallest value a call's schema allows): a script whose control flow follows the agents' answers may make other calls for real."];
  if (fanOut.unknowable !== null) notes.unshift(`The fan-out is not knowable: ${fanOut.unknowable}.`);
  if (input.resumeFrom !== undefined) notes.push(`resumeFrom: calls the journal of ${input.resumeFrom} answers start nothing for real, and are counted here all the same.`);
  return launchEstimate(ctx.orchestrator.state, {
    calls: fanOut.calls.map((call) => ({ providerInstanceId: call.providerInstanceId ?? thread.providerInstanceId ?? "(none)", model: call.model, role: call.role, round: call.round })),
    complete: fanOut.unknowable === null,
    budget: input.budget,
    notes,
  });
}

/** resumeFrom: an ended workflow of the same parent thread (another thread's is unknown, as for t3_workflow_status). */
function resumable(ctx: AppContext, threadId: string, workflowId: string): Workflow {
  const prior = ctx.orchestrator.state.workflows.get(workflowId);
  if (prior === undefined || prior.parentThreadId !== threadId) fail("workflow_not_found", `no workflow ${workflowId} belongs to this thread to resume from`);
  if (prior.status === "running") fail("workflow_running", `workflow ${workflowId} is still running: stop it (t3_workflow_stop) or wait for it to end before resuming from it`);
  return prior;
}

function currentWorkflow(ctx: AppContext, workflowId: string): Workflow {
  return ctx.orchestrator.state.workflows.get(workflowId) ?? fail("orchestration_error", `workflow ${workflowId} was not recorded`);
}

/** A workflow as its parent thread (or the owner) sees it; another thread's workflow is unknown. */
function ownWorkflow(ctx: AppContext, caller: Caller, workflowId: string, operation: "t3_workflow_status" | "t3_workflow_stop"): Workflow {
  const acting = resolveCaller(ctx.orchestrator.state, caller, operation);
  const workflow = ctx.orchestrator.state.workflows.get(workflowId);
  if (workflow === undefined || (acting.thread !== null && workflow.parentThreadId !== acting.thread.id)) fail("workflow_not_found", `no workflow ${workflowId} belongs to this thread`);
  return workflow;
}

/** t3_workflow_status: the workflow's phases, steps and result, read from its journal. */
export function workflowStatus(ctx: AppContext, caller: Caller, input: WorkflowStatusInput) {
  return workflowView(ctx.orchestrator.state, ownWorkflow(ctx, caller, input.workflowId, "t3_workflow_status"), false, now(ctx));
}

/** t3_workflow_stop: the workflow ends `stopped` and every agent() task still running is stopped as task_cancel does. */
export async function stopWorkflow(ctx: AppContext, caller: Caller, input: WorkflowStopInput) {
  const workflow = ownWorkflow(ctx, caller, input.workflowId, "t3_workflow_stop");
  if (workflow.status === "running") {
    await execute(ctx, { type: "workflow.stop", commandId: `cmd:${workflow.workflowId}:stop`, data: { workflowId: workflow.workflowId, reason: input.reason ?? null } });
  }
  for (const step of workflow.steps) {
    const task = step.taskId === null ? undefined : ctx.orchestrator.state.tasks.get(step.taskId);
    if (task === undefined || task.resultContextTransferId !== null) continue;
    await ctx.orchestrator.dispatch({
      type: "subagent.stop",
      commandId: `cmd:${workflow.workflowId}:stop:${task.taskId}`,
      data: { taskId: task.taskId, reason: input.reason ?? "the workflow was stopped" },
    });
  }
  return workflowView(ctx.orchestrator.state, currentWorkflow(ctx, workflow.workflowId), false, now(ctx));
}

/** orchestration.getWorkflowScript (WebSocket): the script a workflow runs, for the same callers as t3_workflow_status. */
export function getWorkflowScript(ctx: AppContext, caller: Caller, input: WorkflowStatusInput): WorkflowScriptOutput {
  const workflow = ownWorkflow(ctx, caller, input.workflowId, "t3_workflow_status");
  return { workflowId: workflow.workflowId, name: workflow.name, description: workflow.description, status: workflow.status, script: workflow.script, args: workflow.args };
}
