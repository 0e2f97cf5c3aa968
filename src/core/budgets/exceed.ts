import type { BudgetExceedCommand, ThreadBudgetExceedCommand, ThreadBudgetSetCommand } from "../../contracts/commands/runtimeCommands.js";
import type { BudgetPolicy } from "../../contracts/entities/budgets.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { stopTaskTree } from "../delegation/controls.js";
import { Changes } from "../run/changes.js";
import { deliverNotice } from "../run/notify.js";
import type { OrchestrationState } from "../state.js";
import { activeRun, queuedRuns, requestInterrupt, startNext } from "../run/lifecycle.js";
import { settleTask } from "../delegation/settle.js";
import { changed, liveThread } from "../thread/guards.js";
import { type BudgetAdjust, type BudgetHolder, holderSpend, reachedLimit, spendOf, subtreeThreads, threadHolder, treeThreads } from "./budgets.js";

/**
 * delegated-task.budget-exceed: a task's subtree reached one of its budget's
 * limits. Recorded once on the task (so every later delegation under it is
 * refused with budget_exceeded); with policy `stop` the task's whole tree is
 * stopped like task_cancel; with `finish_turn` running turns finish and
 * nothing new starts; with `pause` running turns finish and queued work
 * waits for a raise (budget.raise). The root thread gets a notice saying which budget ran
 * out and what was stopped. Rejected when the budget still has room or was
 * already recorded, so the reactor may ask as often as it likes.
 */
export function decideBudgetExceed(state: OrchestrationState, command: BudgetExceedCommand, ctx: DecideContext): Decision {
  const changes = new Changes(state, ctx);
  const task = changes.task(command.data.taskId);
  if (task === undefined) return reject("task_not_found", `task ${command.data.taskId} does not exist`);
  if (task.budget === undefined || task.budget === null) return reject("budget_not_exceeded", `task ${task.taskId} has no budget`);
  if (task.budgetExceeded !== undefined && task.budgetExceeded !== null) return reject("budget_already_exceeded", `the ${task.budgetExceeded.kind} budget of task ${task.taskId} already ran out`);
  const reached = reachedLimit(task.budget, spendOf(state, task, ctx.now));
  if (reached === null) return reject("budget_not_exceeded", `task ${task.taskId} is within its budget`);
  const policy = task.budget.onExceeded ?? "stop";
  changes.updateTask(task, { budgetExceeded: { ...reached, policy, at: ctx.now } });
  const final = task.resultContextTransferId !== null;
  // What was running before the stop: a turn asked to interrupt has not ended yet, but it is stopped.
  const stopped = policy === "stop" && !final ? subtreeThreads(state, task).filter((threadId) => activeRun(changes, threadId) !== null) : [];
  if (policy === "stop" && !final) stopTaskTree(changes, changes.task(task.taskId)!, `budget_exceeded:${reached.kind}`);
  const rootThreadId = state.threads.get(task.parentThreadId)?.lineage.rootThreadId ?? task.parentThreadId;
  const what = stoppedWork(policy, stopped);
  deliverNotice(
    changes,
    rootThreadId,
    {
      title: `Budget exceeded: ${reached.kind}`,
      text: `The ${reached.kind} budget of task "${task.title}" (taskId ${task.taskId}) ran out: spent ${reached.spent} of ${reached.limit}. ${what}`,
      sourceThreadId: task.childThreadId,
      taskId: task.taskId,
    },
    { allowSteer: true },
  );
  return changes.done();
}

/** thread.budget.set: a root thread's budget, set or cleared (null); setting starts its wall-clock time and any exhaustion over, and queued turns a paused budget held back start if the new one has room. */
export function decideThreadBudgetSet(state: OrchestrationState, command: ThreadBudgetSetCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (thread.lineage.parentThreadId !== null) return reject("budget_not_root", `thread ${thread.id} is not a root thread: its budget comes from the task or workflow that made it`);
  const budget = command.data.budget === null ? null : { limits: command.data.budget, since: ctx.now, exceeded: null };
  const changes = new Changes(state, ctx);
  changes.putThread("thread.metadata-updated", changed(thread, ctx, { budget }));
  // Turns a paused budget held back go on under the new one if it has room (as after budget.raise).
  const asSet = (holder: BudgetHolder): BudgetHolder => (holder.kind === "thread" && holder.id === thread.id ? { ...holder, budget: budget?.limits ?? {}, exceeded: null, since: ctx.now } : holder);
  startQueuedUnder(changes, treeThreads(state, thread.id), asSet);
  return changes.done();
}

/**
 * thread.budget-exceed: a root thread's tree reached one of its budget's
 * limits. Recorded once on the thread; with `stop` the root's running turn is
 * interrupted and every task it delegated is stopped with its tree, as
 * task_cancel does; with `finish_turn` running turns finish and nothing new
 * starts. The root gets a notice. Rejected when the budget has room or was
 * already recorded.
 */
export function decideThreadBudgetExceed(state: OrchestrationState, command: ThreadBudgetExceedCommand, ctx: DecideContext): Decision {
  const thread = state.threads.get(command.data.threadId);
  const holder = thread === undefined ? null : threadHolder(thread);
  if (thread === undefined || holder === null) return reject("budget_not_exceeded", `thread ${command.data.threadId} has no budget`);
  if (holder.exceeded !== null) return reject("budget_already_exceeded", `the ${holder.exceeded.kind} budget of thread ${thread.id} already ran out`);
  const reached = reachedLimit(holder.budget, holderSpend(state, holder, ctx.now));
  if (reached === null) return reject("budget_not_exceeded", `thread ${thread.id} is within its budget`);
  const policy = holder.budget.onExceeded ?? "stop";
  const changes = new Changes(state, ctx);
  changes.putThread("thread.metadata-updated", changed(thread, ctx, { budget: { ...thread.budget!, exceeded: { ...reached, policy, at: ctx.now } } }));
  const stopped = policy === "stop" ? treeThreads(state, thread.id).filter((threadId) => activeRun(changes, threadId) !== null) : [];
  if (policy === "stop") {
    const own = activeRun(changes, thread.id);
    if (own !== null && own.interruptRequestedAt === null) requestInterrupt(changes, own, "system", `budget_exceeded:${reached.kind}`);
    for (const task of state.tasks.values()) {
      if (task.parentThreadId === thread.id && task.resultContextTransferId === null) stopTaskTree(changes, changes.task(task.taskId)!, `budget_exceeded:${reached.kind}`);
    }
  }
  const what = stoppedWork(policy, stopped);
  deliverNotice(
    changes,
    thread.id,
    { title: `Budget exceeded: ${reached.kind}`, text: `The ${reached.kind} budget of this thread's tree ran out: spent ${reached.spent} of ${reached.limit}. ${what}`, sourceThreadId: null },
    { allowSteer: policy !== "stop" },
  );
  return changes.done();
}

/**
 * After a decision that changed a budget (budget.raise, thread.budget.set):
 * each thread under it starts its next queued turn if the budget as changed
 * (`adjust`) has room, keeps it queued if it still pauses, or cancels it if
 * it ran out under another policy; a task left with nothing to do settles.
 */
export function startQueuedUnder(changes: Changes, threads: readonly string[], adjust: BudgetAdjust): void {
  for (const threadId of threads) {
    if (queuedRuns(changes, threadId).length === 0) continue;
    if (startNext(changes, threadId, adjust) === null && activeRun(changes, threadId) === null) settleTask(changes, threadId);
  }
}

/** The notice's sentence on what happened to the running work under a budget that ran out. */
function stoppedWork(policy: BudgetPolicy, stopped: readonly string[]): string {
  if (policy === "finish_turn") return "Running turns may finish; no new delegation or turn starts under it.";
  if (policy === "pause") return "Paused on budget: running turns may finish; queued turns and workflow agent() calls wait, and no new delegation or message is taken, until the limit is raised (t3_budget_raise, `loom budget raise`, or Raise in the web UI).";
  return stopped.length === 0 ? "Nothing was running under it." : `Stopped the running work of ${stopped.length} thread(s): ${stopped.join(", ")}.`;
}
