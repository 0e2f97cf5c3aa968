import type { DelegatedTask, TaskHold } from "../../contracts/entities/delegatedTasks.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { Changes } from "../run/changes.js";

/** Task holds as the rest of core reads them (the commands are decided in waitHolds.ts). */

/** Whether some wait holds the task. */
export function isHeld(task: DelegatedTask): boolean {
  return (task.heldBy?.length ?? 0) > 0;
}

export function withoutHolds(changes: Changes, task: DelegatedTask, drop: (hold: TaskHold) => boolean): DelegatedTask {
  const holds = task.heldBy ?? [];
  const kept = holds.filter((hold) => !drop(hold));
  return kept.length === holds.length ? task : changes.updateTask(task, { heldBy: kept });
}

/** A run's end releases the holds of its waits (the agent's call was cut off with the turn). */
export function releaseRunHolds(changes: Changes, run: Run): void {
  for (const taskId of changes.state.tasks.keys()) {
    const task = changes.task(taskId)!;
    if (task.heldBy?.some((hold) => hold.runId === run.id)) withoutHolds(changes, task, (hold) => hold.runId === run.id);
  }
}
