import { z } from "zod";
import type { Rejection } from "../contracts/envelopes.js";
import { FAILURES, type Failure, FailureCode } from "../contracts/failures.js";
import { formatZodIssues } from "../contracts/zodIssues.js";
import { type RejectionCode, isRejectionCode } from "../core/rejections.js";
import { isStoreClosed } from "../store/storeErrors.js";

/**
 * Expected failures of the application layer. Every app function throws
 * AppError for a denial; transports turn anything thrown into a wire Failure
 * with `toFailure` and never show a stack trace.
 */
export interface AppErrorOptions {
  readonly details?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
  /** The decider's rejection code when the error is a refused command. */
  readonly rejectionCode?: string;
}

/** An expected denial; its message is shown to the caller (an agent, a person). */
export class AppError extends Error {
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  readonly rejectionCode: string | undefined;

  constructor(
    readonly code: FailureCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.retryable = FAILURES[code].retryable;
    this.details = options.details;
    this.rejectionCode = options.rejectionCode;
  }
}

export function fail(code: FailureCode, message: string, details?: Readonly<Record<string, unknown>>): never {
  throw new AppError(code, message, details === undefined ? {} : { details });
}

/**
 * Every decider rejection and the wire failure it becomes: one table, total
 * over RejectionCode, shared by MCP, HTTP and WebSocket.
 */
export const FAILURE_OF_REJECTION: { readonly [R in RejectionCode]: FailureCode } = {
  thread_not_found: "thread_not_found",
  thread_deleted: "thread_not_found",
  thread_already_exists: "invalid_request",
  thread_already_archived: "invalid_request",
  thread_not_archived: "invalid_request",
  thread_archived: "thread_not_sendable",
  thread_already_settled: "invalid_request",
  thread_not_settled: "invalid_request",
  auto_settle_disabled: "invalid_request",
  auto_settle_unchanged: "invalid_request",
  thread_work_pending: "invalid_request",
  thread_already_snoozed: "invalid_request",
  thread_not_snoozed: "invalid_request",
  invalid_snooze_time: "invalid_request",
  thread_already_unread: "invalid_request",
  thread_already_pinned: "invalid_request",
  thread_not_pinned: "invalid_request",
  invalid_reorder: "invalid_request",
  invalid_title: "invalid_request",
  title_unchanged: "invalid_request",
  invalid_mode: "invalid_request",
  runtime_mode_unchanged: "invalid_request",
  interaction_mode_unchanged: "invalid_request",
  model_selection_unchanged: "invalid_request",
  pull_request_already_linked: "invalid_request",
  pull_request_not_linked: "invalid_request",
  pull_request_sync_stale: "invalid_request",
  limit_recovery_stale: "invalid_request",
  scheduled_task_not_found: "invalid_request",
  scheduled_task_already_exists: "invalid_request",
  scheduled_task_invalid: "invalid_request",
  scheduled_fire_stale: "invalid_request",
  scheduled_task_paused: "invalid_request",
  workflow_not_found: "workflow_not_found",
  workflow_running: "workflow_running",
  workflow_already_exists: "invalid_request",
  workflow_not_running: "invalid_request",
  workflow_step_exists: "invalid_request",
  workflow_step_not_found: "invalid_request",
  workflow_step_finished: "invalid_request",
  merge_entry_not_found: "invalid_request",
  merge_entry_not_open: "invalid_request",
  merge_already_queued: "invalid_request",
  merge_not_queueable: "workspace_unavailable",
  provider_not_set: "provider_unavailable",
  provider_unavailable: "provider_unavailable",
  thread_not_sendable: "thread_not_sendable",
  thread_not_interruptible: "thread_not_interruptible",
  no_active_run: "thread_not_interruptible",
  run_not_found: "run_not_found",
  run_not_active: "thread_not_interruptible",
  run_not_queued: "invalid_request",
  thread_busy: "thread_not_sendable",
  queue_not_held: "invalid_request",
  interrupt_already_requested: "thread_not_interruptible",
  message_unchanged: "invalid_request",
  request_not_found: "invalid_request",
  request_not_pending: "invalid_request",
  request_not_answered: "invalid_request",
  run_not_settling: "invalid_request",
  background_work_pending: "invalid_request",
  invalid_response: "invalid_request",
  session_not_found: "invalid_request",
  parent_not_active: "parent_not_active",
  task_already_exists: "invalid_request",
  task_not_found: "task_not_found",
  task_not_cancellable: "task_not_cancellable",
  delegation_depth_exceeded: "delegation_depth_exceeded",
  active_children_exceeded: "active_children_exceeded",
  spawn_budget_exceeded: "spawn_budget_exceeded",
  delivery_not_pending: "invalid_request",
  delivery_held: "invalid_request",
  wake_policy_unchanged: "invalid_request",
  task_still_working: "invalid_request",
  budget_exceeded: "budget_exceeded",
  budget_widening_denied: "invalid_request",
  budget_already_exceeded: "invalid_request",
  budget_not_exceeded: "invalid_request",
  budget_not_root: "invalid_request",
  budget_not_found: "invalid_request",
  budget_not_raised: "invalid_request",
  budget_raise_denied: "capability_denied",
  runtime_mode_escalation_denied: "runtime_mode_escalation_denied",
  interaction_mode_escalation_denied: "interaction_mode_escalation_denied",
  client_request_reused: "invalid_request",
  provider_unchanged: "invalid_request",
  invalid_fork_point: "invalid_request",
  no_merge_source: "invalid_request",
  nothing_to_merge: "invalid_request",
  transfer_already_exists: "invalid_request",
  wait_not_found: "invalid_request",
  wait_already_recorded: "invalid_request",
  notification_not_found: "invalid_request",
  thread_created_already_recorded: "invalid_request",
  title_regeneration_running: "invalid_request",
  title_regeneration_not_running: "invalid_request",
  secret_request_not_found: "invalid_request",
  secret_request_not_pending: "invalid_request",
  invalid_workspace: "invalid_request",
  checkpoint_not_found: "invalid_request",
  checkpoint_not_ready: "workspace_unavailable",
  checkpoint_already_recorded: "invalid_request",
  rollback_in_progress: "workspace_busy",
  preparation_not_active: "invalid_request",
  run_not_retryable: "invalid_request",
  guest_share_not_open: "invalid_request",
  guest_share_already_open: "invalid_request",
  guest_share_taken: "capability_denied",
  invalid_guest_name: "invalid_request",
  invalid_guest_message: "invalid_request",
  invalid_guest_attachment: "invalid_request",
  guest_message_limit: "invalid_request",
  guest_message_not_found: "invalid_request",
  guest_message_not_pending: "invalid_request",
  orchestration_error: "orchestration_error",
};

/** The AppError a stored rejection becomes; its message keeps the decider's code for people. */
export function errorOfRejection(rejection: Rejection): AppError {
  const code = isRejectionCode(rejection.code) ? FAILURE_OF_REJECTION[rejection.code] : FailureCode.orchestration_error;
  return new AppError(code, `${rejection.code}: ${rejection.message}`, { rejectionCode: rejection.code });
}

export const GENERIC_FAILURE_MESSAGE = "internal orchestration error; the server log has the details";
export const SHUTTING_DOWN_MESSAGE = "Loom is shutting down: its event store closed before this call finished; retry once the server is back";

/**
 * The store closed under a call in flight: the node is stopping (or its
 * database went away). An expected end of that call, not a fault to log.
 */
export function isShutdownError(error: unknown): boolean {
  return isStoreClosed(error);
}

/**
 * Normalize anything thrown into a wire failure. An AppError keeps its code
 * and message, a zod error becomes invalid_request listing its issues, a
 * call cut off by the server shutting down becomes a retryable
 * orchestration_error that says so, and anything else becomes
 * orchestration_error with a generic message: the transport logs the
 * original, it never crosses the wire.
 */
export function toFailure(error: unknown): Failure {
  if (error instanceof AppError) {
    return { code: error.code, message: error.message, retryable: error.retryable, ...(error.details === undefined ? {} : { details: { ...error.details } }) };
  }
  if (error instanceof z.core.$ZodError) return failure(FailureCode.invalid_request, `invalid request: ${formatZodIssues(error)}`);
  if (isShutdownError(error)) return failure(FailureCode.orchestration_error, SHUTTING_DOWN_MESSAGE);
  return failure(FailureCode.orchestration_error, GENERIC_FAILURE_MESSAGE);
}

/** True when toFailure would hide this error behind the generic message: the transport logs it. */
export function isUnexpectedFailure(error: unknown): boolean {
  return !(error instanceof AppError) && !(error instanceof z.core.$ZodError) && !isShutdownError(error);
}

function failure(code: FailureCode, message: string): Failure {
  return { code, message, retryable: FAILURES[code].retryable };
}
