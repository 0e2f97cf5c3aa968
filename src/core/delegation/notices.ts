import type { DeliverTaskNoticeCommand } from "../../contracts/commands/runtimeCommands.js";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import { contextTransferEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { Changes } from "../run/changes.js";
import { deliverNotice } from "../run/notify.js";
import type { OrchestrationState } from "../state.js";
import { settleTask } from "./settle.js";
import { withoutSystemReminders } from "./agentText.js";

type Notice = DelegatedTask["notices"][number];

function completionText(task: DelegatedTask): string {
  return [
    `Delegated task "${task.title}" (taskId ${task.taskId}, child thread ${task.childThreadId}) finished: ${task.status}.`,
    "",
    "Result:",
    task.summary ?? "(no result text)",
    "",
    "Use task_status for details, or t3_thread_send on the child thread for a follow-up.",
  ].join("\n");
}

/**
 * A blocking question stops the child until it is answered; an asynchronous
 * one (a Codex async question) lets it keep working meanwhile (spec 000).
 */
function questionText(task: DelegatedTask, requestId: string, questions: string, blocking: boolean): string {
  const state = blocking ? "is blocked until it is answered" : "is still working while it waits for the answer";
  return [
    `Delegated task "${task.title}" (taskId ${task.taskId}) asks a question and ${state}:`,
    "",
    questions,
    "",
    `Answer with t3_pending_request_respond (threadId ${task.childThreadId}, requestId ${requestId}), or ask the user.`,
  ].join("\n");
}

/**
 * Bring a notice to the parent (a `notification` item): steered into its
 * running turn when the provider can steer, else a follow-up run that wakes
 * it (queued behind active work). There is no cap on how many notices a
 * parent receives.
 */
function deliver(changes: Changes, task: DelegatedTask, title: string, text: string, requestId: string | null): Pick<Notice, "runId" | "delivery"> {
  const sent = deliverNotice(changes, task.parentThreadId, { title, text, sourceThreadId: task.childThreadId, taskId: task.taskId, requestId }, { allowSteer: true });
  return { runId: sent.runId, delivery: sent.delivery };
}

/** delegated-task.deliver-notice: a task's result or a child's question reaches its parent. */
export function decideDeliverTaskNotice(state: OrchestrationState, command: DeliverTaskNoticeCommand, ctx: DecideContext): Decision {
  const changes = new Changes(state, ctx);
  const task = changes.task(command.data.taskId);
  if (task === undefined) return reject("task_not_found", `task ${command.data.taskId} does not exist`);
  const parent = state.threads.get(task.parentThreadId);
  if (parent === undefined || parent.deletedAt !== null) return reject("thread_not_found", `parent thread ${task.parentThreadId} is gone`);
  if (command.data.kind === "completion") {
    if (task.completionDelivery !== "pending") return reject("delivery_not_pending", `task ${task.taskId} delivery is ${task.completionDelivery}`);
    const sent = deliver(changes, task, `Task "${task.title}" finished: ${task.status}`, completionText(task), null);
    const transfer = task.resultContextTransferId === null ? undefined : state.transfers.get(task.resultContextTransferId);
    if (transfer !== undefined) changes.events.push(contextTransferEvent("context-transfer.updated", { ...transfer, status: "consumed", updatedAt: ctx.now, consumedAt: ctx.now }));
    changes.updateTask(task, { completionDelivery: "delivered", notices: [...task.notices, { kind: "completion", requestId: null, ...sent }] });
    // A parent that got no run for it (its provider is gone) has nothing left to wait for.
    settleTask(changes, task.parentThreadId);
    return changes.done();
  }
  const requestId = command.data.requestId;
  const request = requestId === null ? undefined : state.runtimeRequests.get(requestId);
  if (request === undefined || request.threadId !== task.childThreadId || request.status !== "pending") {
    return reject("request_not_pending", `request ${requestId ?? "?"} is not a pending question of task ${task.taskId}`);
  }
  if (task.notices.some((notice) => notice.requestId === request.id)) return reject("delivery_not_pending", `question ${request.id} was already routed`);
  const questions = ((request.payload.questions as { question: string }[] | undefined) ?? []).map((q) => `- ${withoutSystemReminders(q.question)}`).join("\n");
  const sent = deliver(changes, task, `Task "${task.title}" asks a question`, questionText(task, request.id, questions, request.blocking), request.id);
  changes.updateTask(task, { notices: [...task.notices, { kind: "question", requestId: request.id, ...sent }] });
  return changes.done();
}

/** A question answered or dismissed before its queued notice started: that notice run is cancelled. */
export function cancelQuestionNotices(changes: Changes, childThreadId: string, requestId: string): void {
  const taskId = changes.state.taskByChildThread.get(childThreadId);
  const task = taskId === undefined ? undefined : changes.task(taskId);
  if (task === undefined) return;
  for (const notice of task.notices) {
    if (notice.kind !== "question" || notice.requestId !== requestId || notice.delivery !== "queued" || notice.runId === null) continue;
    cancelQueuedNotice(changes, notice.runId, "question_resolved");
  }
}

/** Cancel a notice run that has not started yet. */
export function cancelQueuedNotice(changes: Changes, runId: string, endReason: string): void {
  const run = changes.run(runId);
  if (run?.status !== "queued") return;
  changes.updateRun(run, { status: "cancelled", queueRank: null, held: false, endReason, endedAt: changes.ctx.now });
}
