import type { BackgroundTaskReportedCommand } from "../../contracts/commands/runtimeCommands.js";
import type { ThreadBackgroundWorkSettleCommand } from "../../contracts/commands/runCommands.js";
import { type Run, RunStatus } from "../../contracts/entities/runs.js";
import type { PendingBackgroundTask } from "../../contracts/thread.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { joinId } from "../ids.js";
import type { OrchestrationState } from "../state.js";
import { settleTask } from "../delegation/settle.js";
import { changed, liveThread } from "../thread/guards.js";
import { BACKGROUND_SETTLE_TIMEOUT_MS, awaitsBackgroundWork, cancelBackgroundTasks, holdsRun, runBackgroundTasks } from "./backgroundTasks.js";
import { Changes } from "./changes.js";
import { endRun, isActiveRunStatus } from "./lifecycle.js";

/**
 * Background work a run's turn leaves running (docs/runs.md, "Background
 * work"): drivers report it started and ended; a run whose turn completes
 * while work it awaits is pending settles (settling_background_work) instead
 * of completing, and completes once the work is over, or at its
 * backgroundSettleBy, whichever comes first.
 */

/** background-task:provider:<driver>:run:<runId>:native-task:<nativeTaskId>: a reported task keeps its id however often it is reported. */
export function backgroundTaskId(driver: string, runId: string, nativeTaskId: string): string {
  return joinId("background-task", "provider", driver, "run", runId, "native-task", nativeTaskId);
}

/** The turn completed while awaited work runs: the run settles it, bounded by BACKGROUND_SETTLE_TIMEOUT_MS. */
export function beginSettling(changes: Changes, run: Run): Run {
  const settleBy = new Date(Date.parse(changes.ctx.now) + BACKGROUND_SETTLE_TIMEOUT_MS).toISOString();
  return changes.updateRun(run, { status: RunStatus.settlingBackgroundWork, startedAt: run.startedAt ?? changes.ctx.now, backgroundSettleBy: settleBy });
}

/** The settling run completes; a delegated child's task settles on it. */
export function completeSettled(changes: Changes, run: Run, endReason: string): void {
  endRun(changes, run, { status: "completed", endReason });
  settleTask(changes, run.threadId);
}

/**
 * provider-runtime.background-task: a driver's report that background work
 * of a run started or ended. Work starts only in a live run; an end is taken
 * whenever it comes (a dev server may outlive its run), and the last awaited
 * task's end completes a settling run in the same decision. A report of what
 * is already recorded changes nothing.
 */
export function decideBackgroundTaskReported(state: OrchestrationState, command: BackgroundTaskReportedCommand, ctx: DecideContext): Decision {
  const { threadId, runId, driver, nativeTaskId, kind, awaited, status, title } = command.data;
  const found = liveThread(state, threadId);
  if (found.kind === "rejected") return found;
  const run = state.runs.get(runId);
  if (run === undefined || run.threadId !== threadId) return reject("run_not_found", `run ${runId} does not exist in thread ${threadId}`);
  const id = backgroundTaskId(driver, runId, nativeTaskId);
  const pending = found.thread.pendingBackgroundTasks;
  const changes = new Changes(state, ctx);
  if (status === "started") {
    if (!isActiveRunStatus(run.status)) return reject("run_not_active", `run ${runId} is ${run.status}: it starts no background work`);
    if (pending.some((task) => task.id === id)) return changes.done();
    const task: PendingBackgroundTask = { id, kind, ...(awaited ? { awaited: true as const } : {}), runId, nativeTaskId, ...(title === undefined ? {} : { title }) };
    changes.putThread("thread.background-tasks-updated", changed(found.thread, ctx, { pendingBackgroundTasks: [...pending, task] }));
    return changes.done();
  }
  if (!pending.some((task) => task.id === id)) return changes.done();
  changes.putThread("thread.background-tasks-updated", changed(found.thread, ctx, { pendingBackgroundTasks: pending.filter((task) => task.id !== id) }));
  if (run.status === RunStatus.settlingBackgroundWork && !awaitsBackgroundWork(changes, run)) completeSettled(changes, run, "completed");
  return changes.done();
}

function describe(tasks: readonly PendingBackgroundTask[]): string {
  return tasks.map((task) => (task.title === undefined ? task.id : `${task.title} (${task.kind})`)).join(", ");
}

/**
 * thread.background-work.settle: settle a run in settling_background_work.
 * Without `timedOut` its awaited work must be over; with it (sent at the
 * run's backgroundSettleBy) the work still pending is cancelled and the run
 * completes with a notice saying what Loom stopped waiting for.
 */
export function decideBackgroundWorkSettle(state: OrchestrationState, command: ThreadBackgroundWorkSettleCommand, ctx: DecideContext): Decision {
  const { threadId, runId, timedOut } = command.data;
  if (!state.threads.has(threadId)) return reject("thread_not_found", `thread ${threadId} does not exist`);
  const run = state.runs.get(runId);
  if (run === undefined || run.threadId !== threadId) return reject("run_not_found", `run ${runId} does not exist in thread ${threadId}`);
  if (run.status !== RunStatus.settlingBackgroundWork) return reject("run_not_settling", `run ${runId} is ${run.status}, not settling background work`);
  const changes = new Changes(state, ctx);
  const held = runBackgroundTasks(changes, run).filter(holdsRun);
  if (!timedOut) {
    if (held.length > 0) return reject("background_work_pending", `run ${runId} still awaits ${describe(held)}`);
    completeSettled(changes, run, "completed");
    return changes.done();
  }
  const minutes = Math.round(BACKGROUND_SETTLE_TIMEOUT_MS / 60_000);
  changes.addItem(threadId, run.id, {
    type: "system_notice",
    level: "warning",
    text: `Loom stopped waiting for this run's background work after ${minutes} minutes and cancelled it: ${describe(held)}.`,
  });
  cancelBackgroundTasks(changes, run, held, "settle_timed_out");
  completeSettled(changes, run, "background_work_timed_out");
  return changes.done();
}

/**
 * The process that ran the thread's background work is gone (its session was
 * released, its server restarted): every pending task leaves the thread,
 * recorded as cancelled with `reason`. A run that was settling completes,
 * since its turn had, with a notice naming the work it lost. Returns whether
 * it ended a settling run.
 */
export function loseBackgroundWork(changes: Changes, threadId: string, reason: string): boolean {
  const thread = changes.thread(threadId);
  if (thread === undefined || thread.pendingBackgroundTasks.length === 0) return false;
  let settled = false;
  const byRun = new Map<string, PendingBackgroundTask[]>();
  for (const task of thread.pendingBackgroundTasks) byRun.set(task.runId ?? "", [...(byRun.get(task.runId ?? "") ?? []), task]);
  for (const [runId, tasks] of byRun) {
    const run = changes.run(runId);
    if (run === undefined) continue;
    cancelBackgroundTasks(changes, run, tasks, reason);
    if (run.status !== RunStatus.settlingBackgroundWork) continue;
    changes.addItem(threadId, run.id, { type: "system_notice", level: "warning", text: `The run's background work ended with its provider session (${reason}) before it finished: ${describe(tasks)}.` });
    completeSettled(changes, run, "background_work_lost");
    settled = true;
  }
  // A task recorded with no run (none is today) is dropped with the session as well.
  const left = changes.thread(threadId)!;
  if (left.pendingBackgroundTasks.length > 0) changes.putThread("thread.background-tasks-updated", changed(left, changes.ctx, { pendingBackgroundTasks: [] }));
  return settled;
}
