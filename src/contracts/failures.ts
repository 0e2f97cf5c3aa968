import { z } from "zod";

/**
 * The wire failure table (spec 000, Policy And Idempotency: the
 * OrchestratorMcpFailure codes; DESIGN invariant 11). Every expected failure
 * of every transport (MCP, HTTP, WebSocket) crosses the wire as one of these
 * codes; nothing else does, and never a stack trace.
 */
export const FailureCode = {
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
  // A tree-wide budget (tokens, turns, wall-clock, spawns, cost) of an enclosing task ran out (docs/budgets.md).
  budget_exceeded: "budget_exceeded",
  // A wire method whose application function has not landed on this server yet (docs/wire.md).
  unsupported: "unsupported",
  // Loom's workspace failures (docs/workspaces.md).
  workspace_unavailable: "workspace_unavailable",
  workspace_conflict: "workspace_conflict",
  workspace_busy: "workspace_busy",
  // Loom's workflow scripts (docs/workflows.md).
  workflow_not_found: "workflow_not_found",
  workflow_running: "workflow_running",
} as const;
export type FailureCode = (typeof FailureCode)[keyof typeof FailureCode];

export interface FailureInfo {
  /** True when repeating the same call later may succeed without changing it. */
  readonly retryable: boolean;
  readonly meaning: string;
}

/**
 * Retryable means "the same call can succeed later": a provider may come
 * back, and an unexpected error is safe to repeat because calls are
 * idempotent by clientRequestId. Everything else needs a different call.
 */
export const FAILURES: { readonly [C in FailureCode]: FailureInfo } = {
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
  budget_exceeded: { retryable: false, meaning: "a tree-wide budget of an enclosing task or workflow ran out; nothing new may start under it" },
  unsupported: { retryable: false, meaning: "this server does not implement the method yet (docs/wire.md lists which)" },
  workspace_unavailable: { retryable: false, meaning: "the workspace is not a git repository, has no usable checkpoint, or its worktree is gone" },
  workspace_conflict: { retryable: false, meaning: "files are in the way (merge conflicts, local changes); details.files lists them; nothing was changed" },
  workspace_busy: { retryable: true, meaning: "a run or a rollback is in progress in the workspace; retry once it ends" },
  workflow_not_found: { retryable: false, meaning: "no workflow has this id, or it belongs to another thread" },
  workflow_running: { retryable: true, meaning: "the workflow to resume from is still running; stop it or retry once it ended" },
};

export const FAILURE_CODES: readonly FailureCode[] = Object.values(FailureCode);

/** A failure as it crosses the wire (MCP `structuredContent.error`, HTTP and WebSocket error bodies). */
export const FailureSchema = z.object({
  code: z.enum(FAILURE_CODES as [FailureCode, ...FailureCode[]]),
  message: z.string(),
  retryable: z.boolean(),
  /** Structured, model-visible facts a handler chose to expose (never internals). */
  details: z.record(z.string(), z.unknown()).optional(),
});
export type Failure = z.infer<typeof FailureSchema>;

/** The envelope a failed call answers with. */
export const FailureEnvelopeSchema = z.object({ error: FailureSchema });
