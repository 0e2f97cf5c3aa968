import type { DeliverTaskNoticeCommand } from "../../contracts/commands/runtimeCommands.js";
import type { DelegatedTask } from "../../contracts/entities/delegatedTasks.js";
import { contextTransferEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { Changes } from "../run/changes.js";
import { deliverNotice } from "../run/notify.js";
import { APPROVALS_WITHIN_MODE, type ApprovalKind, isApprovalKind, type RuntimeRequest } from "../../contracts/entities/runtimeRequests.js";
import type { RuntimeMode } from "../../contracts/modes.js";
import type { OrchestrationState } from "../state.js";
import { settleTask } from "./settle.js";
import { completionGoesThroughTask, isHeld } from "./holds.js";
import { MAX_NOTICE_REDELIVERIES } from "./lostNotices.js";
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
 * A routed approval (docs/delegation.md, Approvals): what the child wants to
 * do, and what the parent's own runtime mode lets it accept; the rest is the
 * owner's to decide.
 */
function approvalText(task: DelegatedTask, request: RuntimeRequest, parentMode: RuntimeMode): string {
  const title = typeof request.payload.title === "string" && request.payload.title !== "" ? request.payload.title : request.kind;
  const detail = typeof request.payload.detail === "string" ? withoutSystemReminders(request.payload.detail) : "";
  const grantable = APPROVALS_WITHIN_MODE[parentMode];
  const reach = grantable.includes(request.kind as ApprovalKind)
    ? `Your runtime mode (${parentMode}) covers a ${request.kind} approval: accept it or decline it`
    : `Your runtime mode (${parentMode}) does not cover a ${request.kind} approval: you may decline it, or leave it to the user`;
  return [
    `Delegated task "${task.title}" (taskId ${task.taskId}) asks for approval (${request.kind}) and is blocked until it is decided:`,
    "",
    title,
    ...(detail === "" ? [] : [detail]),
    "",
    `${reach}. Decide with t3_pending_request_respond (threadId ${task.childThreadId}, requestId ${request.id}, decision "accept" or "decline").`,
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

/** delegated-task.deliver-notice: a task's result, a child's question or a routed approval reaches its parent. */
export function decideDeliverTaskNotice(state: OrchestrationState, command: DeliverTaskNoticeCommand, ctx: DecideContext): Decision {
  const changes = new Changes(state, ctx);
  const task = changes.task(command.data.taskId);
  if (task === undefined) return reject("task_not_found", `task ${command.data.taskId} does not exist`);
  const parent = state.threads.get(task.parentThreadId);
  if (parent === undefined || parent.deletedAt !== null) return reject("thread_not_found", `parent thread ${task.parentThreadId} is gone`);
  if (command.data.kind === "completion") {
    if (task.completionDelivery !== "pending") return reject("delivery_not_pending", `task ${task.taskId} delivery is ${task.completionDelivery}`);
    if (isHeld(task)) return reject("delivery_held", `a wait holds task ${task.taskId}: its result goes through that wait`);
    if (completionGoesThroughTask(state, task)) return reject("delivery_held", `task ${task.taskId} is an MCP task of a run still in its turn: its result goes through tasks/result`);
    const sent = deliver(changes, task, `Task "${task.title}" finished: ${task.status}`, completionText(task), null);
    const transfer = task.resultContextTransferId === null ? undefined : state.transfers.get(task.resultContextTransferId);
    if (transfer !== undefined && transfer.status !== "consumed") changes.events.push(contextTransferEvent("context-transfer.updated", { ...transfer, status: "consumed", updatedAt: ctx.now, consumedAt: ctx.now }));
    changes.updateTask(task, { completionDelivery: "delivered", notices: [...task.notices, { kind: "completion", requestId: null, ...sent }] });
    // A parent that got no run for it (its provider is gone) has nothing left to wait for.
    settleTask(changes, task.parentThreadId);
    return changes.done();
  }
  const requestId = command.data.requestId;
  const request = requestId === null ? undefined : state.runtimeRequests.get(requestId);
  const approval = command.data.kind === "approval";
  const what = approval ? "approval request" : "question";
  if (request === undefined || request.threadId !== task.childThreadId || request.status !== "pending" || (approval ? !isApprovalKind(request.kind) : request.kind !== "user_input")) {
    return reject("request_not_pending", `request ${requestId ?? "?"} is not a pending ${what} of task ${task.taskId}`);
  }
  // A blocking one ends a wait holding the task, which hands it over; an asynchronous one never does, so it is routed regardless.
  if (request.blocking && isHeld(task)) return reject("delivery_held", `a wait holds task ${task.taskId}: its ${what} goes through that wait`);
  // A notice whose run was lost before its agent read it does not count (markLostNotices), up to MAX_NOTICE_REDELIVERIES times.
  const routed = task.notices.filter((notice) => notice.requestId === request.id);
  if (routed.some((notice) => notice.lostAt === undefined) || routed.length > MAX_NOTICE_REDELIVERIES) {
    return reject("delivery_not_pending", `${what} ${request.id} was already routed`);
  }
  if (approval) {
    if (task.approvalRouting !== "parent") return reject("delivery_not_pending", `task ${task.taskId} leaves approvals to the owner`);
    const sent = deliver(changes, task, `Task "${task.title}" asks for approval`, approvalText(task, request, parent.runtimeMode), request.id);
    changes.updateTask(task, { notices: [...task.notices, { kind: "approval", requestId: request.id, ...sent }] });
    return changes.done();
  }
  const questions = ((request.payload.questions as { question: string }[] | undefined) ?? []).map((q) => `- ${withoutSystemReminders(q.question)}`).join("\n");
  const sent = deliver(changes, task, `Task "${task.title}" asks a question`, questionText(task, request.id, questions, request.blocking), request.id);
  changes.updateTask(task, { notices: [...task.notices, { kind: "question", requestId: request.id, ...sent }] });
  return changes.done();
}

/** A question or approval settled before its queued notice started: that notice run is cancelled. */
export function cancelQuestionNotices(changes: Changes, childThreadId: string, requestId: string): void {
  const taskId = changes.state.taskByChildThread.get(childThreadId);
  const task = taskId === undefined ? undefined : changes.task(taskId);
  if (task === undefined) return;
  for (const notice of task.notices) {
    if (notice.kind === "completion" || notice.requestId !== requestId || notice.delivery !== "queued" || notice.runId === null) continue;
    cancelQueuedNotice(changes, notice.runId, "question_resolved");
  }
}

/** Cancel a notice run that has not started yet. */
export function cancelQueuedNotice(changes: Changes, runId: string, endReason: string): void {
  const run = changes.run(runId);
  if (run?.status !== "queued") return;
  changes.updateRun(run, { status: "cancelled", queueRank: null, held: false, endReason, endedAt: changes.ctx.now });
}
