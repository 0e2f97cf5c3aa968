import type { NotificationDeliveryAcceptCommand } from "../../contracts/commands/noticeCommands.js";
import { contextTransferEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { settleTask } from "../delegation/settle.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";
import { Changes } from "./changes.js";

/**
 * notification.delivery.accept: the recipient took in a notification some
 * other way, so the follow-up run that would carry it is cancelled before it
 * starts and the item reads `accepted`. Accepting a task's completion notice
 * acknowledges the task's result too. Only a notice still waiting in the
 * queue can be accepted: a steered one was delivered, a started one is being read.
 */
export function decideNotificationDeliveryAccept(state: OrchestrationState, command: NotificationDeliveryAcceptCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const changes = new Changes(state, ctx);
  const item = changes.existingItem(command.data.itemId);
  if (item?.type !== "notification" || item.threadId !== found.thread.id) {
    return reject(RejectionCode.notificationNotFound, `thread ${found.thread.id} has no notification ${command.data.itemId}`);
  }
  const run = item.runId === null ? undefined : changes.run(item.runId);
  if (item.delivery !== "queued" || run === undefined || run.status !== "queued") {
    const where = item.delivery === "queued" ? `its run is ${run?.status ?? "gone"}` : `it was ${item.delivery ?? "shown without a run"}`;
    return reject(RejectionCode.deliveryNotPending, `notification ${item.id} is not waiting for delivery: ${where}`);
  }
  changes.updateRun(run, { status: "cancelled", queueRank: null, held: false, endReason: "notification_accepted", endedAt: ctx.now });
  changes.updateItem(item, { delivery: "accepted" });
  const task = item.taskId === null || item.taskId === undefined ? undefined : changes.task(item.taskId);
  const isCompletion = item.requestId === null || item.requestId === undefined;
  if (task !== undefined && isCompletion && task.completionDelivery === "delivered") {
    const transfer = task.resultContextTransferId === null ? undefined : state.transfers.get(task.resultContextTransferId);
    if (transfer !== undefined && transfer.status !== "consumed") {
      changes.events.push(contextTransferEvent("context-transfer.updated", { ...transfer, status: "consumed", updatedAt: ctx.now, consumedAt: ctx.now }));
    }
    changes.updateTask(task, { completionDelivery: "acknowledged" });
    settleTask(changes, task.parentThreadId);
  }
  return changes.done();
}
