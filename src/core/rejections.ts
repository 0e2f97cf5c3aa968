/**
 * The closed set of codes a decision may reject a command with. A rejection is
 * stored as the command's receipt, so a code is a stable wire value: rename one
 * only with a migration. docs/threads.md and docs/runs.md list which command
 * raises which.
 */
export const RejectionCode = {
  // Existence
  threadNotFound: "thread_not_found",
  threadDeleted: "thread_deleted",
  threadAlreadyExists: "thread_already_exists",
  // Lifecycle
  threadAlreadyArchived: "thread_already_archived",
  threadNotArchived: "thread_not_archived",
  threadArchived: "thread_archived",
  // Attention
  threadAlreadySettled: "thread_already_settled",
  threadNotSettled: "thread_not_settled",
  autoSettleDisabled: "auto_settle_disabled",
  autoSettleUnchanged: "auto_settle_unchanged",
  threadWorkPending: "thread_work_pending",
  threadAlreadySnoozed: "thread_already_snoozed",
  threadNotSnoozed: "thread_not_snoozed",
  invalidSnoozeTime: "invalid_snooze_time",
  threadAlreadyUnread: "thread_already_unread",
  // Ordering
  threadAlreadyPinned: "thread_already_pinned",
  threadNotPinned: "thread_not_pinned",
  invalidReorder: "invalid_reorder",
  // Settings
  invalidTitle: "invalid_title",
  titleUnchanged: "title_unchanged",
  invalidMode: "invalid_mode",
  runtimeModeUnchanged: "runtime_mode_unchanged",
  interactionModeUnchanged: "interaction_mode_unchanged",
  modelSelectionUnchanged: "model_selection_unchanged",
  pullRequestAlreadyLinked: "pull_request_already_linked",
  pullRequestNotLinked: "pull_request_not_linked",
  /** A pull request sync for a due time the watch no longer has: synced already, or the watch changed. */
  pullRequestSyncStale: "pull_request_sync_stale",
  /** A limit recovery resume for a run and reset the thread no longer waits on: resumed already, or the thread moved on. */
  limitRecoveryStale: "limit_recovery_stale",
  // Runs and sends
  providerNotSet: "provider_not_set",
  providerUnavailable: "provider_unavailable",
  threadNotSendable: "thread_not_sendable",
  threadNotInterruptible: "thread_not_interruptible",
  noActiveRun: "no_active_run",
  runNotFound: "run_not_found",
  runNotActive: "run_not_active",
  runNotQueued: "run_not_queued",
  threadBusy: "thread_busy",
  queueNotHeld: "queue_not_held",
  interruptAlreadyRequested: "interrupt_already_requested",
  // Runtime requests and sessions
  messageUnchanged: "message_unchanged",
  requestNotFound: "request_not_found",
  requestNotPending: "request_not_pending",
  requestNotAnswered: "request_not_answered",
  runNotSettling: "run_not_settling",
  backgroundWorkPending: "background_work_pending",
  invalidResponse: "invalid_response",
  sessionNotFound: "session_not_found",
  // Delegation
  parentNotActive: "parent_not_active",
  taskAlreadyExists: "task_already_exists",
  taskNotFound: "task_not_found",
  taskNotCancellable: "task_not_cancellable",
  delegationDepthExceeded: "delegation_depth_exceeded",
  activeChildrenExceeded: "active_children_exceeded",
  spawnBudgetExceeded: "spawn_budget_exceeded",
  deliveryNotPending: "delivery_not_pending",
  /** A wait holds the task: its result or blocking question goes through that wait, not a notice. */
  deliveryHeld: "delivery_held",
  wakePolicyUnchanged: "wake_policy_unchanged",
  taskStillWorking: "task_still_working",
  budgetExceeded: "budget_exceeded",
  budgetWideningDenied: "budget_widening_denied",
  budgetAlreadyExceeded: "budget_already_exceeded",
  budgetNotExceeded: "budget_not_exceeded",
  budgetNotRoot: "budget_not_root",
  /** The holder has no budget to raise. */
  budgetNotFound: "budget_not_found",
  /** A raise that lowers a limit, adds one the budget did not have, or changes nothing. */
  budgetNotRaised: "budget_not_raised",
  /** The caller may not raise this budget: it is not an ancestor of it (only the owner raises a root's). */
  budgetRaiseDenied: "budget_raise_denied",
  // Privilege ceiling (src/core/policy/ceiling.ts)
  runtimeModeEscalationDenied: "runtime_mode_escalation_denied",
  interactionModeEscalationDenied: "interaction_mode_escalation_denied",
  // Idempotency
  /** A clientRequestId already used for a different request (docs/mcp.md, Idempotency). */
  clientRequestReused: "client_request_reused",
  // Lineage and provider switching
  providerUnchanged: "provider_unchanged",
  invalidForkPoint: "invalid_fork_point",
  noMergeSource: "no_merge_source",
  nothingToMerge: "nothing_to_merge",
  transferAlreadyExists: "transfer_already_exists",
  // Recorded waits
  waitNotFound: "wait_not_found",
  waitAlreadyRecorded: "wait_already_recorded",
  // Notices, thread records and titles
  notificationNotFound: "notification_not_found",
  threadCreatedAlreadyRecorded: "thread_created_already_recorded",
  titleRegenerationRunning: "title_regeneration_running",
  titleRegenerationNotRunning: "title_regeneration_not_running",
  // Secret requests
  secretRequestNotFound: "secret_request_not_found",
  secretRequestNotPending: "secret_request_not_pending",
  // Workspaces, prepared runs and checkpoints (docs/workspaces.md)
  invalidWorkspace: "invalid_workspace",
  checkpointNotFound: "checkpoint_not_found",
  checkpointNotReady: "checkpoint_not_ready",
  checkpointAlreadyRecorded: "checkpoint_already_recorded",
  rollbackInProgress: "rollback_in_progress",
  preparationNotActive: "preparation_not_active",
  runNotRetryable: "run_not_retryable",
  // Scheduled tasks (docs/schedules.md)
  scheduledTaskNotFound: "scheduled_task_not_found",
  scheduledTaskAlreadyExists: "scheduled_task_already_exists",
  scheduledTaskInvalid: "scheduled_task_invalid",
  /** A timed fire whose instant is no longer the task's next due time: it was fired already, or the task changed. */
  scheduledFireStale: "scheduled_fire_stale",
  scheduledTaskPaused: "scheduled_task_paused",
  // Workflow scripts (docs/workflows.md)
  workflowNotFound: "workflow_not_found",
  workflowRunning: "workflow_running",
  workflowAlreadyExists: "workflow_already_exists",
  workflowNotRunning: "workflow_not_running",
  workflowStepExists: "workflow_step_exists",
  workflowStepNotFound: "workflow_step_not_found",
  workflowStepFinished: "workflow_step_finished",
  // Live guest share (docs/guest-share.md)
  /** No share of the thread is open under this id: never opened, closed, expired or replaced. */
  guestShareNotOpen: "guest_share_not_open",
  guestShareAlreadyOpen: "guest_share_already_open",
  /** The share is bound to another browser. */
  guestShareTaken: "guest_share_taken",
  invalidGuestName: "invalid_guest_name",
  invalidGuestMessage: "invalid_guest_message",
  /** More than 4 attachments, one over 10 MiB, or a type not accepted. */
  invalidGuestAttachment: "invalid_guest_attachment",
  guestMessageLimit: "guest_message_limit",
  guestMessageNotFound: "guest_message_not_found",
  guestMessageNotPending: "guest_message_not_pending",
  // The merge queue (docs/workspaces.md, "The merge queue")
  mergeEntryNotFound: "merge_entry_not_found",
  /** The entry is not in a status the command acts on (cancelling one that is merging or ended, ending one that is not merging). */
  mergeEntryNotOpen: "merge_entry_not_open",
  /** The child's branch is already queued or merging into this parent. */
  mergeAlreadyQueued: "merge_already_queued",
  /** Only a worktree child of the parent, both live, can be queued. */
  mergeNotQueueable: "merge_not_queueable",
  // Engine
  /** The decider threw: a bug, contained to the one command (src/engine/dispatcher.ts). */
  orchestrationError: "orchestration_error",
} as const;
export type RejectionCode = (typeof RejectionCode)[keyof typeof RejectionCode];

export const REJECTION_CODES: readonly RejectionCode[] = Object.values(RejectionCode);

const REJECTION_CODE_SET: ReadonlySet<string> = new Set(REJECTION_CODES);

/** True for a code this build's decider can reject with (stored receipts may hold older ones). */
export function isRejectionCode(code: string): code is RejectionCode {
  return REJECTION_CODE_SET.has(code);
}
