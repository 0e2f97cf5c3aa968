import type { LimitRecoveryView } from "../../contracts/tools/toolOutputs.js";
import type { AppThread } from "../../contracts/thread.js";
import type { OrchestrationState } from "../../core/state.js";
import { FAILOVER_TITLE } from "../../core/run/limitFailover.js";
import { latestRunOf, runsOf } from "../../engine/queries.js";

/**
 * What reads say about a thread a usage limit stopped (docs/limits.md,
 * "Waiting for the reset"): `waiting_on_limit` while its work resumes by
 * itself at the reset (or, after an outage, at its failover or retry),
 * `stopped_on_limit` when autoResume is off; null when
 * no limit holds it (none recorded, or its work went on since). The text
 * gives the reset's time of day in UTC; resetAt has the instant.
 */
export function limitRecoveryView(state: OrchestrationState, thread: AppThread): LimitRecoveryView | null {
  const recovery = thread.limitRecovery ?? null;
  if (recovery === null) return null;
  const runs = runsOf(state, thread.id);
  const stopped = runs.find((run) => run.id === recovery.runId);
  if (runs.some((run) => run.id !== recovery.runId && (stopped === undefined || run.ordinal > stopped.ordinal))) return null;
  const at = `${clockTime(recovery.resetAt)} UTC`;
  if (recovery.cause === "outage") {
    return { status: "waiting_on_limit", resetAt: recovery.resetAt, runId: recovery.runId, text: `waiting after provider errors: moves to a failover instance once one is available, else tried again at ${at}` };
  }
  return recovery.autoResume
    ? { status: "waiting_on_limit", resetAt: recovery.resetAt, runId: recovery.runId, text: `waiting for the limit to reset at ${at}, resumes by itself` }
    : { status: "stopped_on_limit", resetAt: recovery.resetAt, runId: recovery.runId, text: `stopped by a usage limit until ${at}; send a message to continue` };
}

/**
 * Where a limit moved the thread's work, for a person, while the run that
 * continues it there is the thread's latest: "moved to codex after claude's
 * usage limit (it resets at …)", the failover's own notice; null otherwise.
 */
export function limitMoveText(state: OrchestrationState, thread: AppThread): string | null {
  const run = latestRunOf(state, thread.id);
  if (run === null || run.kind !== "system_follow_up") return null;
  const items = state.turnItems.get(thread.id) ?? [];
  let continued = false;
  // Back from the end: the follow-up run's items, its notification, then the failover's notice just before it.
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item === undefined) continue;
    if (item.type === "notification" && item.runId === run.id) {
      if (item.title !== FAILOVER_TITLE) return null;
      continued = true;
      continue;
    }
    if (item.runId !== null && item.runId !== run.id) return null;
    if (continued && item.type === "system_notice" && item.text.startsWith("Moved to ")) return `moved${item.text.slice("Moved".length).replace(/\.$/, "")}`;
  }
  return null;
}

/** HH:MM of an instant, in UTC. */
function clockTime(iso: string): string {
  return new Date(iso).toISOString().slice(11, 16);
}
