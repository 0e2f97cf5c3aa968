import type {
  CompletionDeliveryAcknowledgeCommand,
  CompletionDeliveryDisposeCommand,
  DelegatedTaskWakePolicyCommand,
  SubagentStopCommand,
} from "../../contracts/commands/delegationCommands.js";
import type { FinalizeTaskCommand } from "../../contracts/commands/runtimeCommands.js";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import { isTerminalDelegatedTaskStatus } from "../../contracts/entities/delegatedTasks.js";
import { contextTransferEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, type Rejected, reject } from "../decision.js";
import { Changes } from "../run/changes.js";
import { activeRun, stopThreadWork } from "../run/lifecycle.js";
import { pendingLimitResume } from "../run/limitWait.js";
import type { OrchestrationState } from "../state.js";
import { cancelQueuedNotice } from "./notices.js";
import { childStillWorking, settleTask } from "./settle.js";
import { cancelLostFollowUps, settleFollowUps } from "./followUps.js";

type Found = { kind: "found"; changes: Changes; task: DelegatedTask } | Rejected;

function findTask(state: OrchestrationState, ctx: DecideContext, taskId: string): Found {
  const changes = new Changes(state, ctx);
  const task = changes.task(taskId);
  if (task === undefined) return reject("task_not_found", `task ${taskId} does not exist`);
  return { kind: "found", changes, task };
}

/** Mark the result consumed by the parent and cancel a completion notice that has not started. */
function consumeResult(changes: Changes, task: DelegatedTask): void {
  const transfer = task.resultContextTransferId === null ? undefined : changes.state.transfers.get(task.resultContextTransferId);
  if (transfer !== undefined && transfer.status !== "consumed") {
    changes.events.push(contextTransferEvent("context-transfer.updated", { ...transfer, status: "consumed", updatedAt: changes.ctx.now, consumedAt: changes.ctx.now }));
  }
  for (const notice of task.notices) {
    if (notice.kind === "completion" && notice.delivery === "queued" && notice.runId !== null) cancelQueuedNotice(changes, notice.runId, "result_acknowledged");
  }
}

/**
 * delegated_task.wake-policy: whether completion wakes the parent. `never`
 * disposes a pending delivery. Whenever a pending result stops being on its
 * way, a parent that was only waiting for it may settle now (settleTask).
 */
export function decideWakePolicy(state: OrchestrationState, command: DelegatedTaskWakePolicyCommand, ctx: DecideContext): Decision {
  const found = findTask(state, ctx, command.data.taskId);
  if (found.kind === "rejected") return found;
  const { changes, task } = found;
  if (task.wakePolicy === command.data.wakePolicy) return reject("wake_policy_unchanged", `task ${task.taskId} already has wake policy ${task.wakePolicy}`);
  const disposes = command.data.wakePolicy === "never" && task.completionDelivery === "pending";
  changes.updateTask(task, { wakePolicy: command.data.wakePolicy, ...(disposes ? { completionDelivery: "disposed" as const } : {}) });
  if (disposes) settleTask(changes, task.parentThreadId);
  return changes.done();
}

/** delegated_task.completion-delivery.acknowledge: the parent has the result (a wait or task_status returned it). */
export function decideDeliveryAcknowledge(state: OrchestrationState, command: CompletionDeliveryAcknowledgeCommand, ctx: DecideContext): Decision {
  const found = findTask(state, ctx, command.data.taskId);
  if (found.kind === "rejected") return found;
  const { changes, task } = found;
  if (task.completionDelivery !== "pending" && task.completionDelivery !== "delivered") {
    return reject("delivery_not_pending", `task ${task.taskId} delivery is ${task.completionDelivery}`);
  }
  acknowledgeResult(changes, task);
  return changes.done();
}

/** The parent has the task's result: it is consumed, and a parent only waiting for it may settle. */
export function acknowledgeResult(changes: Changes, task: DelegatedTask): DelegatedTask {
  consumeResult(changes, task);
  const acknowledged = changes.updateTask(task, { completionDelivery: "acknowledged" });
  settleTask(changes, task.parentThreadId);
  return acknowledged;
}

/** delegated_task.completion-delivery.dispose: no automatic delivery; a queued notice that has not started is cancelled. */
export function decideDeliveryDispose(state: OrchestrationState, command: CompletionDeliveryDisposeCommand, ctx: DecideContext): Decision {
  const found = findTask(state, ctx, command.data.taskId);
  if (found.kind === "rejected") return found;
  const { changes, task } = found;
  if (task.completionDelivery === "disposed" || task.completionDelivery === "acknowledged") {
    return reject("delivery_not_pending", `task ${task.taskId} delivery is ${task.completionDelivery}`);
  }
  for (const notice of task.notices) {
    if (notice.kind === "completion" && notice.delivery === "queued" && notice.runId !== null) cancelQueuedNotice(changes, notice.runId, "delivery_disposed");
  }
  changes.updateTask(task, { completionDelivery: "disposed" });
  settleTask(changes, task.parentThreadId);
  return changes.done();
}

/** The task's descendants, deepest first. */
function descendants(changes: Changes, task: DelegatedTask): DelegatedTask[] {
  const below = changes.allTasks().filter((candidate) => candidate.parentThreadId === task.childThreadId);
  return below.flatMap((child) => [...descendants(changes, child), child]);
}

/**
 * subagent.stop (task_cancel): stop every task the child delegated (a
 * finished one's pending result is disposed, so it cannot wake the stopped
 * thread), then the child thread (interrupt its running turn, hold its queued
 * turns), cancel the task's own queued turn, and dispose automatic delivery
 * to the parent.
 * A nonterminal task with nothing left to stop is rejected.
 */
export function decideSubagentStop(state: OrchestrationState, command: SubagentStopCommand, ctx: DecideContext): Decision {
  const found = findTask(state, ctx, command.data.taskId);
  if (found.kind === "rejected") return found;
  const { changes, task } = found;
  const terminal = isTerminalDelegatedTaskStatus(task.status);
  const ownRun = task.childRunId === null ? undefined : changes.run(task.childRunId);
  const ownQueued = ownRun?.status === "queued";
  if (!terminal && activeRun(changes, task.childThreadId) === null && !ownQueued && !childStillWorking(changes, task.childThreadId)) {
    return reject("task_not_cancellable", `task ${task.taskId} has no running turn, no queued turn of its own and no unfinished work`);
  }
  stopTaskTree(changes, task, command.data.reason ?? "cancelled");
  return changes.done();
}

/** delegated-task.finalize: settle a task whose work is over (after a restart; a no-op when already final). */
export function decideFinalizeTask(state: OrchestrationState, command: FinalizeTaskCommand, ctx: DecideContext): Decision {
  const found = findTask(state, ctx, command.data.taskId);
  if (found.kind === "rejected") return found;
  const { changes, task } = found;
  if (task.resultContextTransferId !== null) return reject("delivery_not_pending", `task ${task.taskId} is already final`);
  settleTask(changes, task.childThreadId);
  if (changes.events.length === 0) return reject("task_still_working", `task ${task.taskId} still has work`);
  return changes.done();
}


/** Stop a thread's work; true when work ended: a run, or a wait for a usage limit's reset (nothing else would settle its task then). */
function stopWork(changes: Changes, threadId: string, reason: string): boolean {
  const waitedOnLimit = pendingLimitResume(changes, threadId) !== null;
  return stopThreadWork(changes, threadId, reason) !== null || waitedOnLimit;
}

/**
 * Stop a task's whole tree (subagent.stop, a budget that ran out): its
 * descendants, its child thread's work, its own queued turn and automatic
 * delivery; then settle what ended. Returns the threads whose work ended.
 */
export function stopTaskTree(changes: Changes, task: DelegatedTask, reason: string): string[] {
  const ctx = changes.ctx;
  const terminal = isTerminalDelegatedTaskStatus(task.status);
  const ownRun = task.childRunId === null ? undefined : changes.run(task.childRunId);
  const ownQueued = ownRun?.status === "queued";
  const ended: string[] = [];
  for (const descendant of descendants(changes, task)) {
    if (!isTerminalDelegatedTaskStatus(descendant.status) && descendant.cancelRequestedAt === null) {
      changes.updateTask(changes.task(descendant.taskId)!, { cancelRequestedAt: ctx.now, cancelReason: reason });
    } else if (descendant.completionDelivery === "pending") {
      // A finished descendant's result must not wake the thread being stopped.
      changes.updateTask(changes.task(descendant.taskId)!, { completionDelivery: "disposed" });
    }
    if (stopWork(changes, descendant.childThreadId, reason)) ended.push(descendant.childThreadId);
  }
  if (!terminal && task.cancelRequestedAt === null) changes.updateTask(changes.task(task.taskId)!, { cancelRequestedAt: ctx.now, cancelReason: reason });
  if (stopWork(changes, task.childThreadId, reason)) ended.push(task.childThreadId);
  if (ownQueued && ownRun !== undefined) {
    const current = changes.run(ownRun.id)!;
    changes.updateRun(current, { status: "cancelled", queueRank: null, held: false, endReason: "cancelled", endedAt: ctx.now });
    ended.push(task.childThreadId);
  }
  const latest = changes.task(task.taskId)!;
  if (latest.completionDelivery === "pending" || latest.completionDelivery === "not_ready") {
    for (const notice of latest.notices) {
      if (notice.kind === "completion" && notice.delivery === "queued" && notice.runId !== null) cancelQueuedNotice(changes, notice.runId, "task_cancelled");
    }
    changes.updateTask(latest, { completionDelivery: "disposed" });
  }
  for (const threadId of ended) settleTask(changes, threadId);
  // A task with no work left that can start (no run, or only turns the stop just held) settles now.
  if (!childStillWorking(changes, task.childThreadId)) settleTask(changes, task.childThreadId);
  // A follow-up that lost its child run but still shows as running here is cancelled (spec 000, task_cancel).
  settleFollowUps(changes, task.childThreadId);
  cancelLostFollowUps(changes, task.taskId);
  return ended;
}