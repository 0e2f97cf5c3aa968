import type {
  ThreadAutoSettleCommand,
  ThreadAutoSettleSetCommand,
  ThreadMarkUnreadCommand,
  ThreadSettleCommand,
  ThreadSnoozeCommand,
  ThreadUnsettleCommand,
  ThreadUnsnoozeCommand,
  ThreadVisitCommand,
} from "../../contracts/commands/threadCommands.js";
import { threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { type DecideContext, type Decision, accept, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { changed, liveThread } from "./guards.js";

/** Settling takes the thread out of the active list (activeRank cleared); a pin stays. */
export function decideThreadSettle(state: OrchestrationState, command: ThreadSettleCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (thread.settledAt !== null) {
    return reject(RejectionCode.threadAlreadySettled, `thread ${thread.id} is already settled`);
  }
  return accept([threadEvent("thread.settled", settled(thread, ctx))]);
}

export function decideThreadUnsettle(state: OrchestrationState, command: ThreadUnsettleCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (thread.settledAt === null) {
    return reject(RejectionCode.threadNotSettled, `thread ${thread.id} is not settled`);
  }
  return accept([threadEvent("thread.unsettled", changed(thread, ctx, { settledAt: null }))]);
}

/**
 * The system settling a thread whose work finished. Unlike thread.settle it
 * honours the thread's autoSettle switch and refuses while work still holds
 * the thread (a queued run, or a pending background task that holds it).
 */
export function decideThreadAutoSettle(state: OrchestrationState, command: ThreadAutoSettleCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (!thread.autoSettle) {
    return reject(RejectionCode.autoSettleDisabled, `thread ${thread.id} has auto-settle turned off`);
  }
  if (thread.settledAt !== null) {
    return reject(RejectionCode.threadAlreadySettled, `thread ${thread.id} is already settled`);
  }
  const pending = pendingWork(thread);
  if (pending !== null) {
    return reject(RejectionCode.threadWorkPending, `thread ${thread.id} still has ${pending}`);
  }
  return accept([threadEvent("thread.settled", settled(thread, ctx))]);
}

export function decideThreadAutoSettleSet(state: OrchestrationState, command: ThreadAutoSettleSetCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const autoSettle = command.data.autoSettle;
  if (thread.autoSettle === autoSettle) {
    return reject(RejectionCode.autoSettleUnchanged, `thread ${thread.id} already has auto-settle ${autoSettle ? "on" : "off"}`);
  }
  return accept([threadEvent("thread.auto-settle-set", changed(thread, ctx, { autoSettle }))]);
}

/**
 * Snooze until a later instant (stored normalized to UTC). Snoozing a snoozed
 * thread to a different instant reschedules it.
 */
export function decideThreadSnooze(state: OrchestrationState, command: ThreadSnoozeCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const untilMs = Date.parse(command.data.until);
  const nowMs = Date.parse(ctx.now);
  if (Number.isNaN(untilMs) || !(untilMs > nowMs)) {
    return reject(RejectionCode.invalidSnoozeTime, `snooze time ${command.data.until} is not after ${ctx.now}`);
  }
  const until = new Date(untilMs).toISOString();
  if (thread.snoozedUntil === until) {
    return reject(RejectionCode.threadAlreadySnoozed, `thread ${thread.id} is already snoozed until ${until}`);
  }
  return accept([threadEvent("thread.snoozed", changed(thread, ctx, { snoozedUntil: until, snoozedAt: ctx.now }))]);
}

/** Only a snooze still in force can be ended: one whose time has passed already woke. */
export function decideThreadUnsnooze(state: OrchestrationState, command: ThreadUnsnoozeCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (!isSnoozed(thread, ctx.now)) {
    return reject(RejectionCode.threadNotSnoozed, `thread ${thread.id} is not snoozed`);
  }
  return accept([threadEvent("thread.unsnoozed", changed(thread, ctx, { snoozedUntil: null, snoozedAt: null }))]);
}

/** A visit is always recorded: it moves lastVisitedAt and clears an unread mark. */
export function decideThreadVisit(state: OrchestrationState, command: ThreadVisitCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  return accept([threadEvent("thread.visited", changed(found.thread, ctx, { lastVisitedAt: ctx.now, markedUnreadAt: null }))]);
}

export function decideThreadMarkUnread(state: OrchestrationState, command: ThreadMarkUnreadCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (thread.markedUnreadAt !== null) {
    return reject(RejectionCode.threadAlreadyUnread, `thread ${thread.id} is already marked unread`);
  }
  return accept([threadEvent("thread.marked-unread", changed(thread, ctx, { markedUnreadAt: ctx.now }))]);
}

/** Whether a snooze is in force at `now`. */
export function isSnoozed(thread: AppThread, now: string): boolean {
  return thread.snoozedUntil !== null && Date.parse(thread.snoozedUntil) > Date.parse(now);
}

function settled(thread: AppThread, ctx: DecideContext): AppThread {
  return changed(thread, ctx, { settledAt: ctx.now, activeRank: null });
}

/**
 * What still holds the thread open, or null. A subagent or background task
 * always holds it; a command or monitor only when awaited (spec 000: agents
 * often leave a dev server running).
 */
function pendingWork(thread: AppThread): string | null {
  if (thread.queuedRuns.length > 0) {
    return `${thread.queuedRuns.length} queued run(s)`;
  }
  const holding = thread.pendingBackgroundTasks.filter(
    (task) => task.kind === "subagent" || task.kind === "background_task" || task.awaited === true,
  );
  if (holding.length > 0) {
    return `pending background work (${holding.map((task) => task.id).join(", ")})`;
  }
  return null;
}
