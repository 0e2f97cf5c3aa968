import type { BudgetRaiseCommand } from "../../contracts/commands/runtimeCommands.js";
import { BUDGET_KINDS, type BudgetLimits } from "../../contracts/entities/budgets.js";
import { workflowEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { Changes } from "../run/changes.js";
import { startQueuedUnder } from "./exceed.js";
import type { OrchestrationState } from "../state.js";
import { changed } from "../thread/guards.js";
import { type BudgetHolder, narrowedBudget, treeThreads } from "./budgets.js";

/**
 * budget.raise (docs/budgets.md, "Pause and raise"): higher limits for a
 * task's, a root thread's or a workflow's budget. The recorded exhaustion is
 * cleared (the budget reactor records it again if the new limits are reached
 * too), and every thread under the budget starts its next queued turn, so a
 * paused tree goes on where it stopped; a workflow's waiting agent() calls
 * see the pool's room on the same commit. The owner may raise any budget; an
 * agent only one below its own thread, and never past what governs that
 * budget from above.
 */
export function decideBudgetRaise(state: OrchestrationState, command: BudgetRaiseCommand, ctx: DecideContext): Decision {
  const { holder, limits, callerThreadId } = command.data;
  const found = currentBudget(state, holder);
  if (typeof found === "string") return reject("budget_not_found", found);
  const problem = notARaise(found.limits, limits);
  if (problem !== null) return reject("budget_not_raised", `${found.label}: ${problem}`);
  if (callerThreadId !== null) {
    if (!isAbove(state, callerThreadId, found.parentThreadId)) {
      return reject("budget_raise_denied", `thread ${callerThreadId} may not raise the budget of ${found.label}: only the owner, or an agent the budget sits below, may`);
    }
    const wider = narrowedBudget(state, found.parentThreadId!, limits);
    if (typeof wider === "string") return reject("budget_raise_denied", `the raise would pass a budget above ${found.label}: ${wider}`);
  }
  const raised: BudgetLimits = { ...found.limits, ...limits };
  const changes = new Changes(state, ctx);
  if (holder.kind === "task") {
    changes.updateTask(changes.task(holder.id)!, { budget: raised, budgetExceeded: null });
  } else if (holder.kind === "thread") {
    const thread = state.threads.get(holder.id)!;
    changes.putThread("thread.metadata-updated", changed(thread, ctx, { budget: { ...thread.budget!, limits: raised, exceeded: null } }));
  } else {
    const workflow = state.workflows.get(holder.id)!;
    changes.events.push(workflowEvent({ ...workflow, budget: raised, updatedAt: ctx.now }));
  }
  // The raised budget as the start of each queued turn must see it: its events fold in only after this decision.
  const asRaised = (candidate: BudgetHolder): BudgetHolder => (candidate.kind === holder.kind && candidate.id === holder.id ? { ...candidate, budget: raised, exceeded: null } : candidate);
  startQueuedUnder(changes, found.threads, asRaised);
  return changes.done();
}

interface CurrentBudget {
  readonly label: string;
  readonly limits: BudgetLimits;
  /** The thread the budget's holder hangs from (null for a root thread's own). */
  readonly parentThreadId: string | null;
  /** Every thread the budget governs. */
  readonly threads: readonly string[];
}

function currentBudget(state: OrchestrationState, holder: BudgetRaiseCommand["data"]["holder"]): CurrentBudget | string {
  if (holder.kind === "task") {
    const task = state.tasks.get(holder.id);
    if (task?.budget == null) return `task ${holder.id} ${task === undefined ? "does not exist" : "has no budget"}`;
    return { label: `task ${task.taskId}`, limits: task.budget, parentThreadId: task.parentThreadId, threads: treeThreads(state, task.childThreadId) };
  }
  if (holder.kind === "thread") {
    const thread = state.threads.get(holder.id);
    if (thread?.budget == null || thread.deletedAt !== null) return `thread ${holder.id} ${thread === undefined || thread.deletedAt !== null ? "does not exist" : "has no budget"}`;
    return { label: `thread ${thread.id}`, limits: thread.budget.limits, parentThreadId: null, threads: treeThreads(state, thread.id) };
  }
  const workflow = state.workflows.get(holder.id);
  if (workflow?.budget == null) return `workflow ${holder.id} ${workflow === undefined ? "does not exist" : "has no budget"}`;
  const threads = workflow.steps.flatMap((step) => {
    const task = step.taskId === null ? undefined : state.tasks.get(step.taskId);
    return task === undefined ? [] : treeThreads(state, task.childThreadId);
  });
  return { label: `workflow ${workflow.workflowId}`, limits: workflow.budget, parentThreadId: workflow.parentThreadId, threads };
}

/** Why `next` is not a raise of `current`, or null: every given limit one the budget has, none lower, one at least higher or a new policy. */
function notARaise(current: BudgetLimits, next: BudgetLimits): string | null {
  let higher = next.onExceeded !== undefined && next.onExceeded !== current.onExceeded;
  for (const kind of BUDGET_KINDS) {
    const want = next[kind];
    if (want === undefined) continue;
    const have = current[kind];
    if (have === undefined) return `it has no ${kind} limit to raise (a budget gains limits only when it is set)`;
    if (want < have) return `${kind} ${want} is lower than its limit ${have}: a raise cannot lower a limit`;
    if (want > have) higher = true;
  }
  return higher ? null : "the raise changes no limit";
}

/** Whether `ancestor` is `threadId` or a thread it was delegated from, at any depth. */
function isAbove(state: OrchestrationState, ancestor: string, threadId: string | null): boolean {
  const seen = new Set<string>();
  let current: string | null | undefined = threadId;
  while (current != null && !seen.has(current)) {
    if (current === ancestor) return true;
    seen.add(current);
    current = state.threads.get(current)?.lineage.parentThreadId;
  }
  return false;
}
