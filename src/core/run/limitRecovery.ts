import type { LimitRecoveryResumeCommand, TurnCompletedCommand } from "../../contracts/commands/runtimeCommands.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { LimitCause, ThreadLimitRecovery } from "../../contracts/thread.js";
import type { DecideContext, Decision } from "../decision.js";
import { settleTask } from "../delegation/settle.js";
import type { OrchestrationState } from "../state.js";
import { changed } from "../thread/guards.js";
import { Changes } from "./changes.js";
import { endRecovery, movedOn, namedRecovery } from "./limitWait.js";
import { deliverNotice } from "./notify.js";

/**
 * Limit recovery (spec 004 `limitRecovery`, docs/limits.md "Waiting for the
 * reset"): a run a usage limit stopped is recorded on its thread with the
 * limit's reset time, the thread snoozes until then, and with autoResume its
 * work resumes after the reset as one follow-up run. While that resume is
 * pending the thread's work is not over, so a delegated task waits for it
 * instead of failing.
 */

export type UsageLimitStop = NonNullable<TurnCompletedCommand["data"]["limit"]>;

/** The title of the follow-up that resumes the work; its text says what to do. */
export const LIMIT_RESUME_TITLE = "The usage limit reset";

export function limitResumeText(resetAt: string, cause: LimitCause = "usage_limit"): string {
  const what = cause === "outage" ? `The provider failed your previous turn with errors Loom's retries could not get past; it is tried again now (${resetAt}).` : `The usage limit that stopped your previous turn reset at ${resetAt}.`;
  return `${what} Continue the work you were doing when it stopped you, from where you left off, and finish it as you were asked.`;
}

/** The timeline notice of a recorded stop: when the limit resets and what happens then. */
export function limitStopNotice(recovery: Pick<ThreadLimitRecovery, "resetAt" | "autoResume" | "cause">): string {
  // The session manager records an outage only with autoResume on (docs/limits.md, "After an outage").
  if (recovery.cause === "outage") return `Stopped by provider errors past Loom's retries: the work moves to a failover instance as soon as one is available, else it is tried here again at ${recovery.resetAt}.`;
  return recovery.autoResume
    ? `Stopped by a usage limit: waiting for it to reset at ${recovery.resetAt}; the work resumes by itself then.`
    : `Stopped by a usage limit until ${recovery.resetAt}; autoResume is off for this provider instance, so the work resumes only when a message is sent.`;
}

/**
 * A failed run that reported a usage limit resetting later (or an outage,
 * with when to try its instance again): record the
 * recovery on its thread and snooze the thread until the reset (a snooze
 * already in force past it stays). A reset that already passed is an
 * ordinary failure. Returns whether a recovery was recorded.
 */
export function recordLimitStop(changes: Changes, run: Run, limit: UsageLimitStop): boolean {
  const thread = changes.thread(run.threadId);
  const resetMs = Date.parse(limit.resetAt);
  if (thread === undefined || Number.isNaN(resetMs) || resetMs <= Date.parse(changes.ctx.now)) return false;
  const resetAt = new Date(resetMs).toISOString();
  const snoozedLonger = thread.snoozedUntil !== null && Date.parse(thread.snoozedUntil) >= resetMs;
  const recovery: ThreadLimitRecovery = {
    runId: run.id,
    resetAt,
    autoResume: limit.autoResume,
    message: limit.message,
    ...(limit.cause === "outage" ? { cause: "outage" as const } : {}),
    ...(snoozedLonger ? {} : { snooze: { until: resetAt } }),
  };
  const snooze = snoozedLonger ? {} : { snoozedUntil: resetAt, snoozedAt: changes.ctx.now };
  changes.putThread("thread.limit-recovery-updated", changed(thread, changes.ctx, { limitRecovery: recovery, ...snooze }));
  changes.addItem(run.threadId, run.id, { type: "system_notice", level: "warning", text: limitStopNotice(recovery) });
  return true;
}

/**
 * The limit has reset (the limit resumer says when, by its clock): clear the
 * recovery and, unless the thread's work already went on, resume it as a
 * follow-up run. The command must name the thread's current recovery, so a
 * retry or a second node's resume of the same reset is refused
 * (limit_recovery_stale). A snooze the limit set wakes with it.
 */
export function decideLimitRecoveryResume(state: OrchestrationState, command: LimitRecoveryResumeCommand, ctx: DecideContext): Decision {
  const named = namedRecovery(state, command.data);
  if (named.kind === "rejected") return named;
  const { thread, recovery } = named;
  const changes = new Changes(state, ctx);
  endRecovery(changes, thread, recovery);
  if (recovery.autoResume && !movedOn(changes, recovery, thread.id)) {
    deliverNotice(changes, thread.id, { title: LIMIT_RESUME_TITLE, text: limitResumeText(recovery.resetAt, recovery.cause), sourceThreadId: null }, { allowSteer: false });
  }
  // A task that waited on the resume settles now when nothing resumed it (no provider, or its work went on and ended).
  settleTask(changes, thread.id);
  return changes.done();
}
