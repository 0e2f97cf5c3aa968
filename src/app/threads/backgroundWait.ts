import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import type { AppThread } from "../../contracts/thread.js";
import { holdsRun } from "../../core/run/backgroundTasks.js";
import type { BackgroundWaitInput, BackgroundWaitOutput } from "../../contracts/tools/backgroundTools.js";
import { type Caller, resolveCaller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { delegateTaskResult } from "../delegation/taskView.js";
import { type HoldOutcome, holdTasks } from "../delegation/taskHolds.js";
import { type WaitContext, waitBudget, waitUntil } from "../waits.js";
import { liveThreadOrFail } from "./authorize.js";

/** Background tasks that hold a thread: a subagent or background_task always, a command or monitor only when awaited (spec 000). */
export function holdingBackgroundTasks(thread: AppThread): AppThread["pendingBackgroundTasks"] {
  return thread.pendingBackgroundTasks.filter(holdsRun);
}

function unfinishedTasks(ctx: AppContext, threadId: string): DelegatedTask[] {
  return [...ctx.orchestrator.state.tasks.values()].filter((task) => task.parentThreadId === threadId && task.resultContextTransferId === null);
}

/**
 * t3_background_wait: wait until the thread's background work settles —
 * every delegated task it started has its result and no awaited background
 * task is pending — with t3_thread_wait's cap, progress and timeout
 * semantics. A blocking question in one of the children also ends the wait,
 * since the work cannot settle until it is answered. A thread waiting on its
 * own tasks takes their results: they are acknowledged (no notice follows)
 * and, while it waits, no notice interrupts it. `taskIds` are the tasks it
 * reports (default: those unfinished now; a wait served as an MCP task
 * reports those unfinished when it was created).
 */
export async function waitForBackgroundWork(
  ctx: AppContext,
  caller: Caller,
  input: BackgroundWaitInput,
  wait: WaitContext,
  taskIds?: readonly string[],
): Promise<BackgroundWaitOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "t3_background_wait");
  const threadId = input.threadId ?? acting.thread?.id ?? fail("invalid_request", "threadId is required for a caller outside a thread");
  liveThreadOrFail(ctx, threadId);
  const ownThread = acting.thread?.id === threadId;
  const watched = taskIds === undefined ? unfinishedTasks(ctx, threadId).map((task) => task.taskId) : taskIds.filter((taskId) => ctx.orchestrator.state.tasks.has(taskId));
  // The thread's own wait holds its tasks before the first look: their results and questions come through it, not as notices.
  const holds = await holdTasks(ctx, ownThread ? watched : [], acting.activeRun?.id ?? null);
  let outcome: HoldOutcome = { took: [], owed: [] };
  try {
    const views = () => watched.map((taskId) => delegateTaskResult(ctx.orchestrator, ctx.orchestrator.state.tasks.get(taskId)!, false));
    const thread = () => ctx.orchestrator.state.threads.get(threadId)!;
    const settled = () => unfinishedTasks(ctx, threadId).length === 0 && holdingBackgroundTasks(thread()).length === 0;
    const blocked = () => views().some((view) => view.hasPendingQuestion);
    const describe = () => {
      const left = unfinishedTasks(ctx, threadId).length + holdingBackgroundTasks(thread()).length;
      return `${left} background item${left === 1 ? "" : "s"} of thread ${threadId} still running`;
    };
    const done = await waitUntil(ctx, wait, waitBudget(ctx, input.timeoutMs), () => settled() || blocked(), describe);
    // Results it hands over are taken; cut short by the provider, a pending question is owed to the waiting run (as for delegate_task waits).
    outcome = {
      took: watched.filter((taskId) => ctx.orchestrator.state.tasks.get(taskId)!.resultContextTransferId !== null),
      owed: wait.signal.aborted ? views().filter((view) => view.hasPendingQuestion).map((view) => view.taskId) : [],
    };
    const tasks = watched.map((taskId) => {
      const task = ctx.orchestrator.state.tasks.get(taskId)!;
      const view = delegateTaskResult(ctx.orchestrator, task, false);
      return {
        taskId,
        childThreadId: task.childThreadId,
        title: task.title,
        status: view.status,
        workState: view.workState,
        hasPendingQuestion: view.hasPendingQuestion,
        summary: view.summary,
      };
    });
    return {
      threadId,
      settled: settled(),
      waitTimedOut: !done,
      hasPendingQuestion: tasks.some((task) => task.hasPendingQuestion),
      tasks,
      backgroundTasks: holdingBackgroundTasks(thread()).map((task) => ({ ...task })),
    };
  } finally {
    await holds.release(outcome);
  }
}
