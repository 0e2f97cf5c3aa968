import { EffectKind } from "../../contracts/effects.js";
import type { Failure } from "../../contracts/entities/fields.js";
import { type Run, type RunKind, type RunPreparation, type RunStatus, isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type { AppThread, CreatedBy } from "../../contracts/thread.js";
import type { ToolItemStatus } from "../../contracts/turnItemParts.js";
import { type DecideContext, type ProviderFacts, type Rejected, reject } from "../decision.js";
import { deliverContext, releaseContext } from "../lineage/context.js";
import { beginRun, captureAfterTurn, closeSetupItem } from "../workspace/turns.js";
import { closeAttempt, openAttempt } from "./attempts.js";
import type { Changes } from "./changes.js";
import { closeRunWaits } from "./waits.js";
import { cancelLimitResume } from "./limitWait.js";
import { type BudgetAdjust, budgetPolicy, exhaustedBudget } from "../budgets/budgets.js";
import { cancelBackgroundTasks, cancelHeldBackgroundWork, runBackgroundTasks } from "./backgroundTasks.js";

/** A run between starting and its terminal event: it owns the thread's provider turn. */
export function isActiveRunStatus(status: RunStatus): boolean {
  return status !== "queued" && !isTerminalRunStatus(status);
}

export function activeRun(changes: Changes, threadId: string): Run | null {
  const runs = changes.threadRuns(threadId);
  for (let i = runs.length - 1; i >= 0; i--) {
    if (isActiveRunStatus(runs[i]!.status)) return runs[i]!;
  }
  return null;
}

/** The thread's queued runs in queue order. */
export function queuedRuns(changes: Changes, threadId: string): Run[] {
  return changes
    .threadRuns(threadId)
    .filter((run) => run.status === "queued" && run.queueRank !== null)
    .sort((a, b) => a.queueRank! - b.queueRank!);
}

/** The provider instance a thread's work runs on. */
export function threadProvider(thread: AppThread): string | null {
  return thread.modelSelection?.providerInstanceId ?? thread.providerInstanceId;
}

/** provider_not_set, saying how to give the thread one. */
export function providerNotSet(threadId: string): Rejected {
  return reject(
    "provider_not_set",
    `thread ${threadId} has no provider instance: set one with thread.model-selection.set (data: { threadId, modelSelection: { providerInstanceId, model } }), t3_thread_configure, or modelSelection on thread.create; \`loom providers\` lists the instances`,
  );
}

/**
 * What the provider running `run`'s turn can do, or null when that instance
 * is unknown. A run keeps the instance it was created on even when the
 * thread's model selection changes later, so steering and stopping a turn
 * read the run's instance, not the thread's current one.
 */
export function turnFacts(ctx: DecideContext, run: Run): ProviderFacts | null {
  return run.providerInstanceId === null ? null : ctx.providers(run.providerInstanceId);
}

export interface NewRunInput {
  readonly runId: string;
  readonly kind: RunKind;
  readonly messageId: string | null;
  /** Work to do before the provider starts (a rollback's restore); a worktree thread's is added when the run starts. */
  readonly preparation?: RunPreparation;
}

/** A new run in `queued` status, not yet placed in the queue. */
export function newRun(changes: Changes, thread: AppThread, facts: ProviderFacts, input: NewRunInput): Run {
  const runs = changes.threadRuns(thread.id);
  const ordinal = (runs[runs.length - 1]?.ordinal ?? 0) + 1;
  const now = changes.ctx.now;
  return changes.createRun({
    id: input.runId,
    threadId: thread.id,
    ordinal,
    kind: input.kind,
    status: "queued",
    providerInstanceId: threadProvider(thread),
    driver: facts.driver,
    modelSelection: thread.modelSelection,
    runtimeMode: thread.runtimeMode,
    interactionMode: thread.interactionMode,
    messageId: input.messageId,
    failure: null,
    queueRank: null,
    held: false,
    interruptRequestedAt: null,
    endReason: null,
    createdAt: now,
    updatedAt: now,
    startedAt: null,
    endedAt: null,
    ...(input.preparation === undefined ? {} : { preparation: input.preparation }),
    ...(changes.ctx.traceParent === undefined ? {} : { traceParent: changes.ctx.traceParent }),
  });
}

/**
 * Hand the run to its provider: `starting` until the provider reports the
 * turn. A run with a preparation (worktree, setup, restore) prepares first;
 * the provider start follows its release (src/core/workspace/turns.ts).
 */
export function startRun(changes: Changes, run: Run): Run {
  const started = changes.updateRun(run, { status: "starting", queueRank: null, held: false });
  deliverContext(changes, started);
  return beginRun(changes, started);
}

/** Place a queued run at the back (or the front) of its thread's queue. */
export function enqueue(changes: Changes, run: Run, position: "front" | "back"): Run {
  const queue = queuedRuns(changes, run.threadId).filter((r) => r.id !== run.id);
  if (position === "back") {
    const rank = (queue[queue.length - 1]?.queueRank ?? -1) + 1;
    return changes.updateRun(run, { status: "queued", queueRank: rank });
  }
  queue.forEach((queued, index) => {
    if (queued.queueRank !== index + 1) changes.updateRun(queued, { queueRank: index + 1 });
  });
  return changes.updateRun(run, { status: "queued", queueRank: 0 });
}

/**
 * Start the first unheld queued run when nothing is active. Taking a run off
 * the queue reserves its turn (holdsTurn), so it is checked against every
 * pool over the thread first: under one that ran out, a queued turn is
 * cancelled (`budget_exceeded:<kind>`) instead of started, or, when that
 * budget pauses (`onExceeded: "pause"`), stays queued until a raise
 * (budget.raise) starts it. System follow-ups (notices, delegated results)
 * still start, so the root hears why.
 */
export function startNext(changes: Changes, threadId: string, budgets?: BudgetAdjust): Run | null {
  // A deleted thread starts no more work.
  if (activeRun(changes, threadId) !== null || changes.thread(threadId)?.deletedAt != null) return null;
  for (const next of queuedRuns(changes, threadId).filter((run) => !run.held)) {
    const exhausted = next.kind === "system_follow_up" ? null : exhaustedBudget(changes.state, threadId, changes.ctx.now, budgets);
    if (exhausted === null) return startRun(changes, next);
    if (budgetPolicy(exhausted.holder) === "pause") return null;
    changes.updateRun(next, { status: "cancelled", queueRank: null, held: false, endReason: `budget_exceeded:${exhausted.exceeded.kind}`, endedAt: changes.ctx.now });
  }
  return null;
}

export interface RunEnd {
  readonly status: "completed" | "failed" | "interrupted" | "cancelled";
  readonly endReason: string;
  readonly failure?: Failure | null;
  /** How the run's open attempt ends; by default it follows the run's status. */
  readonly attemptStatus?: "completed" | "failed" | "interrupted" | "abandoned";
}

/**
 * End a run: terminal status, its pending requests expire, and the thread's
 * next queued run starts. A run ends only by its own terminal event, a stop
 * or a cancel (DESIGN.md invariant 6).
 */
export function endRun(changes: Changes, run: Run, end: RunEnd): Run {
  closeSetupItem(changes, run);
  closeToolItems(changes, run, end.status);
  const attempt = openAttempt(changes, run.id);
  if (attempt !== undefined) {
    const attemptStatus = end.attemptStatus ?? (end.status === "cancelled" ? "interrupted" : end.status);
    closeAttempt(changes, attempt, attemptStatus, end.status === "failed" ? (end.failure ?? null) : null);
  }
  const ended = changes.updateRun(run, {
    status: end.status,
    endReason: end.endReason,
    failure: end.failure ?? run.failure,
    queueRank: null,
    endedAt: changes.ctx.now,
    // A run that ends while it is still being prepared never reaches its provider.
    ...(run.preparation?.status === "preparing" ? { preparation: { ...run.preparation, status: "failed" as const, endedAt: changes.ctx.now } } : {}),
  });
  expirePendingRequests(changes, ended);
  closeRunWaits(changes, ended);
  cancelHeldBackgroundWork(changes, ended, end.endReason);
  releaseContext(changes, ended);
  captureAfterTurn(changes, run);
  startNext(changes, run.threadId);
  return ended;
}

/** The status a tool item still in progress takes when its run ends: only a completed turn completes it. */
const TOOL_ITEM_STATUS_AT_RUN_END = {
  completed: "completed",
  failed: "failed",
  interrupted: "failed",
  cancelled: "failed",
} as const satisfies Record<RunEnd["status"], ToolItemStatus>;

/**
 * Tool items (commands, file changes, dynamic tool calls) the provider never
 * reported finished end with their run, so no reader sees one running after
 * its turn is over.
 */
export function closeToolItems(changes: Changes, run: Run, status: RunEnd["status"]): void {
  for (const item of changes.runItems(run)) {
    if ((item.type === "command_execution" || item.type === "file_change" || item.type === "dynamic_tool") && item.status === "in_progress") {
      changes.updateItem(item, { status: TOOL_ITEM_STATUS_AT_RUN_END[status] });
    }
  }
}

/** The run's pending approvals and questions expire: nothing can answer them for it any more. */
export function expirePendingRequests(changes: Changes, run: Run): void {
  for (const request of changes.state.runtimeRequests.values()) {
    if (request.runId !== run.id || request.status !== "pending") continue;
    changes.putRequest({ ...request, status: "expired", updatedAt: changes.ctx.now, resolvedAt: changes.ctx.now });
    const item = findRequestItem(changes, request.threadId, request.id);
    if (item?.type === "approval_request") changes.updateItem(item, { status: "expired" });
    if (item?.type === "user_input_request") changes.updateItem(item, { status: "expired" });
  }
}

export function findRequestItem(changes: Changes, threadId: string, requestId: string) {
  const items = changes.state.turnItems.get(threadId) ?? [];
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if ((item?.type === "approval_request" || item?.type === "user_input_request") && item.requestId === requestId) return item;
  }
  return undefined;
}

/** Ask the provider to stop the run's turn; the run ends when the provider reports it. */
export function requestInterrupt(changes: Changes, run: Run, requestedBy: CreatedBy, reason: string | null): Run {
  const updated = changes.updateRun(run, { interruptRequestedAt: changes.ctx.now });
  changes.addItem(run.threadId, run.id, { type: "run_interrupt_request", requestedBy, reason });
  changes.effect(EffectKind.interruptTurn, run.threadId, { threadId: run.threadId, runId: run.id });
  return updated;
}

/**
 * Interrupt a run settling background work: its turn is over, so no provider
 * turn is asked to stop; every background task it started is cancelled (the
 * driver told), and the run ends interrupted here.
 */
export function interruptSettlingRun(changes: Changes, run: Run, requestedBy: CreatedBy, reason: string | null): Run {
  const asked = changes.updateRun(run, { interruptRequestedAt: changes.ctx.now });
  changes.addItem(run.threadId, run.id, { type: "run_interrupt_request", requestedBy, reason });
  cancelBackgroundTasks(changes, asked, runBackgroundTasks(changes, asked), "interrupted_by_user");
  changes.addItem(run.threadId, run.id, { type: "run_interrupt_result", outcome: "interrupted", message: null });
  return endRun(changes, asked, { status: "interrupted", endReason: "interrupted_by_user" });
}

/**
 * Stop a thread's work like a user's Stop: hold its queued runs and interrupt
 * the active one. A turn whose provider cannot be interrupted ends here and
 * its session is released, which ends the process. Returns the run it ended
 * outright, if any.
 */
export function stopThreadWork(changes: Changes, threadId: string, reason: string): Run | null {
  cancelLimitResume(changes, threadId);
  for (const run of queuedRuns(changes, threadId)) {
    if (!run.held) changes.updateRun(run, { held: true });
  }
  const active = activeRun(changes, threadId);
  if (active === null || active.interruptRequestedAt !== null) return null;
  if (active.status === "settling_background_work") return interruptSettlingRun(changes, active, "user", reason);
  if (turnFacts(changes.ctx, active)?.capabilities.interrupt === false) {
    changes.addItem(active.threadId, active.id, { type: "system_notice", level: "warning", text: "Stopped. The provider cannot interrupt a turn, so its session was released." });
    const ended = endRun(changes, active, { status: "interrupted", endReason: "stopped_by_session_release" });
    changes.effect(EffectKind.releaseSession, active.threadId, { threadId: active.threadId, reason: "detached", message: "released to stop a turn the provider cannot interrupt" });
    return ended;
  }
  requestInterrupt(changes, active, "user", reason);
  return null;
}
