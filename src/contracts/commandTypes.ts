/**
 * The closed set of orchestration command names (spec 004 §3.1): 55 public
 * commands and 8 internal ones. Internal commands are never accepted from
 * outside clients; only the engine itself dispatches them.
 */
export const PublicCommandType = {
  // Thread lifecycle and organization (29)
  threadStop: "thread.stop",
  threadCreate: "thread.create",
  threadArchive: "thread.archive",
  threadGuestShareClose: "thread.guest-share.close",
  threadGuestMessageDismiss: "thread.guest-message.dismiss",
  threadUnarchive: "thread.unarchive",
  threadDelete: "thread.delete",
  threadSettle: "thread.settle",
  threadAutoSettle: "thread.auto-settle",
  threadUnsettle: "thread.unsettle",
  threadSnooze: "thread.snooze",
  threadUnsnooze: "thread.unsnooze",
  threadAutoSettleSet: "thread.auto-settle.set",
  threadPin: "thread.pin",
  threadUnpin: "thread.unpin",
  threadPinReorder: "thread.pin.reorder",
  threadActiveReorder: "thread.active.reorder",
  threadVisit: "thread.visit",
  threadMarkUnread: "thread.mark-unread",
  threadMetadataUpdate: "thread.metadata.update",
  threadPullRequestLink: "thread.pull-request.link",
  threadPullRequestUnlink: "thread.pull-request.unlink",
  threadPullRequestLinkSync: "thread.pull-request-link.sync",
  threadPullRequestWatch: "thread.pull-request.watch",
  threadPullRequestSync: "thread.pull-request.sync",
  threadTitleRegenerationComplete: "thread.title.regeneration.complete",
  threadRuntimeModeSet: "thread.runtime-mode.set",
  threadInteractionModeSet: "thread.interaction-mode.set",
  threadModelSelectionSet: "thread.model-selection.set",
  // Session, message dispatch, prepared runs and queue (15)
  providerSessionDetach: "provider-session.detach",
  messageDispatch: "message.dispatch",
  preparedRunRelease: "prepared-run.release",
  notificationDeliveryAccept: "notification.delivery.accept",
  preparedRunProgress: "prepared-run.progress",
  preparedRunFail: "prepared-run.fail",
  preparedRunRetry: "prepared-run.retry",
  subagentStop: "subagent.stop",
  runInterrupt: "run.interrupt",
  queuedMessagePromoteToSteer: "queued-message.promote-to-steer",
  queueResume: "queue.resume",
  queuedRunStart: "queued-run.start",
  queuedRunReorder: "queued-run.reorder",
  queuedRunCancel: "queued-run.cancel",
  queuedRunEdit: "queued-run.edit",
  // Runtime requests and checkpoints (3)
  runtimeRequestRespond: "runtime-request.respond",
  threadUserInputDismiss: "thread.user-input.dismiss",
  checkpointRollback: "checkpoint.rollback",
  // Lineage, delegation and provider switching (8)
  threadFork: "thread.fork",
  threadMergeBack: "thread.merge_back",
  delegatedTaskRequest: "delegated_task.request",
  delegatedTaskWakePolicy: "delegated_task.wake-policy",
  delegatedTaskCompletionDeliveryAcknowledge: "delegated_task.completion-delivery.acknowledge",
  delegatedTaskCompletionDeliveryDispose: "delegated_task.completion-delivery.dispose",
  threadCreatedRecord: "thread.created.record",
  providerSwitch: "provider.switch",
} as const;
export type PublicCommandType = (typeof PublicCommandType)[keyof typeof PublicCommandType];

export const InternalCommandType = {
  threadGuestShareOpen: "thread.guest-share.open",
  threadGuestShareRedeem: "thread.guest-share.redeem",
  threadGuestMessageSubmit: "thread.guest-message.submit",
  threadPullRequestWatchSync: "thread.pull-request-watch.sync",
  checkpointRollbackFail: "checkpoint.rollback.fail",
  runtimeRequestDeliveryFail: "runtime-request.delivery.fail",
  threadBackgroundWorkSettle: "thread.background-work.settle",
  secretRequestRecord: "secret_request.record",
} as const;
export type InternalCommandType = (typeof InternalCommandType)[keyof typeof InternalCommandType];

export const CommandType = { ...PublicCommandType, ...InternalCommandType } as const;
export type CommandType = PublicCommandType | InternalCommandType;

export const PUBLIC_COMMAND_TYPES: readonly PublicCommandType[] = Object.values(PublicCommandType);
export const INTERNAL_COMMAND_TYPES: readonly InternalCommandType[] = Object.values(InternalCommandType);
export const COMMAND_TYPES: readonly CommandType[] = [...PUBLIC_COMMAND_TYPES, ...INTERNAL_COMMAND_TYPES];

const commandTypeSet: ReadonlySet<string> = new Set(COMMAND_TYPES);
export function isCommandType(value: string): value is CommandType {
  return commandTypeSet.has(value);
}

const publicCommandTypeSet: ReadonlySet<string> = new Set(PUBLIC_COMMAND_TYPES);
export function isPublicCommandType(value: string): value is PublicCommandType {
  return publicCommandTypeSet.has(value);
}
