import type { Command } from "../contracts/commands.js";
import { clientRequestEvent } from "../contracts/events.js";
import { type DecideContext, type Decision, accept, reject } from "./decision.js";
import { decideBudgetExceed, decideThreadBudgetExceed, decideThreadBudgetSet } from "./budgets/exceed.js";
import { decideDeliveryAcknowledge, decideDeliveryDispose, decideFinalizeTask, decideSubagentStop, decideWakePolicy } from "./delegation/controls.js";
import { decideDeliverTaskNotice } from "./delegation/notices.js";
import { decideDelegatedTaskRequest } from "./delegation/request.js";
import { decideGuestMessageDispatch } from "./guestShare/guestDispatch.js";
import {
  decideGuestMessageDismiss,
  decideGuestMessageSubmit,
  decideGuestShareClose,
  decideGuestShareOpen,
  decideGuestShareRedeem,
} from "./guestShare/guestShare.js";
import { decideThreadFork } from "./lineage/fork.js";
import { decideThreadMergeBack } from "./lineage/mergeBack.js";
import { decideProviderSwitch } from "./lineage/switch.js";
import { decideProviderSessionDetach, decideQueueResume, decideRunInterrupt, decideThreadStop } from "./run/control.js";
import {
  decideAttemptStarted,
  decideItemCompleted,
  decideRunLost,
  decideSessionOpened,
  decideSessionReleased,
  decideTurnCompleted,
  decideTurnStarted,
  decideUsageReported,
} from "./run/ingest.js";
import {
  decideQueuedMessagePromoteToSteer,
  decideQueuedRunCancel,
  decideQueuedRunEdit,
  decideQueuedRunReorder,
  decideQueuedRunStart,
} from "./run/queue.js";
import { decideLimitWindowRecord } from "./run/limitWindow.js";
import { decideLimitFailOver } from "./run/limitFailover.js";
import { decideLimitRecoveryResume } from "./run/limitRecovery.js";
import { decideRuntimeRequestRespond, decideUserInputDismiss } from "./run/requests.js";
import { decideRequestDeliveryFail } from "./run/requestDelivery.js";
import { decideMessageDispatch } from "./run/send.js";
import { decideWaitEnded, decideWaitStarted } from "./run/waits.js";
import { decideWaitHold, decideWaitRelease, decideWaitsLost } from "./delegation/waitHolds.js";
import { decideBudgetRaise } from "./budgets/raise.js";
import { decideNotificationDeliveryAccept } from "./run/notificationAccept.js";
import { decideSecretRequestRecord } from "./secrets/secretRequests.js";
import { decideScheduledTaskFire } from "./schedules/fire.js";
import { decideScheduledTaskDelete, decideScheduledTaskSave } from "./schedules/save.js";
import { decideThreadPullRequestLinkSync, decideThreadPullRequestSync, decideThreadPullRequestWatch, decideThreadPullRequestWatchSync } from "./thread/pullRequestWatch.js";
import { decideThreadCreatedRecord, decideTitleRegenerationComplete } from "./thread/records.js";
import { decideCheckpointCaptured } from "./workspace/checkpoints.js";
import { decidePreparedRunFail, decidePreparedRunProgress, decidePreparedRunRelease, decidePreparedRunRetry, decideRollbackFail } from "./workspace/prepared.js";
import { decideCheckpointRollback } from "./workspace/rollback.js";
import {
  decideWorkflowFinish,
  decideWorkflowProgress,
  decideWorkflowStart,
  decideWorkflowStepFinish,
  decideWorkflowStepReissue,
  decideWorkflowStepStart,
  decideWorkflowStop,
} from "./workflows/workflows.js";
import { decideMergeQueueCancel, decideMergeQueueEnqueue, decideMergeQueueFinish, decideMergeQueueReady, decideMergeQueueStart } from "./workspace/mergeQueue.js";
import { decideMergeQueueResolve, decideMergeQueueResolved } from "./workspace/mergeResolution.js";
import { decideToolTaskCancel, decideToolTaskCreate } from "./toolTasks/toolTasks.js";
import { ceilingRejection } from "./policy/ceiling.js";
import { decideBackgroundTaskReported, decideBackgroundWorkSettle } from "./run/backgroundWork.js";
import { evolve, initialState, type OrchestrationState } from "./state.js";
import {
  decideThreadAutoSettle,
  decideThreadAutoSettleSet,
  decideThreadMarkUnread,
  decideThreadSettle,
  decideThreadSnooze,
  decideThreadUnsettle,
  decideThreadUnsnooze,
  decideThreadVisit,
} from "./thread/attention.js";
import { decideThreadArchive, decideThreadCreate, decideThreadDelete, decideThreadUnarchive } from "./thread/lifecycle.js";
import { decideThreadActiveReorder, decideThreadPin, decideThreadPinReorder, decideThreadUnpin } from "./thread/ordering.js";
import {
  decideThreadInteractionModeSet,
  decideThreadMetadataUpdate,
  decideThreadModelSelectionSet,
  decideThreadPullRequestLink,
  decideThreadPullRequestUnlink,
  decideThreadRuntimeModeSet,
} from "./thread/settings.js";

/**
 * Decide one command against the current state. Pure: no I/O, no clock, no
 * randomness but ctx's. A command carrying a clientRequest claim is refused
 * when its key was first used for a different request; the first accepted
 * claim of a key is recorded with the command's own events. Every command
 * is held to its caller's privilege ceiling before its family decides it.
 */
export function decide(state: OrchestrationState, command: Command, given: DecideContext): Decision {
  const ctx = "traceParent" in command && command.traceParent !== undefined ? { ...given, traceParent: command.traceParent } : given;
  const claim = "clientRequest" in command ? command.clientRequest : undefined;
  if (claim === undefined) return decideBounded(state, command, ctx);
  const known = state.clientRequests.get(claim.key);
  if (known !== undefined && known.fingerprint !== claim.fingerprint) {
    return reject("client_request_reused", `clientRequestId key ${claim.key} was already used for a different ${known.tool} request`);
  }
  const decision = decideBounded(state, command, ctx);
  if (decision.kind === "rejected" || known !== undefined) return decision;
  const record = clientRequestEvent({ key: claim.key, tool: claim.tool, fingerprint: claim.fingerprint, commandId: command.commandId, recordedAt: ctx.now });
  return accept([record, ...decision.events], decision.effects);
}

/** The privilege ceiling (policy/ceiling.ts), then the command's own decision. */
function decideBounded(state: OrchestrationState, command: Command, ctx: DecideContext): Decision {
  return ceilingRejection(state, command) ?? decideCommand(state, command, ctx);
}

/** Each command family lives in its own file under thread/, run/ or delegation/. */
function decideCommand(state: OrchestrationState, command: Command, ctx: DecideContext): Decision {
  switch (command.type) {
    // Lifecycle (thread/lifecycle.ts)
    case "thread.create":
      return decideThreadCreate(state, command, ctx);
    case "thread.archive":
      return decideThreadArchive(state, command, ctx);
    case "thread.unarchive":
      return decideThreadUnarchive(state, command, ctx);
    case "thread.delete":
      return decideThreadDelete(state, command, ctx);
    // Attention (thread/attention.ts)
    case "thread.settle":
      return decideThreadSettle(state, command, ctx);
    case "thread.unsettle":
      return decideThreadUnsettle(state, command, ctx);
    case "thread.auto-settle":
      return decideThreadAutoSettle(state, command, ctx);
    case "thread.auto-settle.set":
      return decideThreadAutoSettleSet(state, command, ctx);
    case "thread.snooze":
      return decideThreadSnooze(state, command, ctx);
    case "thread.unsnooze":
      return decideThreadUnsnooze(state, command, ctx);
    case "thread.visit":
      return decideThreadVisit(state, command, ctx);
    case "thread.mark-unread":
      return decideThreadMarkUnread(state, command, ctx);
    // Ordering (thread/ordering.ts)
    case "thread.pin":
      return decideThreadPin(state, command, ctx);
    case "thread.unpin":
      return decideThreadUnpin(state, command, ctx);
    case "thread.pin.reorder":
      return decideThreadPinReorder(state, command, ctx);
    case "thread.active.reorder":
      return decideThreadActiveReorder(state, command, ctx);
    // Settings (thread/settings.ts)
    case "thread.metadata.update":
      return decideThreadMetadataUpdate(state, command, ctx);
    case "thread.pull-request.link":
      return decideThreadPullRequestLink(state, command, ctx);
    case "thread.pull-request.watch":
      return decideThreadPullRequestWatch(state, command, ctx);
    case "thread.pull-request.sync":
      return decideThreadPullRequestSync(state, command, ctx);
    case "thread.pull-request-link.sync":
      return decideThreadPullRequestLinkSync(state, command, ctx);
    case "thread.pull-request-watch.sync":
      return decideThreadPullRequestWatchSync(state, command, ctx);
    case "thread.pull-request.unlink":
      return decideThreadPullRequestUnlink(state, command, ctx);
    case "thread.runtime-mode.set":
      return decideThreadRuntimeModeSet(state, command, ctx);
    case "thread.interaction-mode.set":
      return decideThreadInteractionModeSet(state, command, ctx);
    case "thread.model-selection.set":
      return decideThreadModelSelectionSet(state, command, ctx);
    // Sends (run/send.ts) and run control (run/control.ts)
    case "message.dispatch":
      return command.data.guestMessageId === undefined ? decideMessageDispatch(state, command, ctx) : decideGuestMessageDispatch(state, command, command.data.guestMessageId, ctx);
    case "run.interrupt":
      return decideRunInterrupt(state, command, ctx);
    case "thread.stop":
      return decideThreadStop(state, command, ctx);
    case "queue.resume":
      return decideQueueResume(state, command, ctx);
    case "provider-session.detach":
      return decideProviderSessionDetach(state, command, ctx);
    // Queue (run/queue.ts)
    case "queued-run.start":
      return decideQueuedRunStart(state, command, ctx);
    case "queued-run.reorder":
      return decideQueuedRunReorder(state, command, ctx);
    case "queued-run.cancel":
      return decideQueuedRunCancel(state, command, ctx);
    case "queued-run.edit":
      return decideQueuedRunEdit(state, command, ctx);
    case "queued-message.promote-to-steer":
      return decideQueuedMessagePromoteToSteer(state, command, ctx);
    // Runtime requests (run/requests.ts)
    case "runtime-request.respond":
      return decideRuntimeRequestRespond(state, command, ctx);
    case "thread.user-input.dismiss":
      return decideUserInputDismiss(state, command, ctx);
    // Runtime ingestion from providers and the engine (run/ingest.ts)
    case "provider-runtime.session-opened":
      return decideSessionOpened(state, command, ctx);
    case "provider-runtime.session-released":
      return decideSessionReleased(state, command, ctx);
    case "provider-runtime.attempt-started":
      return decideAttemptStarted(state, command, ctx);
    case "provider-runtime.turn-started":
      return decideTurnStarted(state, command, ctx);
    case "provider-runtime.usage-reported":
      return decideUsageReported(state, command, ctx);
    case "provider-runtime.item-completed":
      return decideItemCompleted(state, command, ctx);
    case "provider-runtime.background-task":
      return decideBackgroundTaskReported(state, command, ctx);
    case "provider-runtime.turn-completed":
      return decideTurnCompleted(state, command, ctx);
    case "provider-runtime.run-lost":
      return decideRunLost(state, command, ctx);
    case "thread.limit-recovery.resume":
      return decideLimitRecoveryResume(state, command, ctx);
    case "thread.limit-recovery.fail-over":
      return decideLimitFailOver(state, command, ctx);
    case "provider-instance.limit-window.record":
      return decideLimitWindowRecord(state, command, ctx);
    // Delegation (delegation/)
    case "delegated_task.request":
      return decideDelegatedTaskRequest(state, command, ctx);
    case "delegated_task.wake-policy":
      return decideWakePolicy(state, command, ctx);
    case "delegated_task.completion-delivery.acknowledge":
      return decideDeliveryAcknowledge(state, command, ctx);
    case "delegated_task.completion-delivery.dispose":
      return decideDeliveryDispose(state, command, ctx);
    case "subagent.stop":
      return decideSubagentStop(state, command, ctx);
    case "delegated-task.deliver-notice":
      return decideDeliverTaskNotice(state, command, ctx);
    case "delegated-task.finalize":
      return decideFinalizeTask(state, command, ctx);
    case "delegated-task.budget-exceed":
      return decideBudgetExceed(state, command, ctx);
    case "thread.budget.set":
      return decideThreadBudgetSet(state, command, ctx);
    case "thread.budget-exceed":
      return decideThreadBudgetExceed(state, command, ctx);
    case "budget.raise":
      return decideBudgetRaise(state, command, ctx);
    // Lineage and provider switching (lineage/)
    case "provider.switch":
      return decideProviderSwitch(state, command, ctx);
    case "thread.fork":
      return decideThreadFork(state, command, ctx);
    case "thread.merge_back":
      return decideThreadMergeBack(state, command, ctx);
    // Recorded waits (run/waits.ts)
    case "thread-wait.started":
      return decideWaitStarted(state, command, ctx);
    case "thread-wait.ended":
      return decideWaitEnded(state, command, ctx);
    case "delegated-task.wait-hold":
      return decideWaitHold(state, command, ctx);
    case "delegated-task.wait-release":
      return decideWaitRelease(state, command, ctx);
    case "delegated-task.waits-lost":
      return decideWaitsLost(state, command, ctx);
    // Notices, thread records and titles (run/notificationAccept.ts, thread/records.ts)
    case "notification.delivery.accept":
      return decideNotificationDeliveryAccept(state, command, ctx);
    case "thread.created.record":
      return decideThreadCreatedRecord(state, command, ctx);
    case "thread.title.regeneration.complete":
      return decideTitleRegenerationComplete(state, command, ctx);
    // Live guest share (guestShare/)
    case "thread.guest-share.open":
      return decideGuestShareOpen(state, command, ctx);
    case "thread.guest-share.close":
      return decideGuestShareClose(state, command, ctx);
    case "thread.guest-share.redeem":
      return decideGuestShareRedeem(state, command, ctx);
    case "thread.guest-message.submit":
      return decideGuestMessageSubmit(state, command, ctx);
    case "thread.guest-message.dismiss":
      return decideGuestMessageDismiss(state, command, ctx);
    // Secret requests (secrets/secretRequests.ts)
    case "secret_request.record":
      return decideSecretRequestRecord(state, command, ctx);
    // Prepared runs and checkpoints (workspace/)
    case "prepared-run.progress":
      return decidePreparedRunProgress(state, command, ctx);
    case "prepared-run.release":
      return decidePreparedRunRelease(state, command, ctx);
    case "prepared-run.fail":
      return decidePreparedRunFail(state, command, ctx);
    case "prepared-run.retry":
      return decidePreparedRunRetry(state, command, ctx);
    case "checkpoint.rollback":
      return decideCheckpointRollback(state, command, ctx);
    case "checkpoint.rollback.fail":
      return decideRollbackFail(state, command, ctx);
    case "runtime-request.delivery.fail":
      return decideRequestDeliveryFail(state, command, ctx);
    case "thread.background-work.settle":
      return decideBackgroundWorkSettle(state, command, ctx);
    case "workspace-runtime.checkpoint-captured":
      return decideCheckpointCaptured(state, command, ctx);
    // Scheduled tasks (schedules/)
    case "scheduled-task.save":
      return decideScheduledTaskSave(state, command, ctx);
    case "scheduled-task.delete":
      return decideScheduledTaskDelete(state, command, ctx);
    case "scheduled-task.fire":
      return decideScheduledTaskFire(state, command, ctx);
    // Workflow scripts (workflows/)
    case "workflow.start":
      return decideWorkflowStart(state, command, ctx);
    case "workflow.progress":
      return decideWorkflowProgress(state, command, ctx);
    case "workflow.step.start":
      return decideWorkflowStepStart(state, command, ctx);
    case "workflow.step.finish":
      return decideWorkflowStepFinish(state, command, ctx);
    case "workflow.step.reissue":
      return decideWorkflowStepReissue(state, command, ctx);
    case "workflow.finish":
      return decideWorkflowFinish(state, command, ctx);
    case "workflow.stop":
      return decideWorkflowStop(state, command, ctx);
    // The merge queue (workspace/mergeQueue.ts)
    case "merge-queue.enqueue":
      return decideMergeQueueEnqueue(state, command, ctx);
    case "merge-queue.cancel":
      return decideMergeQueueCancel(state, command, ctx);
    case "merge-queue.start":
      return decideMergeQueueStart(state, command, ctx);
    case "merge-queue.finish":
      return decideMergeQueueFinish(state, command, ctx);
    case "merge-queue.resolve":
      return decideMergeQueueResolve(state, command, ctx);
    case "merge-queue.resolved":
      return decideMergeQueueResolved(state, command, ctx);
    case "merge-queue.ready":
      return decideMergeQueueReady(state, command, ctx);
    // Tool calls served as MCP tasks (toolTasks/toolTasks.ts)
    case "tool-task.create":
      return decideToolTaskCreate(state, command, ctx);
    case "tool-task.cancel":
      return decideToolTaskCancel(state, command, ctx);
    default: {
      const exhaustive: never = command;
      return exhaustive;
    }
  }
}

/** The decider as a plain value (STYLE.md rule 2). */
export const orchestrationDecider = { decide, evolve, initialState } as const;
