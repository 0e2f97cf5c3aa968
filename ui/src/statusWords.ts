import type { RunStatus } from "../../src/contracts/entities/runs.js";
import type { WorkflowStatus, WorkflowStepStatus } from "../../src/contracts/entities/workflows.js";
import type { TurnItemOf } from "../../src/contracts/turnItems.js";

/** Every status word a timeline card can carry: item statuses, approval decisions, notice deliveries, interrupt outcomes, a live command's run, a workflow and its steps. */
export type StatusWord =
  | TurnItemOf<"approval_request">["status"]
  | NonNullable<TurnItemOf<"approval_request">["decision"]>
  | TurnItemOf<"user_input_request">["status"]
  | TurnItemOf<"command_execution">["status"]
  | TurnItemOf<"checkpoint">["status"]
  | TurnItemOf<"run_interrupt_result">["outcome"]
  | TurnItemOf<"handoff">["status"]
  | TurnItemOf<"secret_request">["status"]
  | TurnItemOf<"subagent">["status"]
  | NonNullable<TurnItemOf<"notification">["delivery"]>
  | RunStatus
  /** A workflow's and its agent() steps' (ui/src/workflowPanel.tsx). */
  | WorkflowStatus
  | WorkflowStepStatus
  /** A live command whose output ended before its item arrived. */
  | "finishing";

/** The words people read for each status word: a table the compiler checks is total. */
export const STATUS_WORDS: { readonly [W in StatusWord]: string } = {
  // requests, questions, secrets
  pending: "waiting for you",
  resolved: "answered",
  answered: "answered",
  dismissed: "dismissed",
  expired: "expired",
  provided: "provided",
  // approval decisions
  accept: "approved",
  accept_for_session: "approved for the session",
  decline: "declined",
  declined: "declined",
  cancel: "cancelled",
  cancelled: "cancelled",
  // tools, commands, file changes
  in_progress: "running",
  completed: "done",
  failed: "failed",
  // checkpoints
  ready: "ready",
  missing: "missing",
  error: "error",
  stale: "out of date",
  // interrupts, handoffs
  interrupted: "interrupted",
  already_terminal: "already over",
  superseded: "replaced",
  // subagents and runs
  spawning: "starting",
  queued: "queued",
  starting: "starting",
  running: "running",
  waiting: "waiting",
  waiting_on_approval: "needs approval",
  waiting_on_user_input: "needs an answer",
  waiting_on_subagent: "waiting on children",
  settling_background_work: "finishing background work",
  finishing: "finishing",
  // workflows
  stopped: "stopped",
  // notice deliveries
  steered: "sent into the turn",
  accepted: "delivered",
};

/** The words for a status word; one this UI does not know yet reads with spaces for underscores. */
export function statusWords(status: string): string {
  return Object.hasOwn(STATUS_WORDS, status) ? STATUS_WORDS[status as StatusWord] : status.replaceAll("_", " ");
}
