/**
 * The closed set of domain event names: the 45 of spec 004 §3.2 plus Loom's
 * own extensions (idempotency records, scheduled tasks), listed last.
 */
export const EventType = {
  // Thread state (23)
  threadCreated: "thread.created",
  threadArchived: "thread.archived",
  threadUnarchived: "thread.unarchived",
  threadDeleted: "thread.deleted",
  threadSettled: "thread.settled",
  threadUnsettled: "thread.unsettled",
  threadSnoozed: "thread.snoozed",
  threadUnsnoozed: "thread.unsnoozed",
  threadPinned: "thread.pinned",
  threadAutoSettleSet: "thread.auto-settle-set",
  threadUnpinned: "thread.unpinned",
  threadPinReordered: "thread.pin-reordered",
  threadActiveReordered: "thread.active-reordered",
  threadVisited: "thread.visited",
  threadMarkedUnread: "thread.marked-unread",
  threadMetadataUpdated: "thread.metadata-updated",
  threadPullRequestSynced: "thread.pull-request-synced",
  threadPullRequestLinkUpdated: "thread.pull-request-link-updated",
  threadRuntimeModeUpdated: "thread.runtime-mode-updated",
  threadInteractionModeUpdated: "thread.interaction-mode-updated",
  threadModelSelectionUpdated: "thread.model-selection-updated",
  threadProviderSwitched: "thread.provider-switched",
  threadGuestShareUpdated: "thread.guest-share-updated",
  // Run, attempt, node and subagent (7)
  runCreated: "run.created",
  runUpdated: "run.updated",
  runBackgroundWorkCancelled: "run.background-work-cancelled",
  runAttemptCreated: "run-attempt.created",
  runAttemptUpdated: "run-attempt.updated",
  nodeUpdated: "node.updated",
  subagentUpdated: "subagent.updated",
  // Provider and transcript (9)
  providerSessionAttached: "provider-session.attached",
  providerSessionUpdated: "provider-session.updated",
  providerSessionDetached: "provider-session.detached",
  providerThreadUpdated: "provider-thread.updated",
  providerTurnUpdated: "provider-turn.updated",
  runtimeRequestUpdated: "runtime-request.updated",
  messageUpdated: "message.updated",
  turnItemUpdated: "turn-item.updated",
  planUpdated: "plan.updated",
  // Checkpoint and context transfer (6)
  checkpointScopeCreated: "checkpoint-scope.created",
  checkpointCaptured: "checkpoint.captured",
  checkpointRollbackRequested: "checkpoint.rollback-requested",
  contextHandoffUpdated: "context-handoff.updated",
  contextTransferCreated: "context-transfer.created",
  contextTransferUpdated: "context-transfer.updated",
  // Loom extensions (1)
  /** The first use of a clientRequestId and its request fingerprint (docs/mcp.md, Idempotency). */
  clientRequestRecorded: "client-request.recorded",
  /** A scheduled task after a change or a fire (docs/schedules.md). */
  scheduledTaskUpdated: "scheduled-task.updated",
  /** A scheduled task deleted for good. */
  scheduledTaskDeleted: "scheduled-task.deleted",
  /** A workflow script's record after a change: its journal of steps, phase, status, result (docs/workflows.md). */
  workflowUpdated: "workflow.updated",
  /** One step of a workflow's journal after a change: the step alone, folded into the workflow at its index. */
  workflowStepUpdated: "workflow.step.updated",
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export const EVENT_TYPES: readonly EventType[] = Object.values(EventType);

const eventTypeSet: ReadonlySet<string> = new Set(EVENT_TYPES);
export function isEventType(value: string): value is EventType {
  return eventTypeSet.has(value);
}
