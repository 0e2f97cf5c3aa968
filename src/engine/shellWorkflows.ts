import type { Workflow } from "../contracts/entities/workflows.js";
import type { ShellWorkflow } from "../contracts/wire/projections.js";
import type { OrchestrationState } from "../core/state.js";

/**
 * The workflow a thread list row shows: per parent thread, its newest running
 * workflow, else its newest one. Built in one pass over the state's workflows
 * and kept until the log moves on, so a whole list costs one pass, not one per
 * row.
 */
const cache = new WeakMap<OrchestrationState, { readonly sequence: number; readonly byParent: ReadonlyMap<string, ShellWorkflow> }>();

export function shellWorkflowOf(state: OrchestrationState, threadId: string): ShellWorkflow | null {
  let held = cache.get(state);
  if (held === undefined || held.sequence !== state.lastSequence) {
    held = { sequence: state.lastSequence, byParent: indexByParent(state.workflows.values()) };
    cache.set(state, held);
  }
  return held.byParent.get(threadId) ?? null;
}

function indexByParent(workflows: Iterable<Workflow>): Map<string, ShellWorkflow> {
  const chosen = new Map<string, Workflow>();
  for (const workflow of workflows) {
    const held = chosen.get(workflow.parentThreadId);
    if (held === undefined || rank(workflow) > rank(held)) chosen.set(workflow.parentThreadId, workflow);
  }
  const byParent = new Map<string, ShellWorkflow>();
  for (const [threadId, workflow] of chosen) {
    byParent.set(threadId, {
      workflowId: workflow.workflowId,
      name: workflow.name,
      status: workflow.status,
      stepsDone: workflow.steps.filter((step) => step.status !== "running").length,
      stepsTotal: workflow.steps.length,
    });
  }
  return byParent;
}

/** Running before ended, then newer before older. */
function rank(workflow: Workflow): string {
  return `${workflow.status === "running" ? 1 : 0}${workflow.createdAt}`;
}
