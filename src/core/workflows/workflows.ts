import type {
  WorkflowFinishCommand,
  WorkflowProgressCommand,
  WorkflowStartCommand,
  WorkflowStepFinishCommand,
  WorkflowStepReissueCommand,
  WorkflowStepStartCommand,
  WorkflowStopCommand,
} from "../../contracts/commands/workflowCommands.js";
import type { Workflow, WorkflowStep } from "../../contracts/entities/workflows.js";
import { workflowEvent, workflowStepEvent } from "../../contracts/events.js";
import type { ToolItemStatus } from "../../contracts/turnItemParts.js";
import type { TurnItemOf } from "../../contracts/turnItems.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import { Changes } from "../run/changes.js";
import { deliverNotice } from "../run/notify.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";
import { exhaustedBudget, exhaustedText, narrowedBudget } from "../budgets/budgets.js";

/**
 * Workflow scripts (docs/workflows.md), pure: the journal of a running script.
 * Start, phase, finish and stop write the whole workflow (`workflow.updated`);
 * a step's start, re-issue and finish write that step alone
 * (`workflow.step.updated`), so a step costs the same however long the
 * journal is. Each decision also updates the parent thread's `dynamic_tool`
 * item that shows the workflow in place: phases, step counts, the running
 * steps, and every step once the workflow ended.
 */

const ITEM_STATUS: { readonly [S in Workflow["status"]]: ToolItemStatus } = {
  running: "in_progress",
  completed: "completed",
  failed: "failed",
  stopped: "declined",
};

/** What the parent's turn item shows of a workflow. */
export function workflowItemResult(workflow: Workflow) {
  return {
    workflowId: workflow.workflowId,
    name: workflow.name,
    status: workflow.status,
    phases: workflow.phases.map((phase) => phase.title),
    currentPhase: workflow.currentPhase,
    stepCounts: {
      total: workflow.steps.length,
      running: workflow.steps.filter((step) => step.status === "running").length,
      completed: workflow.steps.filter((step) => step.status === "completed").length,
      failed: workflow.steps.filter((step) => step.status === "failed").length,
    },
    // While running only the running steps (at most the concurrency limit), so the item stays small; every step once ended.
    steps: workflow.steps
      .filter((step) => workflow.status !== "running" || step.status === "running")
      .map((step) => ({ index: step.index, label: step.label, phase: step.phase, status: step.status, childThreadId: step.childThreadId })),
    ...(workflow.result === undefined ? {} : { result: workflow.result }),
    error: workflow.error,
  };
}

function put(changes: Changes, workflow: Workflow): Decision {
  changes.events.push(workflowEvent(workflow));
  return showItem(changes, workflow);
}

/** Journal one step: the step alone on the log, then the item. */
function putStep(changes: Changes, workflow: Workflow, step: WorkflowStep, ctx: DecideContext): Decision {
  changes.events.push(workflowStepEvent(workflow, step, ctx.now));
  const steps = [...workflow.steps];
  steps[step.index - 1] = step;
  return showItem(changes, { ...workflow, steps, updatedAt: ctx.now });
}

function showItem(changes: Changes, workflow: Workflow): Decision {
  const existing = changes.existingItem(workflow.itemId) as TurnItemOf<"dynamic_tool"> | undefined;
  const body = {
    type: "dynamic_tool" as const,
    toolName: "t3_workflow",
    arguments: { workflowId: workflow.workflowId, name: workflow.name },
    result: workflowItemResult(workflow),
    status: ITEM_STATUS[workflow.status],
  };
  if (existing === undefined) changes.addItem(workflow.parentThreadId, workflow.parentRunId, body, workflow.itemId);
  else changes.updateItem(existing, body);
  return changes.done();
}

function running(state: OrchestrationState, workflowId: string): Workflow | Decision {
  const workflow = state.workflows.get(workflowId);
  if (workflow === undefined) return reject(RejectionCode.workflowNotFound, `no workflow ${workflowId}`);
  if (workflow.status !== "running") return reject(RejectionCode.workflowNotRunning, `workflow ${workflowId} is ${workflow.status}`);
  return workflow;
}

function isDecision(value: Workflow | Decision): value is Decision {
  return "kind" in value;
}

/** workflow.start: the record and the parent's workflow item, on a live run of the parent, with a pool within the parent's budgets. */
export function decideWorkflowStart(state: OrchestrationState, command: WorkflowStartCommand, ctx: DecideContext): Decision {
  const data = command.data;
  if (state.workflows.has(data.workflowId)) return reject(RejectionCode.workflowAlreadyExists, `workflow ${data.workflowId} already exists`);
  const found = liveThread(state, data.parentThreadId);
  if (found.kind === "rejected") return found;
  if (data.resumeFrom != null) {
    const prior = state.workflows.get(data.resumeFrom);
    if (prior === undefined || prior.parentThreadId !== data.parentThreadId) return reject(RejectionCode.workflowNotFound, `no workflow ${data.resumeFrom} of thread ${data.parentThreadId} to resume from`);
    if (prior.status === "running") return reject(RejectionCode.workflowRunning, `workflow ${data.resumeFrom} is still running`);
  }
  const run = state.runs.get(data.parentRunId);
  if (run === undefined || run.threadId !== data.parentThreadId || run.endedAt !== null) {
    return reject(RejectionCode.parentNotActive, `run ${data.parentRunId} is not an active run of thread ${data.parentThreadId}`);
  }
  // The pool is no wider than the budgets the parent runs under, and none of those may have run out.
  const budget = narrowedBudget(state, data.parentThreadId, data.budget ?? undefined);
  if (typeof budget === "string") return reject(RejectionCode.budgetWideningDenied, `a workflow can only narrow the budget it runs under: ${budget}`);
  const exhausted = exhaustedBudget(state, data.parentThreadId, ctx.now);
  if (exhausted !== null) return reject(RejectionCode.budgetExceeded, exhaustedText(exhausted));
  const workflow: Workflow = {
    workflowId: data.workflowId,
    parentThreadId: data.parentThreadId,
    parentRunId: data.parentRunId,
    itemId: data.itemId,
    name: data.name,
    description: data.description,
    script: data.script,
    args: data.args,
    phases: [...data.phases],
    currentPhase: null,
    status: "running",
    steps: [],
    error: null,
    budget,
    clientRequestId: data.clientRequestId,
    resumeFrom: data.resumeFrom ?? null,
    stopReason: null,
    createdAt: ctx.now,
    updatedAt: ctx.now,
    endedAt: null,
  };
  return put(new Changes(state, ctx), workflow);
}

export function decideWorkflowProgress(state: OrchestrationState, command: WorkflowProgressCommand, ctx: DecideContext): Decision {
  const workflow = running(state, command.data.workflowId);
  if (isDecision(workflow)) return workflow;
  const phases = workflow.phases.some((phase) => phase.title === command.data.phase) ? workflow.phases : [...workflow.phases, { title: command.data.phase }];
  return put(new Changes(state, ctx), { ...workflow, phases, currentPhase: command.data.phase, updatedAt: ctx.now });
}

export function decideWorkflowStepStart(state: OrchestrationState, command: WorkflowStepStartCommand, ctx: DecideContext): Decision {
  const workflow = running(state, command.data.workflowId);
  if (isDecision(workflow)) return workflow;
  const data = command.data;
  if (workflow.steps.some((step) => step.stepId === data.stepId)) return reject(RejectionCode.workflowStepExists, `workflow ${workflow.workflowId} already journaled step ${data.stepId}`);
  if (data.resumedFrom !== undefined) return reuseStep(state, workflow, data, ctx);
  const step: WorkflowStep = {
    stepId: data.stepId,
    index: workflow.steps.length + 1,
    callKey: data.callKey,
    label: data.label,
    phase: data.phase,
    taskId: data.taskId,
    childThreadId: data.childThreadId,
    providerInstanceId: data.providerInstanceId,
    status: "running",
    error: null,
    startedAt: ctx.now,
    endedAt: null,
  };
  return putStep(new Changes(state, ctx), workflow, step, ctx);
}

/** A resumed workflow's call answered by the prior workflow's completed step of the same identity: journaled completed, no task. */
function reuseStep(state: OrchestrationState, workflow: Workflow, data: WorkflowStepStartCommand["data"], ctx: DecideContext): Decision {
  const from = data.resumedFrom!;
  const prior = state.workflows.get(from.workflowId);
  const reused = prior?.steps.find((step) => step.stepId === from.stepId);
  if (workflow.resumeFrom !== from.workflowId || prior === undefined || reused === undefined || reused.status !== "completed" || reused.callKey !== data.callKey) {
    return reject(RejectionCode.workflowStepNotFound, `workflow ${from.workflowId} has no completed step ${from.stepId} for this call to reuse`);
  }
  const step: WorkflowStep = {
    stepId: data.stepId,
    index: workflow.steps.length + 1,
    callKey: data.callKey,
    label: data.label,
    phase: data.phase,
    taskId: reused.taskId,
    childThreadId: reused.childThreadId,
    providerInstanceId: reused.providerInstanceId,
    status: "completed",
    ...(reused.result === undefined ? {} : { result: reused.result }),
    error: null,
    resumedFrom: { workflowId: from.workflowId, stepId: from.stepId },
    startedAt: ctx.now,
    endedAt: ctx.now,
  };
  return putStep(new Changes(state, ctx), workflow, step, ctx);
}

export function decideWorkflowStepFinish(state: OrchestrationState, command: WorkflowStepFinishCommand, ctx: DecideContext): Decision {
  const workflow = running(state, command.data.workflowId);
  if (isDecision(workflow)) return workflow;
  const data = command.data;
  const step = workflow.steps.find((candidate) => candidate.stepId === data.stepId);
  if (step === undefined) return reject(RejectionCode.workflowStepNotFound, `workflow ${workflow.workflowId} has no step ${data.stepId}`);
  if (step.status !== "running") return reject(RejectionCode.workflowStepFinished, `step ${data.stepId} is already ${step.status}`);
  const finished: WorkflowStep = { ...step, status: data.status, ...(data.result === undefined ? {} : { result: data.result }), error: data.error, endedAt: ctx.now };
  return putStep(new Changes(state, ctx), workflow, finished, ctx);
}

export function decideWorkflowStepReissue(state: OrchestrationState, command: WorkflowStepReissueCommand, ctx: DecideContext): Decision {
  const workflow = running(state, command.data.workflowId);
  if (isDecision(workflow)) return workflow;
  const data = command.data;
  const step = workflow.steps.find((candidate) => candidate.stepId === data.stepId);
  if (step === undefined) return reject(RejectionCode.workflowStepNotFound, `workflow ${workflow.workflowId} has no step ${data.stepId}`);
  if (step.status !== "running") return reject(RejectionCode.workflowStepFinished, `step ${data.stepId} is already ${step.status}`);
  if ((step.attempt ?? 1) >= data.attempt) return reject(RejectionCode.workflowStepExists, `step ${data.stepId} is already at attempt ${step.attempt ?? 1}`);
  const next: WorkflowStep = { ...step, attempt: data.attempt, taskId: data.taskId, childThreadId: data.childThreadId };
  return putStep(new Changes(state, ctx), workflow, next, ctx);
}

/** workflow.finish: the script's outcome; the summary wakes the parent as a notice when it is not being handed the result by a wait. */
export function decideWorkflowFinish(state: OrchestrationState, command: WorkflowFinishCommand, ctx: DecideContext): Decision {
  const workflow = running(state, command.data.workflowId);
  if (isDecision(workflow)) return workflow;
  const data = command.data;
  const changes = new Changes(state, ctx);
  const decision = put(changes, {
    ...workflow,
    status: data.status,
    ...(data.result === undefined ? {} : { result: data.result }),
    error: data.error,
    updatedAt: ctx.now,
    endedAt: ctx.now,
  });
  if (decision.kind === "rejected" || !data.notify) return decision;
  const parent = state.threads.get(workflow.parentThreadId);
  if (parent === undefined || parent.deletedAt !== null) return decision;
  deliverNotice(changes, workflow.parentThreadId, { title: `Workflow ${workflow.name ?? workflow.workflowId} ${data.status}`, text: data.summary, sourceThreadId: null }, { allowSteer: true });
  return changes.done();
}

export function decideWorkflowStop(state: OrchestrationState, command: WorkflowStopCommand, ctx: DecideContext): Decision {
  const workflow = running(state, command.data.workflowId);
  if (isDecision(workflow)) return workflow;
  const changes = new Changes(state, ctx);
  stopWorkflowIn(changes, workflow, command.data.reason);
  return changes.done();
}

/** End a running workflow `stopped` in this decision: its running steps fail with workflow_stopped. Its tasks are the caller's to stop. */
export function stopWorkflowIn(changes: Changes, workflow: Workflow, reason: string | null): void {
  const now = changes.ctx.now;
  const steps = workflow.steps.map((step) =>
    step.status === "running" ? { ...step, status: "failed" as const, error: { code: "workflow_stopped", message: reason ?? "the workflow was stopped" }, endedAt: now } : step,
  );
  put(changes, { ...workflow, steps, status: "stopped", stopReason: reason, updatedAt: now, endedAt: now });
}
