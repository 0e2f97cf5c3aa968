import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { DelegateTaskInput } from "../../contracts/tools/delegationTools.js";
import { outputInstruction, schemaProblem } from "../../core/delegation/structuredResult.js";
import { joinId } from "../../core/ids.js";
import { type ActingCaller, type Caller, resolveCaller, traceField } from "../caller.js";
import type { Command } from "../../contracts/commands.js";
import type { LaunchEstimate } from "../../contracts/tools/launchEstimate.js";
import { launchEstimate } from "../budgets/launchEstimate.js";
import { type AppContext, check, execute, freshUuid } from "../context.js";
import { AppError, fail } from "../errors.js";
import { type RequestClaim, claimField, claimRequest } from "../idempotency.js";
import { resolveModes, resolveTarget } from "../policy.js";
import { touched } from "../touched.js";
import { withRecordedWait } from "../threads/recordedWait.js";
import { activeRunOf } from "../../engine/queries.js";
import { type HoldOutcome, holdTasks } from "./taskHolds.js";
import { titleFromText } from "../threads/views.js";
import { type WaitContext, waitBudget, waitUntil } from "../waits.js";
import { delegateTaskResult, delegatedTaskProgress } from "./taskView.js";
import { probeWorkingTree } from "../../workspaces/repository.js";
import { workspacePathOf } from "../workspaces/paths.js";

/** The role instruction that precedes the brief; the child gets nothing else from the parent. */
export const ROLE_INSTRUCTIONS: Readonly<Record<NonNullable<DelegateTaskInput["role"]>, string>> = {
  implementation: "You are implementing a change. Make it, check that it works, and report what you changed.",
  research: "You are researching. Find the facts asked for, cite where they come from, and report them concisely.",
  review: "You are reviewing. Look for defects, risks and missing pieces; report each finding with its evidence.",
  design: "You are designing. Propose a design with its trade-offs and the decision you recommend.",
  test: "You are testing. Exercise the behaviour described, report what passed and what failed, with evidence.",
  general: "You are working on a delegated task. Complete it and report the result.",
};

interface Parent {
  readonly acting: ActingCaller;
  readonly threadId: string;
  readonly runId: string;
}

/**
 * Delegation needs an active parent run owned by the credential's provider
 * session (spec 000): an outside client, an idle thread, or a credential of a
 * session that no longer carries the thread are refused.
 */
function requireOwningSession(ctx: AppContext, caller: Caller): Parent {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "delegate_task");
  if (caller.kind !== "agent" || acting.thread === null) fail("parent_not_active", "delegate_task needs a calling thread with a live run");
  const session = ctx.orchestrator.state.providerSessions.get(caller.providerSessionId);
  if (acting.activeRun === null || session === undefined || session.releasedAt !== null || session.threadId !== acting.thread.id) {
    fail("parent_not_active", `thread ${acting.thread.id} has no active run owned by this provider session`);
  }
  return { acting, threadId: acting.thread.id, runId: acting.activeRun.id };
}

/** An output schema that does not compile is refused before anything is recorded. */
export function requireUsableSchema(schema: DelegateTaskInput["outputSchema"]): void {
  if (schema === undefined) return;
  const problem = schemaProblem(schema);
  if (problem !== null) fail("invalid_request", `outputSchema is not a usable JSON Schema: ${problem}`);
}

/** The task id a request key derives (its child thread, run and message ids follow the same pattern). */
function taskIdFor(parentThreadId: string, key: string): string {
  return joinId("subagent", "client-request", parentThreadId, "request", key);
}

/** A delegate_task input that starts the task (no dryRun). */
export type TaskDelegation = DelegateTaskInput & { readonly dryRun?: false };

type TaskAnswer = ReturnType<typeof delegateTaskResult> | Awaited<ReturnType<typeof waitForTask>>;

/** delegate_task: create a child thread on any provider and hand it the task; with dryRun, estimate it and create nothing. */
export async function delegateTask(ctx: AppContext, caller: Caller, input: DelegateTaskInput & { dryRun: true }, wait: WaitContext): Promise<LaunchEstimate>;
export async function delegateTask(ctx: AppContext, caller: Caller, input: TaskDelegation, wait: WaitContext): Promise<TaskAnswer>;
export async function delegateTask(ctx: AppContext, caller: Caller, input: DelegateTaskInput, wait: WaitContext): Promise<TaskAnswer | LaunchEstimate>;
export async function delegateTask(ctx: AppContext, caller: Caller, input: DelegateTaskInput, wait: WaitContext): Promise<TaskAnswer | LaunchEstimate> {
  const parent = requireOwningSession(ctx, caller);
  requireUsableSchema(input.outputSchema);
  if (input.dryRun === true) return dryRunDelegation(ctx, parent, input);
  const task = await startTask(ctx, parent, input, undefined);
  if ((input.mode ?? "async") === "async") return delegateTaskResult(ctx.orchestrator, task, false);
  return waitForTask(ctx, task.taskId, input.timeoutMs, wait, caller, parent.runId);
}

/** The bounds of the MCP task handle a delegation records with its own command (docs/mcp.md, "Tasks"). */
export interface ToolTaskBounds {
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
}

/**
 * delegate_task served as an MCP task: the task-less call in mode async,
 * whose delegated_task.request also records the task's handle, so the
 * create is one commit. A retried call (its clientRequestId) answers the
 * task it started and writes nothing.
 */
export async function delegateAsToolTask(ctx: AppContext, caller: Caller, input: TaskDelegation, toolTask: ToolTaskBounds): Promise<DelegatedTask> {
  const parent = requireOwningSession(ctx, caller);
  requireUsableSchema(input.outputSchema);
  return startTask(ctx, parent, { ...input, mode: "async" }, toolTask);
}

async function startTask(ctx: AppContext, parent: Parent, input: DelegateTaskInput, toolTask: ToolTaskBounds | undefined): Promise<DelegatedTask> {
  // Keys are scoped to the parent thread, like the task ids they derive. mode and
  // timeoutMs only choose how this call answers: a retry may wait for the task it started.
  const { mode: _mode, timeoutMs: _timeoutMs, ...work } = input;
  const claim = claimRequest(ctx, parent.threadId, "delegate_task", work);
  const existing = input.clientRequestId === undefined ? undefined : ctx.orchestrator.state.tasks.get(taskIdFor(parent.threadId, input.clientRequestId));
  return existing ?? (await requestTask(ctx, parent, input, claim, toolTask));
}

/** The delegated_task.request a call records (its task id beside it), built the same for a dry run as for the real one. */
async function taskRequest(ctx: AppContext, parent: Parent, input: DelegateTaskInput, claim: RequestClaim | null, toolTask?: ToolTaskBounds): Promise<{ command: Command; taskId: string }> {
  const target = await resolveTarget(ctx.registry, parent.acting, input.target);
  const modes = resolveModes(parent.acting, target.availability, input);
  const key = input.clientRequestId ?? freshUuid(ctx);
  const id = (prefix: string) => joinId(prefix, "client-request", parent.threadId, "request", key);
  const taskId = taskIdFor(parent.threadId, key);
  const brief = input.role === undefined ? input.task : `${ROLE_INSTRUCTIONS[input.role]}\n\n${input.task}`;
  const prompt = input.outputSchema === undefined ? brief : `${brief}\n\n${outputInstruction(input.outputSchema)}`;
  const isolation = input.isolation === "worktree" ? { isolation: "worktree" as const, workspaceRepoPath: await parentRepository(ctx, parent) } : {};
  const command: Command = {
      type: "delegated_task.request",
      // A fresh command id per attempt: a rejected command keeps its receipt, so
      // a derived one would repeat a retryable refusal (active_children_exceeded,
      // provider_unavailable) forever. The task, thread and run ids stay derived,
      // so a duplicate is refused (task_already_exists) and answered below.
      commandId: joinId("command:delegate_task", "client-request", parent.threadId, "request", key, "attempt", freshUuid(ctx)),
      ...claimField(claim),
      ...traceField(parent.acting.identity),
      data: {
        taskId,
        parentThreadId: parent.threadId,
        parentRunId: parent.runId,
        childThreadId: id("thread"),
        childRunId: id("run"),
        childMessageId: id("message"),
        task: input.task,
        prompt,
        title: input.title ?? titleFromText(input.task) ?? "Delegated task",
        role: input.role ?? null,
        mode: input.mode ?? "async",
        providerInstanceId: target.providerInstanceId,
        model: target.model,
        ...modes,
        clientRequestId: input.clientRequestId ?? null,
        ...(input.relation === undefined ? {} : { relation: input.relation }),
        ...isolation,
        ...(input.outputSchema === undefined ? {} : { outputSchema: input.outputSchema }),
        ...(input.budget === undefined ? {} : { budget: input.budget }),
        ...(input.approvalRouting === undefined ? {} : { approvalRouting: input.approvalRouting }),
        ...(input.onCrash === undefined ? {} : { onCrash: input.onCrash }),
        ...(input.target?.fallbacks === undefined ? {} : { fallbacks: input.target.fallbacks.map((f) => ({ providerInstanceId: f.providerInstanceId, model: f.model ?? null })) }),
        ...(target.failedOver === null ? {} : { startedOnFallback: target.failedOver }),
        ...(toolTask === undefined ? {} : { toolTask: { ttlMs: toolTask.ttlMs, pollIntervalMs: toolTask.pollIntervalMs } }),
      },
    };
  return { command, taskId };
}

async function requestTask(ctx: AppContext, parent: Parent, input: DelegateTaskInput, claim: RequestClaim | null, toolTask: ToolTaskBounds | undefined): Promise<DelegatedTask> {
  const { command, taskId } = await taskRequest(ctx, parent, input, claim, toolTask);
  try {
    const executed = await execute(ctx, command);
    return touched(executed.events).tasks.get(taskId) ?? ctx.orchestrator.state.tasks.get(taskId) ?? fail("orchestration_error", `task ${taskId} was not recorded`);
  } catch (error) {
    // A concurrent retry with the same clientRequestId created it first.
    const created = error instanceof AppError && error.rejectionCode === "task_already_exists" ? ctx.orchestrator.state.tasks.get(taskId) : undefined;
    if (created !== undefined) return created;
    throw error;
  }
}

/**
 * dryRun: the request is built and decided as the real call would be, so a
 * bad target, a wider budget or a spent pool is the same typed error; then
 * nothing is recorded, and the answer is the estimate of the one task.
 */
async function dryRunDelegation(ctx: AppContext, parent: Parent, input: DelegateTaskInput): Promise<LaunchEstimate> {
  const { command } = await taskRequest(ctx, parent, { ...input, clientRequestId: undefined }, null);
  check(ctx, command);
  const data = command.type === "delegated_task.request" ? command.data : fail("orchestration_error", "the dry run built no delegated_task.request");
  // The task's budget limits its subtree: the task itself is no spawn of it.
  const { spawns: _spawns, ...budget } = input.budget ?? {};
  return launchEstimate(ctx.orchestrator.state, {
    calls: [{ providerInstanceId: data.providerInstanceId, model: data.model, role: data.role, round: 0 }],
    complete: true,
    budget: input.budget === undefined ? undefined : budget,
    notes: ["A dry run: nothing was started or recorded. delegate_task starts one task; what the child delegates in turn is in its figures."],
  });
}

/**
 * isolation worktree: the child branches from the parent's workspace as it is
 * now, so that workspace must be a git repository with a commit.
 */
async function parentRepository(ctx: AppContext, parent: Parent): Promise<string> {
  const thread = ctx.orchestrator.state.threads.get(parent.threadId)!;
  const path = workspacePathOf(ctx, thread);
  const probe = await probeWorkingTree(path);
  if (probe.tree === null) fail("workspace_unavailable", `isolation worktree needs your workspace in a git repository: ${probe.reason}`);
  if (probe.tree.head === null) fail("workspace_unavailable", `isolation worktree needs a commit in your repository (${probe.tree.root}) to branch from`);
  return probe.tree.root;
}

/**
 * mode wait: return on the task's result, a blocking question, a live approval
 * of the task's own work, or the wait cap. The child keeps running after a
 * timeout. A result handed over here is acknowledged, so the parent is not
 * woken for it again; one that arrives as the wait ends is delivered.
 */
export async function waitForTask(ctx: AppContext, taskId: string, timeoutMs: number | undefined, wait: WaitContext, caller?: Caller, parentRunId?: string) {
  const current = () => delegateTaskResult(ctx.orchestrator, ctx.orchestrator.state.tasks.get(taskId)!, false);
  const waitingRun = parentRunId ?? (caller?.kind === "agent" ? activeRunOf(ctx.orchestrator.state, caller.threadId)?.id : undefined) ?? null;
  // Held before the first look, so no node notifies the parent of what this wait may hand over.
  const holds = await holdTasks(ctx, [taskId], waitingRun);
  let outcome: HoldOutcome = { took: [], owed: [] };
  try {
    // Checked after every commit while the wait lasts: the in-memory progress alone, not the full result (which reads the latest run's text).
    const ready = () => {
      const progress = delegatedTaskProgress(ctx.orchestrator.state, ctx.orchestrator.state.tasks.get(taskId)!);
      return progress.final || progress.question !== undefined || progress.approval !== undefined;
    };
    const waitForResult = () => waitUntil(ctx, wait, waitBudget(ctx, timeoutMs), ready, () => current().limitRecovery?.text ?? `task ${taskId} is ${current().status}`);
    // A wait that blocks is recorded on the caller's active run (blockedOnThreadWait).
    const done = ready() || caller === undefined ? await waitForResult() : await withRecordedWait(ctx, caller, "delegate_task", taskId, waitForResult);
    const result = current();
    // The provider cut the wait short: a blocking question (or routed approval) it would have returned is owed to the waiting run.
    const owes = wait.signal.aborted && (result.hasPendingQuestion || result.pendingApproval !== null);
    outcome = { took: result.workState === "result_available" ? [taskId] : [], owed: owes ? [taskId] : [] };
    return { ...result, waitTimedOut: !done };
  } finally {
    await holds.release(outcome);
  }
}
