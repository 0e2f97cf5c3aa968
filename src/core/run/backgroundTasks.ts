import { EffectKind } from "../../contracts/effects.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { PendingBackgroundTask } from "../../contracts/thread.js";
import { changed } from "../thread/guards.js";
import type { Changes } from "./changes.js";

/**
 * A thread's pending background tasks as records (docs/runs.md, "Background
 * work"): what holds a run, and cancelling a run's tasks. The deciders that
 * settle runs are in backgroundWork.ts; this file is what ending a run needs.
 */

/** How long a run settles at most: past it Loom stops waiting, so a driver that lost track of a task never keeps a run settling. */
export const BACKGROUND_SETTLE_TIMEOUT_MS = 30 * 60_000;

/** A subagent or background_task holds its run always; a command or monitor only when awaited (spec 000: agents often leave a dev server running). */
export function holdsRun(task: PendingBackgroundTask): boolean {
  return task.kind === "subagent" || task.kind === "background_task" || task.awaited === true;
}

/** The thread's pending background tasks the run started, as this decision leaves them. */
export function runBackgroundTasks(changes: Changes, run: Run): PendingBackgroundTask[] {
  return (changes.thread(run.threadId)?.pendingBackgroundTasks ?? []).filter((task) => task.runId === run.id);
}

/** Whether background work the run awaits is still pending. */
export function awaitsBackgroundWork(changes: Changes, run: Run): boolean {
  return runBackgroundTasks(changes, run).some(holdsRun);
}

/**
 * Cancel `tasks` of the run: they leave the thread's pendingBackgroundTasks,
 * one run.background-work-cancelled names them and why, and the driver is
 * told to stop those it knows by id. Returns what was cancelled.
 */
export function cancelBackgroundTasks(changes: Changes, run: Run, tasks: readonly PendingBackgroundTask[], reason: string): readonly PendingBackgroundTask[] {
  const thread = changes.thread(run.threadId);
  if (thread === undefined || tasks.length === 0) return [];
  const ids = new Set(tasks.map((task) => task.id));
  const next = changed(thread, changes.ctx, { pendingBackgroundTasks: thread.pendingBackgroundTasks.filter((task) => !ids.has(task.id)) });
  changes.recordThread(next);
  changes.events.push({ type: "run.background-work-cancelled", streamId: thread.id, data: { thread: next, runId: run.id, cancelled: [...tasks], reason } });
  const nativeTaskIds = tasks.flatMap((task) => (task.nativeTaskId === undefined ? [] : [task.nativeTaskId]));
  if (nativeTaskIds.length > 0) changes.effect(EffectKind.cancelBackgroundWork, thread.id, { threadId: thread.id, runId: run.id, nativeTaskIds });
  return tasks;
}

/**
 * A run that ends no longer awaits anything: the work that held it is
 * cancelled with the run's end reason, so nothing stays pending for a run
 * that is over. A command or monitor it did not await (a dev server) stays
 * until it ends or its session goes.
 */
export function cancelHeldBackgroundWork(changes: Changes, run: Run, reason: string): void {
  cancelBackgroundTasks(changes, run, runBackgroundTasks(changes, run).filter(holdsRun), reason);
}
