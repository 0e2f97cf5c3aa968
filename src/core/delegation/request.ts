import type { DelegatedTaskRequestCommand } from "../../contracts/commands/delegationCommands.js";
import { isTerminalDelegatedTaskStatus } from "../../contracts/entities/delegatedTasks.js";
import type { ExecutionNode } from "../../contracts/entities/runs.js";
import { contextTransferEvent, nodeEvent, toolTaskEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { Changes } from "../run/changes.js";
import { isActiveRunStatus, newRun, startRun } from "../run/lifecycle.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";
import { exhaustedBudget, exhaustedText, narrowedBudget } from "../budgets/budgets.js";
import { stepBudget, workflowBudgetReached } from "../budgets/workflowBudget.js";
import { forkTransfer } from "../lineage/fork.js";
import { newThreadRecord } from "../thread/fresh.js";
import { newToolTask } from "../toolTasks/toolTasks.js";

/** How deep a thread sits below its root: 0 for a root, its task's depth for a child. */
export function threadDepth(changes: Changes, threadId: string): number {
  const taskId = changes.state.taskByChildThread.get(threadId);
  return taskId === undefined ? 0 : (changes.task(taskId)?.depth ?? 0);
}

/**
 * delegated_task.request (spec 000, Delegated Task Lifecycle): the child
 * thread with subagent lineage, its first run carrying only the task prompt
 * (relation `fork`: lineage fork, and the parent's transcript as a fork
 * context transfer delivered with the prompt),
 * the parent's app-owned subagent projection and turn items, parent and child
 * execution nodes, and a consumed subagent_spawn context transfer — one
 * decision, one transaction.
 */
export function decideDelegatedTaskRequest(state: OrchestrationState, command: DelegatedTaskRequestCommand, ctx: DecideContext): Decision {
  const data = command.data;
  const found = liveThread(state, data.parentThreadId);
  if (found.kind === "rejected") return found;
  const parent = found.thread;
  const parentRun = state.runs.get(data.parentRunId);
  // A workflow's agent() calls hang off the run that started it, which may have ended while the script runs on.
  const workflow = data.workflowStep === undefined ? undefined : state.workflows.get(data.workflowStep.workflowId);
  const forWorkflow = workflow !== undefined && workflow.status === "running" && workflow.parentThreadId === parent.id && workflow.parentRunId === data.parentRunId;
  if (data.workflowStep !== undefined && !forWorkflow) return reject("workflow_not_running", `workflow ${data.workflowStep.workflowId} of thread ${parent.id} is not running`);
  // A merge queue's resolver is delegated while the parent is idle (a merge needs it idle): it hangs off the parent's last run.
  const resolving = data.mergeResolution === undefined ? undefined : state.mergeQueueEntries.get(data.mergeResolution.entryId);
  const forMerge = resolving !== undefined && resolving.parentThreadId === parent.id && resolving.status === "merging";
  if (data.mergeResolution !== undefined && !forMerge) return reject("merge_entry_not_open", `merge queue entry ${data.mergeResolution.entryId} of thread ${parent.id} is not merging`);
  if (parentRun === undefined || parentRun.threadId !== parent.id || (!forWorkflow && !forMerge && !isActiveRunStatus(parentRun.status))) {
    return reject("parent_not_active", `run ${data.parentRunId} is not an active run of thread ${parent.id}`);
  }
  if (state.tasks.has(data.taskId)) return reject("task_already_exists", `task ${data.taskId} already exists`);
  if (state.threads.has(data.childThreadId)) return reject("thread_already_exists", `thread ${data.childThreadId} already exists`);
  const facts = ctx.providers(data.providerInstanceId);
  if (facts === null) return reject("provider_unavailable", `provider instance ${data.providerInstanceId} is not available`);
  const isolated = data.isolation === "worktree";
  if (isolated && data.workspaceRepoPath === undefined) return reject("invalid_workspace", "a worktree child needs workspaceRepoPath, the parent's repository");

  const changes = new Changes(state, ctx);
  const depth = threadDepth(changes, parent.id) + 1;
  if (depth > ctx.limits.maxDelegationDepth) {
    return reject("delegation_depth_exceeded", `a task at depth ${depth} exceeds the maximum delegation depth of ${ctx.limits.maxDelegationDepth}`);
  }
  const tasks = changes.allTasks();
  const active = tasks.filter((task) => task.parentThreadId === parent.id && !isTerminalDelegatedTaskStatus(task.status)).length;
  if (active >= ctx.limits.maxActiveChildrenPerThread) {
    return reject("active_children_exceeded", `thread ${parent.id} already has ${active} unfinished tasks (maximum ${ctx.limits.maxActiveChildrenPerThread})`);
  }
  const rootId = parent.lineage.rootThreadId;
  const spawned = tasks.filter((task) => state.threads.get(task.parentThreadId)?.lineage.rootThreadId === rootId).length;
  if (spawned >= ctx.limits.maxSpawnsPerRootThread) {
    return reject("spawn_budget_exceeded", `root thread ${rootId} has spawned ${spawned} tasks (maximum ${ctx.limits.maxSpawnsPerRootThread})`);
  }

  const exhausted = exhaustedBudget(state, parent.id, ctx.now);
  if (exhausted !== null) return reject("budget_exceeded", exhaustedText(exhausted));
  // An agent() task draws on its workflow's pool: none once it ran out, else at most what is left of it.
  let requested = data.budget;
  if (forWorkflow && workflow.budget !== null) {
    const reached = workflowBudgetReached(state, workflow, ctx.now);
    if (reached !== null) return reject("budget_exceeded", `the ${reached.kind} budget of workflow ${workflow.workflowId} ran out (${reached.spent} of ${reached.limit})`);
    requested = stepBudget(state, workflow, ctx.now, data.budget);
  }
  const budget = narrowedBudget(state, parent.id, requested);
  if (typeof budget === "string") return reject("budget_widening_denied", `a task can only narrow its inherited budget: ${budget}`);

  const now = ctx.now;
  const relation = data.relation ?? "subagent";
  const parentNode: ExecutionNode = {
    id: ctx.allocate.node(),
    threadId: parent.id,
    runId: parentRun.id,
    runAttemptId: null,
    parentNodeId: null,
    kind: "subagent",
    status: "running",
    label: data.title,
    createdAt: now,
    updatedAt: now,
    endedAt: null,
  };
  // A shared child works in the parent's checkout but does not own it. A
  // worktree child gets its own, branched from the parent's checkpoint
  // (uncommitted work included), which its first run's preparation asks for.
  const child: AppThread = newThreadRecord(now, {
    id: data.childThreadId,
    projectId: parent.projectId,
    title: data.title,
    providerInstanceId: data.providerInstanceId,
    modelSelection: { providerInstanceId: data.providerInstanceId, model: data.model },
    runtimeMode: data.runtimeMode,
    interactionMode: data.interactionMode,
    worktreePath: isolated ? null : parent.worktreePath,
    branch: isolated ? null : parent.branch,
    lineage: { rootThreadId: rootId, parentThreadId: parent.id, parentNodeId: parentNode.id, relation },
    createdBy: "agent",
    creationSource: "mcp",
    autoSettle: parent.autoSettle,
    workspace: isolated
      ? {
          strategy: "worktree" as const,
          status: "pending" as const,
          repoPath: data.workspaceRepoPath!,
          baseRef: data.mergeResolution?.baseCommit ?? null,
          startFromOrigin: false,
          baseCheckpointId: data.mergeResolution === undefined ? ctx.allocate.checkpoint() : null,
        }
      : parent.workspace === undefined
        ? undefined
        : null,
    pullRequestWatch: parent.pullRequestWatch,
    structuredOutput: parent.structuredOutput,
    budget: parent.budget,
  });
  changes.putThread("thread.created", child);
  const childNode: ExecutionNode = { ...parentNode, id: ctx.allocate.node(), threadId: child.id, runId: data.childRunId, parentNodeId: parentNode.id, kind: "turn" };
  changes.events.push(nodeEvent(parentNode), nodeEvent(childNode));

  const run = newRun(changes, child, facts, { runId: data.childRunId, kind: "delegated_task", messageId: data.childMessageId });
  changes.addItem(child.id, run.id, { type: "user_message", messageId: data.childMessageId, text: data.prompt, createdBy: "agent", creationSource: "mcp" });
  if (data.startedOnFallback !== undefined) {
    const { fromProviderInstanceId: from, reason } = data.startedOnFallback;
    changes.addItem(child.id, run.id, { type: "system_notice", level: "warning", text: `Started on ${data.providerInstanceId} instead of ${from}: ${reason}` });
  }
  if (relation === "fork") {
    // The child starts from the parent's context: its transcript through the calling run, delivered with the prompt.
    forkTransfer(changes, parent, parentRun.ordinal, child.id);
    changes.addItem(child.id, null, { type: "fork", sourceThreadId: parent.id, targetThreadId: child.id, sourceRunOrdinal: parentRun.ordinal });
  }
  startRun(changes, run);

  changes.putTask(
    {
      id: data.taskId,
      threadId: parent.id,
      runId: parentRun.id,
      parentNodeId: parentNode.id,
      providerInstanceId: data.providerInstanceId,
      driver: facts.driver,
      childThreadId: child.id,
      origin: "app_delegated",
      agentLabel: data.role ?? data.title,
      prompt: data.prompt,
      result: null,
      status: "running",
      createdAt: now,
      updatedAt: now,
      endedAt: null,
    },
    {
      taskId: data.taskId,
      parentThreadId: parent.id,
      parentRunId: parentRun.id,
      parentNodeId: parentNode.id,
      childThreadId: child.id,
      childRunId: run.id,
      childNodeId: childNode.id,
      providerInstanceId: data.providerInstanceId,
      model: data.model,
      role: data.role,
      title: data.title,
      task: data.task,
      mode: data.mode,
      runtimeMode: data.runtimeMode,
      interactionMode: data.interactionMode,
      clientRequestId: data.clientRequestId,
      status: "running",
      summary: null,
      resultContextTransferId: null,
      wakePolicy: data.wakePolicy ?? "on_completion",
      completionDelivery: "not_ready",
      cancelReason: null,
      cancelRequestedAt: null,
      depth,
      notices: [],
      ...(data.outputSchema === undefined ? {} : { outputSchema: data.outputSchema, schemaRepairRunId: null }),
      ...(budget === null ? {} : { budget, budgetExceeded: null }),
      ...(data.workflowStep === undefined ? {} : { workflowStep: data.workflowStep }),
      ...(data.approvalRouting === "parent" ? { approvalRouting: "parent" as const } : {}),
      ...(data.onCrash === undefined ? {} : { onCrash: data.onCrash }),
      ...(data.fallbacks === undefined ? {} : { fallbacks: data.fallbacks }),
      createdAt: now,
      updatedAt: now,
    },
  );
  changes.addItem(parent.id, parentRun.id, { type: "thread_created", childThreadId: child.id, relation, title: data.title });
  changes.addItem(parent.id, parentRun.id, {
    type: "subagent",
    subagentId: data.taskId,
    childThreadId: child.id,
    agentLabel: data.role ?? data.title,
    prompt: data.prompt,
    result: null,
    status: "running",
  });
  changes.events.push(
    contextTransferEvent("context-transfer.created", {
      id: ctx.allocate.contextTransfer(),
      threadId: child.id,
      sourceThreadId: parent.id,
      kind: "subagent_spawn",
      status: "consumed",
      subagentId: data.taskId,
      runId: run.id,
      text: data.prompt,
      createdAt: now,
      updatedAt: now,
      consumedAt: now,
    }),
  );
  // delegate_task served as an MCP task: its handle in the same commit as the task (docs/mcp.md, "Tasks").
  if (data.toolTask !== undefined) changes.events.push(toolTaskEvent(newToolTask({ taskId: data.taskId, ownerThreadId: parent.id, work: { tool: "delegate_task" }, ...data.toolTask }, now)));
  return changes.done();
}
