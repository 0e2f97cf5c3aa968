import { randomUUID } from "node:crypto";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import { joinId } from "../../core/ids.js";
import type { DelegationReactor, TaskWaiters } from "../../engine/delegationReactor.js";
import type { McpInvocationScope } from "../credentialRegistry.js";
import { OrchestratorMcpError } from "../failures.js";
import type { McpToolContext } from "../toolkit.js";
import type { DelegateTaskInput } from "../toolkits/delegation/schemas.js";
import { type ThreadToolsContext, fail } from "./../threads/context.js";
import { type Caller, callerOf, resolveModes, resolveTarget } from "../threads/policy.js";
import { waitBudget, waitUntil } from "../threads/waits.js";
import { titleFromText } from "../threads/views.js";
import { delegateTaskResult } from "./taskView.js";

export interface DelegationToolsContext extends ThreadToolsContext {
  readonly waiters: TaskWaiters;
  readonly reactor: DelegationReactor;
}

/** The role instruction that precedes the brief; the child gets nothing else from the parent. */
export const ROLE_INSTRUCTIONS: Readonly<Record<NonNullable<DelegateTaskInput["role"]>, string>> = {
  implementation: "You are implementing a change. Make it, check that it works, and report what you changed.",
  research: "You are researching. Find the facts asked for, cite where they come from, and report them concisely.",
  review: "You are reviewing. Look for defects, risks and missing pieces; report each finding with its evidence.",
  design: "You are designing. Propose a design with its trade-offs and the decision you recommend.",
  test: "You are testing. Exercise the behaviour described, report what passed and what failed, with evidence.",
  general: "You are working on a delegated task. Complete it and report the result.",
};

/** Rejection codes of delegated_task.request and the wire failure they become. */
const REQUEST_FAILURES: Readonly<Record<string, ConstructorParameters<typeof OrchestratorMcpError>[0]>> = {
  parent_not_active: "parent_not_active",
  provider_unavailable: "provider_unavailable",
  delegation_depth_exceeded: "delegation_depth_exceeded",
  active_children_exceeded: "active_children_exceeded",
  spawn_budget_exceeded: "spawn_budget_exceeded",
  thread_not_found: "thread_not_found",
  thread_deleted: "thread_not_found",
};

/**
 * Delegation needs an active parent run owned by the credential's provider
 * session (spec 000): an outside client, an idle thread, or a credential of a
 * session that no longer carries the thread are refused.
 */
function requireOwningSession(ctx: ThreadToolsContext, caller: Caller, scope: McpInvocationScope) {
  if (scope.kind !== "thread" || caller.thread === null) fail("parent_not_active", "delegate_task needs a calling thread with a live run");
  const session = ctx.orchestrator.state.providerSessions.get(scope.providerSessionId);
  if (caller.activeRun === null || session === undefined || session.releasedAt !== null || session.threadId !== caller.thread.id) {
    fail("parent_not_active", `thread ${caller.thread.id} has no active run owned by this provider session`);
  }
  return { thread: caller.thread, run: caller.activeRun };
}

/** delegate_task: create a child thread on any provider and hand it the task. */
export async function delegateTask(ctx: DelegationToolsContext, scope: McpInvocationScope, input: DelegateTaskInput, tool: McpToolContext) {
  const state = ctx.orchestrator.state;
  const caller = callerOf(state, scope);
  const parent = requireOwningSession(ctx, caller, scope);
  const existing =
    input.clientRequestId === undefined
      ? undefined
      : [...state.tasks.values()].find((task) => task.parentThreadId === parent.thread.id && task.clientRequestId === input.clientRequestId);
  const task = existing ?? (await requestTask(ctx, caller, parent, input));
  if ((input.mode ?? "async") === "async") return delegateTaskResult(ctx.orchestrator.state, task, false);
  return waitForTask(ctx, task.taskId, input.timeoutMs, tool);
}

async function requestTask(ctx: DelegationToolsContext, caller: Caller, parent: ReturnType<typeof requireOwningSession>, input: DelegateTaskInput): Promise<DelegatedTask> {
  const target = await resolveTarget(ctx.registry, caller, input.target);
  const modes = resolveModes(caller, target.availability, input);
  const key = input.clientRequestId ?? randomUUID();
  const id = (prefix: string) => joinId(prefix, "client-request", parent.thread.id, "request", key);
  const taskId = id("subagent");
  const prompt = input.role === undefined ? input.task : `${ROLE_INSTRUCTIONS[input.role]}\n\n${input.task}`;
  const receipt = await ctx.orchestrator.dispatch({
    type: "delegated_task.request",
    // A fresh command id per attempt: a rejected command keeps its receipt, so
    // a derived one would repeat a retryable refusal (active_children_exceeded,
    // provider_unavailable) forever. The task, thread and run ids stay derived,
    // so a duplicate is refused (task_already_exists) and answered below.
    commandId: joinId("command:delegate_task", "client-request", parent.thread.id, "request", key, "attempt", randomUUID()),
    data: {
      taskId,
      parentThreadId: parent.thread.id,
      parentRunId: parent.run.id,
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
    },
  });
  if (receipt.status === "rejected") {
    // A concurrent retry with the same clientRequestId created it first.
    const created = receipt.rejection.code === "task_already_exists" ? ctx.orchestrator.state.tasks.get(taskId) : undefined;
    if (created !== undefined) return created;
    throw new OrchestratorMcpError(REQUEST_FAILURES[receipt.rejection.code] ?? "orchestration_error", receipt.rejection.message);
  }
  const task = ctx.orchestrator.state.tasks.get(taskId);
  if (task === undefined) fail("orchestration_error", `task ${taskId} was not recorded`);
  return task;
}

/**
 * mode wait: return on the task's result, a blocking question, a live approval
 * of the task's own work, or the wait cap. The child keeps running after a
 * timeout. A result handed over here is acknowledged, so the parent is not
 * woken for it again; one that arrives as the wait ends is delivered.
 */
export async function waitForTask(ctx: DelegationToolsContext, taskId: string, timeoutMs: number | undefined, tool: McpToolContext) {
  const current = () => delegateTaskResult(ctx.orchestrator.state, ctx.orchestrator.state.tasks.get(taskId)!, false);
  let acknowledged = false;
  const release = ctx.waiters.register(taskId, () => {
    const task = ctx.orchestrator.state.tasks.get(taskId);
    if (!acknowledged && task !== undefined) ctx.reactor.deliverCompletion(task);
  });
  try {
    const ready = () => {
      const result = current();
      return result.workState === "result_available" || result.hasPendingQuestion || result.pendingApproval !== null;
    };
    const done = await waitUntil(ctx, tool, waitBudget(ctx, timeoutMs), ready, () => `task ${taskId} is ${current().status}`);
    const result = current();
    if (result.workState === "result_available") {
      const task = ctx.orchestrator.state.tasks.get(taskId)!;
      if (task.completionDelivery === "pending") {
        acknowledged = true;
        await ctx.orchestrator.dispatch({ type: "delegated_task.completion-delivery.acknowledge", commandId: `cmd:ack:${taskId}`, data: { taskId } });
      }
    }
    return { ...result, waitTimedOut: !done };
  } finally {
    release();
  }
}
