import type { AppContext } from "../context.js";
import { followChanges } from "../orchestration/changeFeed.js";
import type { StreamHandle } from "../orchestration/subscriptions.js";

/** The events that save, fire or delete a scheduled task. */
const SCHEDULED_TASK_EVENTS: ReadonlySet<string> = new Set(["scheduled-task.updated", "scheduled-task.deleted"]);

/**
 * `GET /api/schedules/changes` and the scheduler's timer: `onChange` hears
 * the sequence of every later change to a scheduled task, on any node
 * sharing the log (changes committed together once, with the last one's
 * sequence). Resolves once the feed is live.
 */
export function followScheduledTaskChanges(ctx: AppContext, onChange: (change: { readonly sequence: number }) => void): Promise<StreamHandle> {
  return followChanges(ctx, SCHEDULED_TASK_EVENTS, (sequence) => onChange({ sequence }));
}
