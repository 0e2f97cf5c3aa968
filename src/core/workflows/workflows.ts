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
import { workflowEvent } from "../../contracts/events.js";
import type { ToolItemStatus } from "../../contracts/turnItemParts.js";
import type { TurnItemOf } from "../../contracts/turnItems.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import { Changes } from "../run/changes.js";
import { deliverNotice } from "../run/notify.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";

/**
 * Workflow scripts (docs/workflows.md), pure: the journal of a running script.
 * Each decision writes the whole workflow (`workflow.updated`) and the parent
 * thread's `dynamic_tool` item that shows it (phases, step statuses, result),
 * updated in place.
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
    steps: workflow.steps.map((step) => ({ index: step.index, label: step.label, phase: step.phase, status: step.status, childThreadId: step.childThreadId })),
    ...(workflow.result === undefined ? {} : { result: workflow.result }),
    error: workflow.error,
  };
}

function put(changes: Changes, workflow: Workflow): Decision {
  changes.events.push(workflowEvent(workflow));
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

/** workflow.start: the record and the parent's workflow item, on a live run of the parent. */
export function decideWorkflowStart(state: OrchestrationState, command: WorkflowStartCommand, ctx: DecideContext): Decision {
  const data = command.data;
  if (state.workflows.has(data.workflowId)) return reject(RejectionCode.workflowAlreadyExists, `workflow ${data.workflowId} already exists`);
  const found = liveThread(state, data.parentThreadId);
  if (found.kind === "rejected") return found;
  const run = state.runs.get(data.parentRunId);
  if (run === undefined || run.threadId !== data.parentThreadId || run.endedAt !== null) {
    return reject(RejectionCode.parentNotActive, `run ${data.parentRunId} is not an active run of thread ${data.parentThreadId}`);
  }
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
    budget: data.budget,
    clientRequestId: data.clientRequestId,
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
  return put(new Changes(state, ctx), { ...workflow, steps: [...workflow.steps, step], updatedAt: ctx.now });
}

export function decideWorkflowStepFinish(state: OrchestrationState, command: WorkflowStepFinishCommand, ctx: DecideContext): Decision {
  const workflow = running(state, command.data.workflowId);
  if (isDecision(workflow)) return workflow;
  const data = command.data;
  const step = workflow.steps.find((candidate) => candidate.stepId === data.stepId);
  if (step === undefined) return reject(RejectionCode.workflowStepNotFound, `workflow ${workflow.workflowId} has no step ${data.stepId}`);
  if (step.status !== "running") return reject(RejectionCode.workflowStepFinished, `step ${data.stepId} is already ${step.status}`);
  const finished: WorkflowStep = { ...step, status: data.status, ...(data.result === undefined ? {} : { result: data.result }), error: data.error, endedAt: ctx.now };
  const steps = workflow.steps.map((candidate) => (candidate.stepId === step.stepId ? finished : candidate));
  return put(new Changes(state, ctx), { ...workflow, steps, updatedAt: ctx.now });
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
  const steps = workflow.steps.map((candidate) => (candidate.stepId === step.stepId ? next : candidate));
  return put(new Changes(state, ctx), { ...workflow, steps, updatedAt: ctx.now });
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
  const reason = command.data.reason;
  const steps = workflow.steps.map((step) =>
    step.status === "running" ? { ...step, status: "failed" as const, error: { code: "workflow_stopped", message: reason ?? "the workflow was stopped" }, endedAt: ctx.now } : step,
  );
  return put(new Changes(state, ctx), { ...workflow, steps, status: "stopped", stopReason: reason, updatedAt: ctx.now, endedAt: ctx.now });
}
