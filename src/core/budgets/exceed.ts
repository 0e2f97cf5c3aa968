import type { BudgetExceedCommand } from "../../contracts/commands/runtimeCommands.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { stopTaskTree } from "../delegation/controls.js";
import { Changes } from "../run/changes.js";
import { deliverNotice } from "../run/notify.js";
import type { OrchestrationState } from "../state.js";
import { activeRun } from "../run/lifecycle.js";
import { reachedLimit, spendOf, subtreeThreads } from "./budgets.js";

/**
 * delegated-task.budget-exceed: a task's subtree reached one of its budget's
 * limits. Recorded once on the task (so every later delegation under it is
 * refused with budget_exceeded); with policy `stop` the task's whole tree is
 * stopped like task_cancel; with `finish_turn` running turns finish and
 * nothing new starts. The root thread gets a notice saying which budget ran
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
  const what =
    policy === "finish_turn"
      ? "Running turns may finish; no new delegation or turn starts under it."
      : stopped.length === 0
        ? "Nothing was running under it."
        : `Stopped the running work of ${stopped.length} thread(s): ${stopped.join(", ")}.`;
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
