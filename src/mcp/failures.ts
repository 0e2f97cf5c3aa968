import { z } from "zod";
import { formatZodIssues } from "../contracts/zodIssues.js";

export { formatZodIssues } from "../contracts/zodIssues.js";

/**
 * The wire failure table (spec 000, Policy And Idempotency; DESIGN invariant
 * 11). Every MCP tool failure crosses the wire as one of these codes; nothing
 * else does, and never a stack trace.
 */
export const OrchestratorMcpFailureCode = {
  capability_denied: "capability_denied",
  parent_not_active: "parent_not_active",
  provider_unavailable: "provider_unavailable",
  model_unavailable: "model_unavailable",
  runtime_mode_escalation_denied: "runtime_mode_escalation_denied",
  interaction_mode_escalation_denied: "interaction_mode_escalation_denied",
  task_not_found: "task_not_found",
  task_not_cancellable: "task_not_cancellable",
  thread_not_found: "thread_not_found",
  run_not_found: "run_not_found",
  thread_not_sendable: "thread_not_sendable",
  thread_not_interruptible: "thread_not_interruptible",
  invalid_request: "invalid_request",
  orchestration_error: "orchestration_error",
  // Loom's own delegation guards, beyond spec 000 (docs/delegation.md).
  delegation_depth_exceeded: "delegation_depth_exceeded",
  active_children_exceeded: "active_children_exceeded",
  spawn_budget_exceeded: "spawn_budget_exceeded",
} as const;
export type OrchestratorMcpFailureCode = (typeof OrchestratorMcpFailureCode)[keyof typeof OrchestratorMcpFailureCode];

export interface OrchestratorMcpFailureInfo {
  /** True when repeating the same call later may succeed without changing it. */
  readonly retryable: boolean;
  readonly meaning: string;
}

/**
 * Retryable means "the same call can succeed later": a provider may come
 * back, and an unexpected error is safe to repeat because calls are
 * idempotent by clientRequestId. Everything else needs a different call.
 */
export const ORCHESTRATOR_MCP_FAILURES: { readonly [C in OrchestratorMcpFailureCode]: OrchestratorMcpFailureInfo } = {
  capability_denied: { retryable: false, meaning: "the credential lacks the capability this tool needs" },
  parent_not_active: { retryable: false, meaning: "the calling thread has no live run to act from" },
  provider_unavailable: { retryable: true, meaning: "the provider instance is disabled, missing, unauthenticated or has no V2 adapter" },
  model_unavailable: { retryable: false, meaning: "the provider does not advertise the requested model" },
  runtime_mode_escalation_denied: { retryable: false, meaning: "the target runtime mode is broader than the caller's" },
  interaction_mode_escalation_denied: { retryable: false, meaning: "the target interaction mode is broader than the caller's" },
  task_not_found: { retryable: false, meaning: "no delegated task has this id" },
  task_not_cancellable: { retryable: false, meaning: "the delegated task has nothing left to cancel" },
  thread_not_found: { retryable: false, meaning: "no thread has this id in the environment" },
  run_not_found: { retryable: false, meaning: "no run has this id on the thread" },
  thread_not_sendable: { retryable: false, meaning: "the thread cannot take a message in its current state" },
  thread_not_interruptible: { retryable: false, meaning: "the thread has no run that can be interrupted" },
  invalid_request: { retryable: false, meaning: "the arguments are malformed or name an unknown tool" },
  orchestration_error: { retryable: true, meaning: "an unexpected server error; the server log has the details" },
  delegation_depth_exceeded: { retryable: false, meaning: "the task would nest deeper than limits.maxDelegationDepth" },
  active_children_exceeded: { retryable: true, meaning: "the parent already has limits.maxActiveChildrenPerThread unfinished tasks; retry after one finishes" },
  spawn_budget_exceeded: { retryable: false, meaning: "the root thread's tree has spawned limits.maxSpawnsPerRootThread tasks" },
};

/** The failure as it crosses the wire (`structuredContent.error`). */
export interface OrchestratorMcpFailure {
  readonly code: OrchestratorMcpFailureCode;
  readonly message: string;
  readonly retryable: boolean;
  /** Structured, model-visible facts a handler chose to expose (never internals). */
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface OrchestratorMcpErrorOptions {
  readonly details?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

/** An expected denial thrown by a tool handler; its message is shown to the agent. */
export class OrchestratorMcpError extends Error {
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    readonly code: OrchestratorMcpFailureCode,
    message: string,
    options: OrchestratorMcpErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "OrchestratorMcpError";
    this.retryable = ORCHESTRATOR_MCP_FAILURES[code].retryable;
    this.details = options.details;
  }
}

export const GENERIC_FAILURE_MESSAGE = "internal orchestration error; the server log has the details";

/**
 * Normalize anything thrown into a wire failure. An OrchestratorMcpError
 * keeps its code and message, a zod error becomes invalid_request listing its
 * issues, and anything else becomes orchestration_error with a generic
 * message: the caller logs the original, it never crosses the wire.
 */
export function toMcpFailure(error: unknown): OrchestratorMcpFailure {
  if (error instanceof OrchestratorMcpError) {
    return {
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      ...(error.details === undefined ? {} : { details: error.details }),
    };
  }
  if (error instanceof z.core.$ZodError) {
    return failure(OrchestratorMcpFailureCode.invalid_request, `invalid request: ${formatZodIssues(error)}`);
  }
  return failure(OrchestratorMcpFailureCode.orchestration_error, GENERIC_FAILURE_MESSAGE);
}

/** True when toMcpFailure would hide this error behind the generic message. */
export function isUnexpectedFailure(error: unknown): boolean {
  return !(error instanceof OrchestratorMcpError) && !(error instanceof z.core.$ZodError);
}

function failure(code: OrchestratorMcpFailureCode, message: string): OrchestratorMcpFailure {
  return { code, message, retryable: ORCHESTRATOR_MCP_FAILURES[code].retryable };
}
