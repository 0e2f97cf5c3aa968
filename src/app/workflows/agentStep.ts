import { createHash } from "node:crypto";
import { z } from "zod";
import type { Failure } from "../../contracts/entities/fields.js";
import type { Workflow, WorkflowStep } from "../../contracts/entities/workflows.js";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { OrchestrationState } from "../../core/state.js";
import { BudgetLimitsSchema } from "../../contracts/entities/budgets.js";
import { outputInstruction, schemaProblem } from "../../core/delegation/structuredResult.js";
import { joinId } from "../../core/ids.js";
import { type AppContext, freshUuid } from "../context.js";
import { AppError, errorOfRejection } from "../errors.js";
import { ROLE_INSTRUCTIONS } from "../delegation/delegate.js";
import { titleFromText } from "../threads/views.js";
import type { AgentCall } from "./sandbox.js";
import type { AppThread } from "../../contracts/thread.js";
import { probeWorkingTree } from "../../workspaces/repository.js";
import { workspacePathOf } from "../workspaces/paths.js";
import { pausedBudget, workflowBudgetReached } from "../../core/budgets/workflowBudget.js";

/** An agent() call that failed, as the script sees it: catchable, with the failure's code (`budget_exceeded`, ...). */
export class WorkflowStepError extends Error {
  override readonly name = "WorkflowStepError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** agent()'s options (Claude Code's { label, phase, schema } plus Loom's target, role, budget). */
const AgentOptionsSchema = z
  .object({
    label: z.string().min(1).max(500).optional(),
    phase: z.string().min(1).max(500).optional(),
    schema: z.record(z.string(), z.unknown()).optional(),
    target: z.object({ providerInstanceId: z.string().min(1).max(200).optional(), model: z.string().min(1).max(200).optional() }).strict().optional(),
    role: z.enum(["implementation", "research", "review", "design", "test", "general"]).optional(),
    isolation: z.enum(["shared", "worktree"]).optional(),
    budget: BudgetLimitsSchema.optional(),
  })
  .strict();
type AgentOptions = z.infer<typeof AgentOptionsSchema>;

/** An agent() call's options, checked as the real call checks them (a dry run counts calls with them too). */
export function parseAgentOptions(raw: unknown): AgentOptions {
  const parsed = AgentOptionsSchema.safeParse(raw);
  if (!parsed.success) throw new TypeError(`agent(prompt, options): ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "options"}: ${issue.message}`).join("; ")}`);
  if (parsed.data.schema !== undefined) {
    const problem = schemaProblem(parsed.data.schema);
    if (problem !== null) throw new TypeError(`agent(prompt, options): schema is not a usable JSON Schema: ${problem}`);
  }
  return parsed.data;
}

/** The call's identity in the script: prompt, options, and its ordinal among identical calls. */
export function callKeyOf(call: AgentCall): string {
  return JSON.stringify([call.prompt, call.options, call.ordinal]);
}

/** Step, task, thread, run and message ids all derive from (workflowId, call key): a re-run lands on the same ones. */
export function stepIds(workflowId: string, callKey: string, attempt = 1) {
  const hash = createHash("sha256").update(callKey).digest("hex").slice(0, 32);
  const id = (prefix: string) => joinId(prefix, "workflow", workflowId, "step", hash);
  const task = (prefix: string) => (attempt === 1 ? id(prefix) : `${id(prefix)}:attempt:${attempt}`);
  return { stepId: id("workflow-step"), taskId: task("subagent"), childThreadId: task("thread"), childRunId: task("run"), childMessageId: task("message") };
}

/** How many times one call's task is issued at most when restarts keep cutting it short. */
const MAX_ATTEMPTS = 3;

function failureOf(error: unknown): Failure {
  if (error instanceof AppError) return { code: error.code, message: error.message };
  return { code: "orchestration_error", message: error instanceof Error ? error.message : String(error) };
}

export interface StepRuntime {
  readonly ctx: AppContext;
  readonly workflowId: string;
  readonly signal: AbortSignal;
  /** Limits how many agent() tasks of this workflow run at once. */
  acquire(): Promise<() => void>;
  dispatch(command: Parameters<AppContext["orchestrator"]["execute"]>[0]): Promise<void>;
  /** For a workflow started with resumeFrom: the prior workflow's completed steps by call identity, until the first call that differs. */
  readonly resume?: ResumeCursor;
}

export interface ResumeCursor {
  readonly workflowId: string;
  readonly steps: ReadonlyMap<string, WorkflowStep>;
  /** Set at the first new call the prior journal cannot answer: every call after it runs fresh. */
  diverged: boolean;
}

/** The resume cursor of a (re-)run: diverged already when the journal holds a call that was not reused. */
export function resumeCursor(state: AppContext["orchestrator"]["state"], workflow: Workflow): ResumeCursor | undefined {
  const prior = workflow.resumeFrom == null ? undefined : state.workflows.get(workflow.resumeFrom);
  if (prior === undefined) return undefined;
  const steps = new Map(prior.steps.filter((step) => step.status === "completed").map((step) => [step.callKey, step]));
  return { workflowId: prior.workflowId, steps, diverged: workflow.steps.some((step) => step.resumedFrom === undefined) };
}

/**
 * Answer one agent() call from the journal, or do it: journal the step,
 * request its delegated task (exactly once: its ids are derived), wait for
 * the task's final result, journal the outcome. A finished step is answered
 * (or thrown) from the journal without any new work.
 */
export async function runAgentStep(rt: StepRuntime, call: AgentCall): Promise<unknown> {
  const state = rt.ctx.orchestrator.state;
  const callKey = callKeyOf(call);
  const first = stepIds(rt.workflowId, callKey);
  const workflow = liveWorkflow(rt);
  const journaled = workflow.steps.find((step) => step.stepId === first.stepId);
  let attempt = journaled?.attempt ?? 1;
  let ids = stepIds(rt.workflowId, callKey, attempt);
  if (journaled !== undefined && journaled.status !== "running") return answered(journaled);
  if (journaled === undefined && rt.resume !== undefined && !rt.resume.diverged) {
    const reused = rt.resume.steps.get(callKey);
    if (reused !== undefined) return reuse(rt, ids, callKey, call, reused);
    rt.resume.diverged = true;
  }
  const options = parseAgentOptions(call.options);
  const now = () => new Date(rt.ctx.clock()).toISOString();
  const release = await rt.acquire();
  try {
    // Paused on budget: the call waits for a raise, then goes on as though nothing had happened.
    await untilUnpaused(rt, now);
    if (journaled === undefined) {
      // The decider refuses a task of a pool that ran out; asking its rule first journals the refused call without a task.
      const reached = workflowBudgetReached(state, liveWorkflow(rt), now());
      if (reached !== null) {
        const error = { code: "budget_exceeded", message: `the ${reached.kind} budget of workflow ${rt.workflowId} ran out (${reached.spent} of ${reached.limit})` };
        await journalStart(rt, ids, callKey, call, options, false);
        await journalFinish(rt, ids.stepId, { status: "failed", error });
        throw new WorkflowStepError(error.code, error.message);
      }
      await journalStart(rt, ids, callKey, call, options, true);
    }
    let task;
    for (;;) {
      while (!state.tasks.has(ids.taskId)) {
        await untilUnpaused(rt, now);
        try {
          await requestTask(rt, liveWorkflow(rt), ids, call, options);
        } catch (error) {
          const failure = failureOf(error);
          // Calls made together: another took the last of a pausing pool first, so this one waits for the raise too.
          if (failure.code === "budget_exceeded" && pausedBudget(state, liveWorkflow(rt), now()) !== null) continue;
          await journalFinish(rt, ids.stepId, { status: "failed", error: failure });
          throw new WorkflowStepError(failure.code, failure.message);
        }
      }
      await taskFinal(rt, ids.taskId);
      task = state.tasks.get(ids.taskId)!;
      // Lost to a restart (interrupted, never cancelled, stopped or interrupted on request, no budget stop): issue the call again, once per attempt.
      const lost = task.status === "interrupted" && task.cancelRequestedAt === null && (task.budgetExceeded ?? null) === null && !stoppedOnRequest(state, task);
      if (!lost || attempt >= MAX_ATTEMPTS) break;
      attempt += 1;
      ids = stepIds(rt.workflowId, callKey, attempt);
      await rt.dispatch({
        type: "workflow.step.reissue",
        commandId: `cmd:${ids.stepId}:reissue:${attempt}`,
        data: { workflowId: rt.workflowId, stepId: ids.stepId, attempt, taskId: ids.taskId, childThreadId: ids.childThreadId },
      });
    }
    if (task.status !== "completed" && (task.budgetExceeded ?? null) === null && (task.cancelRequestedAt !== null || stoppedOnRequest(state, task))) {
      // Stopped by a person (Stop, Interrupt or task_cancel on the child): a failure the script can catch, never a silent re-run.
      const why = task.cancelReason ?? state.runs.get(task.childRunId ?? "")?.endReason ?? "stopped";
      const error = { code: "agent_stopped", message: `agent ${options.label ?? ids.taskId} was stopped (${why}); it is not run again` };
      await journalFinish(rt, ids.stepId, { status: "failed", error });
      throw new WorkflowStepError(error.code, error.message);
    }
    if (task.status !== "completed") {
      const error = { code: "agent_failed", message: `agent ${options.label ?? ids.taskId} ended ${task.status}${task.summary === null ? "" : `: ${task.summary}`}` };
      await journalFinish(rt, ids.stepId, { status: "failed", error });
      throw new WorkflowStepError(error.code, error.message);
    }
    if (options.schema !== undefined && task.structuredResult === undefined) {
      const errors = task.structuredResultError?.errors.join("; ") ?? "no JSON value";
      const error = { code: "schema_mismatch", message: `agent ${options.label ?? ids.taskId} did not answer with a value matching its schema: ${errors}` };
      await journalFinish(rt, ids.stepId, { status: "failed", error });
      throw new WorkflowStepError(error.code, error.message);
    }
    const result = options.schema !== undefined ? task.structuredResult : (task.summary ?? "");
    await journalFinish(rt, ids.stepId, { status: "completed", result });
    return result;
  } finally {
    release();
  }
}

/** The task's own run ended because someone asked it to stop (an interrupt or Stop, or a release to stop a turn that cannot be interrupted), not because it was lost. */
function stoppedOnRequest(state: Readonly<OrchestrationState>, task: DelegatedTask): boolean {
  const run = task.childRunId === null ? undefined : state.runs.get(task.childRunId);
  return run !== undefined && (run.interruptRequestedAt !== null || run.endReason === "stopped_by_session_release");
}

/** Answer a resumed workflow's call from the prior journal: one journal entry, no task. */
async function reuse(rt: StepRuntime, ids: ReturnType<typeof stepIds>, callKey: string, call: AgentCall, reused: WorkflowStep): Promise<unknown> {
  const options = parseAgentOptions(call.options);
  await journalStart(rt, ids, callKey, call, options, false, { workflowId: rt.resume!.workflowId, stepId: reused.stepId });
  const step = liveWorkflow(rt).steps.find((candidate) => candidate.stepId === ids.stepId);
  if (step === undefined) throw new WorkflowStepError("orchestration_error", `the reuse of step ${reused.stepId} of workflow ${rt.resume!.workflowId} was not journaled`);
  return answered(step);
}

export function liveWorkflow(rt: StepRuntime): Workflow {
  const workflow = rt.ctx.orchestrator.state.workflows.get(rt.workflowId);
  if (workflow === undefined || workflow.status !== "running" || rt.signal.aborted) {
    throw new WorkflowStepError("workflow_stopped", `workflow ${rt.workflowId} is ${workflow?.status ?? "gone"}`);
  }
  return workflow;
}

export function answered(step: WorkflowStep): unknown {
  if (step.status === "completed") return step.result;
  throw new WorkflowStepError(step.error?.code ?? "agent_failed", step.error?.message ?? "the agent failed");
}

export async function journalStart(
  rt: StepRuntime,
  ids: ReturnType<typeof stepIds>,
  callKey: string,
  call: AgentCall,
  options: Pick<AgentOptions, "label" | "target">,
  withTask: boolean,
  resumedFrom?: { workflowId: string; stepId: string },
) {
  const workflow = liveWorkflow(rt);
  const parent = rt.ctx.orchestrator.state.threads.get(workflow.parentThreadId);
  await rt.dispatch({
    type: "workflow.step.start",
    commandId: `cmd:${ids.stepId}:start`,
    data: {
      workflowId: rt.workflowId,
      stepId: ids.stepId,
      callKey,
      label: options.label ?? null,
      phase: call.phase,
      taskId: withTask ? ids.taskId : null,
      childThreadId: withTask ? ids.childThreadId : null,
      providerInstanceId: withTask ? (options.target?.providerInstanceId ?? parent?.providerInstanceId ?? null) : null,
      ...(resumedFrom === undefined ? {} : { resumedFrom }),
    },
  });
}

export async function journalFinish(rt: StepRuntime, stepId: string, outcome: { status: "completed"; result: unknown } | { status: "failed"; error: Failure }) {
  await rt.dispatch({
    type: "workflow.step.finish",
    commandId: `cmd:${stepId}:finish`,
    data: { workflowId: rt.workflowId, stepId, ...(outcome.status === "completed" ? { status: "completed", result: outcome.result, error: null } : { status: "failed", error: outcome.error }) },
  });
}

async function requestTask(rt: StepRuntime, workflow: Workflow, ids: ReturnType<typeof stepIds>, call: AgentCall, options: AgentOptions) {
  const state = rt.ctx.orchestrator.state;
  const parent = state.threads.get(workflow.parentThreadId);
  const providerInstanceId = options.target?.providerInstanceId ?? parent?.providerInstanceId ?? null;
  if (parent === undefined || providerInstanceId === null) throw new AppError("provider_unavailable", "the workflow's parent thread has no provider to run agents on");
  const brief = options.role === undefined ? call.prompt : `${ROLE_INSTRUCTIONS[options.role]}\n\n${call.prompt}`;
  const prompt = options.schema === undefined ? brief : `${brief}\n\n${outputInstruction(options.schema)}`;
  // worktree: a git worktree of the child's own, branched from the parent's workspace as it is now (as delegate_task's isolation).
  const isolation = options.isolation === "worktree" ? { isolation: "worktree" as const, workspaceRepoPath: await parentRepository(rt.ctx, parent) } : {};
  const outcome = await rt.ctx.orchestrator.execute({
    type: "delegated_task.request",
    // A fresh command id per attempt (as delegate_task): the task ids stay derived, so a duplicate is refused as task_already_exists.
    commandId: `cmd:${ids.taskId}:request:${freshUuid(rt.ctx)}`,
    data: {
      taskId: ids.taskId,
      parentThreadId: workflow.parentThreadId,
      parentRunId: workflow.parentRunId,
      childThreadId: ids.childThreadId,
      childRunId: ids.childRunId,
      childMessageId: ids.childMessageId,
      task: call.prompt,
      prompt,
      title: options.label ?? titleFromText(call.prompt) ?? "Workflow agent",
      role: options.role ?? null,
      mode: "async",
      providerInstanceId,
      model: options.target?.model ?? null,
      runtimeMode: parent.runtimeMode,
      interactionMode: parent.interactionMode,
      clientRequestId: null,
      // The workflow takes the result; the parent is not woken per agent.
      wakePolicy: "never",
      ...isolation,
      ...(options.schema === undefined ? {} : { outputSchema: options.schema }),
      // The call's own budget; the decider narrows it to what is left of the workflow's pool.
      ...(options.budget === undefined ? {} : { budget: options.budget }),
      workflowStep: { workflowId: workflow.workflowId, stepId: ids.stepId },
    },
  });
  if (outcome.receipt.status === "rejected" && outcome.receipt.rejection.code !== "task_already_exists") {
    throw errorOfRejection(outcome.receipt.rejection);
  }
}

async function parentRepository(ctx: AppContext, parent: AppThread): Promise<string> {
  const probe = await probeWorkingTree(workspacePathOf(ctx, parent));
  if (probe.tree === null) throw new AppError("workspace_unavailable", `isolation worktree needs the parent's workspace in a git repository: ${probe.reason}`);
  if (probe.tree.head === null) throw new AppError("workspace_unavailable", `isolation worktree needs a commit in the parent's repository (${probe.tree.root}) to branch from`);
  return probe.tree.root;
}

/**
 * Resolves at once unless a budget over the workflow is paused
 * (pausedBudget); then once a raise gives it room. Rejects when the workflow
 * stops or the runner shuts down meanwhile.
 */
function untilUnpaused(rt: StepRuntime, now: () => string): Promise<void> {
  const orchestrator = rt.ctx.orchestrator;
  const paused = () => pausedBudget(orchestrator.state, liveWorkflow(rt), now()) !== null;
  if (!paused()) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const check = () => {
      try {
        if (paused()) return;
        resolve();
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
      subscription.close();
      rt.signal.removeEventListener("abort", check);
    };
    const subscription = orchestrator.follow(orchestrator.state.lastSequence, check);
    rt.signal.addEventListener("abort", check);
  });
}

/** Resolves once the task's result is final; rejects when the workflow stops or the runner shuts down. */
function taskFinal(rt: StepRuntime, taskId: string): Promise<void> {
  const orchestrator = rt.ctx.orchestrator;
  const settled = () => orchestrator.state.tasks.get(taskId)?.resultContextTransferId != null;
  const stopped = () => rt.signal.aborted || orchestrator.state.workflows.get(rt.workflowId)?.status !== "running";
  if (settled()) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      subscription.close();
      rt.signal.removeEventListener("abort", finish);
      if (settled()) resolve();
      else reject(new WorkflowStepError("workflow_stopped", `workflow ${rt.workflowId} stopped while agent ${taskId} was running`));
    };
    const subscription = orchestrator.follow(orchestrator.state.lastSequence, () => {
      if (settled() || stopped()) finish();
    });
    rt.signal.addEventListener("abort", finish);
    if (settled() || stopped()) finish();
  });
}
