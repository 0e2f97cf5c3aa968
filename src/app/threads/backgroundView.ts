import type { AppThread } from "../../contracts/thread.js";
import type { OrchestrationState } from "../../core/state.js";
import { holdsRun } from "../../core/run/backgroundTasks.js";
import { activeRunOf } from "../../engine/queries.js";

/**
 * What reads say about a thread whose run is settling background work
 * (docs/runs.md, "Background work"): the work its run awaits and when Loom
 * stops waiting for it (the time of day in UTC; the run's backgroundSettleBy
 * has the instant, t3_background_wait the tasks); null when its active run
 * is not settling.
 */
export function backgroundWorkText(state: OrchestrationState, thread: AppThread): string | null {
  const run = activeRunOf(state, thread.id);
  if (run?.status !== "settling_background_work" || run.backgroundSettleBy === undefined) return null;
  const tasks = thread.pendingBackgroundTasks.filter((task) => task.runId === run.id && holdsRun(task));
  const named = tasks.map((task) => `${task.title ?? task.id} (${task.kind})`).join(", ");
  return `settling background work: ${named === "" ? "nothing left" : named}; Loom stops waiting at ${run.backgroundSettleBy.slice(11, 16)} UTC`;
}
