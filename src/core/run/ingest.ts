import type {
  AttemptStartedCommand,
  ItemCompletedCommand,
  RunLostCommand,
  SessionOpenedCommand,
  SessionReleasedCommand,
  TurnCompletedCommand,
  TurnStartedCommand,
  UsageReportedCommand,
} from "../../contracts/commands/runtimeCommands.js";
import type { Run } from "../../contracts/entities/runs.js";
import { providerSessionEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, type Rejected, accept, reject } from "../decision.js";
import { derive, joinId } from "../ids.js";
import type { OrchestrationState } from "../state.js";
import { attemptTurnStarted, beginAttempt, openAttempt, recordUsage } from "./attempts.js";
import { Changes } from "./changes.js";
import { activeRun, endRun, isActiveRunStatus } from "./lifecycle.js";
import { turnItemBody } from "./providerItems.js";
import { resumeLostRun, resumeNotice, resumesAfterCrash } from "./crashResume.js";
import { recordLimitStop } from "./limitRecovery.js";
import { settleTask } from "../delegation/settle.js";
import { noteFileChanges } from "../workspace/overlaps.js";
import { LOST_SESSION_REASONS, markLostNotices } from "../delegation/lostNotices.js";
import { beginSettling, completeSettled, loseBackgroundWork } from "./backgroundWork.js";
import { awaitsBackgroundWork } from "./backgroundTasks.js";

type Found = { kind: "found"; changes: Changes; run: Run } | Rejected;

/** The run a provider reports on; output for a run that already ended is refused (and kept as a rejected receipt). */
function reportedRun(state: OrchestrationState, ctx: DecideContext, threadId: string, runId: string): Found {
  const run = state.runs.get(runId);
  if (run === undefined || run.threadId !== threadId) return reject("run_not_found", `run ${runId} does not exist in thread ${threadId}`);
  if (!isActiveRunStatus(run.status)) return reject("run_not_active", `run ${runId} is ${run.status}`);
  return { kind: "found", changes: new Changes(state, ctx), run };
}

export function decideSessionOpened(state: OrchestrationState, command: SessionOpenedCommand, ctx: DecideContext): Decision {
  const { threadId, providerSessionId, providerInstanceId, driver } = command.data;
  if (!state.threads.has(threadId)) return reject("thread_not_found", `thread ${threadId} does not exist`);
  return accept([
    providerSessionEvent("provider-session.attached", {
      id: providerSessionId,
      threadId,
      providerInstanceId,
      driver,
      status: "ready",
      nativeSessionId: null,
      nativeThreadId: null,
      startedAt: ctx.now,
      updatedAt: ctx.now,
      releasedAt: null,
      releaseReason: null,
    }),
  ]);
}

/**
 * The session is gone. A run still on it is interrupted with a notice that
 * says why, so a reaped session never reads as a completed run.
 */
export function decideSessionReleased(state: OrchestrationState, command: SessionReleasedCommand, ctx: DecideContext): Decision {
  const { threadId, providerSessionId, reason, message } = command.data;
  const session = state.providerSessions.get(providerSessionId);
  if (session === undefined || session.threadId !== threadId) return reject("session_not_found", `session ${providerSessionId} is unknown`);
  if (session.releasedAt !== null) return reject("session_not_found", `session ${providerSessionId} was already released`);
  const changes = new Changes(state, ctx);
  changes.events.push(
    providerSessionEvent("provider-session.detached", { ...session, status: "released", updatedAt: ctx.now, releasedAt: ctx.now, releaseReason: reason }),
  );
  // The background work the session's process ran ended with it; a run settling it completes.
  if (loseBackgroundWork(changes, threadId, `session_${reason}`)) return changes.done();
  const run = activeRun(changes, threadId);
  if (run !== null && runIsOnSession(changes, run, session.id, session.providerInstanceId, reason)) {
    const endReason = reason === "idle_reaped" ? "session_reaped" : `session_${reason}`;
    changes.addItem(threadId, run.id, { type: "system_notice", level: "warning", text: message });
    const ended = endRun(changes, run, { status: "interrupted", endReason });
    if (LOST_SESSION_REASONS.has(reason)) markLostNotices(changes, ended);
    settleTask(changes, run.threadId);
  }
  return changes.done();
}

/**
 * A run is on a session when its open attempt was handed to that session. A
 * run with no attempt at all comes from a log written before attempts
 * existed: it is on the session when it runs on the session's provider
 * instance, unless it is still starting after a restart (boot reconciliation
 * ended the previous process's runs already).
 */
function runIsOnSession(changes: Changes, run: Run, sessionId: string, providerInstanceId: string, reason: string): boolean {
  const attempts = changes.runAttempts(run.id);
  // A resumed run waits for its next attempt: no session carries it until one is handed it.
  if (attempts.length > 0 || run.resumes !== undefined) return openAttempt(changes, run.id)?.providerSessionId === sessionId;
  return run.providerInstanceId === providerInstanceId && !(reason === "server_restarted" && run.status === "starting");
}

/** The session manager handed a starting run to a provider session: a new attempt bound to it. */
export function decideAttemptStarted(state: OrchestrationState, command: AttemptStartedCommand, ctx: DecideContext): Decision {
  const found = reportedRun(state, ctx, command.data.threadId, command.data.runId);
  if (found.kind === "rejected") return found;
  if (found.run.status !== "starting") return reject("run_not_active", `run ${found.run.id} is ${found.run.status}, not starting`);
  const session = state.providerSessions.get(command.data.providerSessionId);
  if (session === undefined || session.threadId !== found.run.threadId || session.releasedAt !== null) {
    return reject("session_not_found", `session ${command.data.providerSessionId} is not attached to thread ${found.run.threadId}`);
  }
  beginAttempt(found.changes, found.run, session.id, "starting");
  return found.changes.done();
}

export function decideTurnStarted(state: OrchestrationState, command: TurnStartedCommand, ctx: DecideContext): Decision {
  const found = reportedRun(state, ctx, command.data.threadId, command.data.runId);
  if (found.kind === "rejected") return found;
  if (found.run.status !== "starting") return reject("run_not_active", `run ${found.run.id} already started`);
  const { providerSessionId, nativeThreadId, nativeTurnId } = command.data;
  attemptTurnStarted(found.changes, found.run, {
    ...(providerSessionId === undefined ? {} : { providerSessionId }),
    nativeThreadId: nativeThreadId ?? null,
    nativeTurnId: nativeTurnId ?? null,
  });
  found.changes.updateRun(found.run, { status: "running", startedAt: ctx.now });
  return found.changes.done();
}

/** Usage so far in the run's current attempt; a run with no open attempt has nothing to record it on. */
export function decideUsageReported(state: OrchestrationState, command: UsageReportedCommand, ctx: DecideContext): Decision {
  const found = reportedRun(state, ctx, command.data.threadId, command.data.runId);
  if (found.kind === "rejected") return found;
  const attempt = openAttempt(found.changes, found.run.id);
  if (attempt === undefined) return reject("run_not_active", `run ${found.run.id} has no attempt in progress`);
  recordUsage(found.changes, attempt, command.data.usage);
  return found.changes.done();
}

/** A finished provider item joins the timeline; approvals and questions also open a runtime request. */
export function decideItemCompleted(state: OrchestrationState, command: ItemCompletedCommand, ctx: DecideContext): Decision {
  const found = reportedRun(state, ctx, command.data.threadId, command.data.runId);
  if (found.kind === "rejected") return found;
  const { changes, run } = found;
  const { item, driver, nativeItemId } = command.data;
  const itemId = derive.turnItemFromProviderItem({ driver, providerTurnId: run.id, nativeItemId });
  let requestId: string | null = null;
  if (item.kind === "approval_request" || item.kind === "user_input_request") {
    const existing = changes.existingItem(itemId);
    if (existing !== undefined) return reject("request_not_pending", `request item ${nativeItemId} was already recorded`);
    requestId = ctx.allocate.runtimeRequest();
    const isQuestion = item.kind === "user_input_request";
    // An asynchronous question (spec 000: a Codex async question) lets the turn keep working.
    const blocking = !isQuestion || item.blocking !== false;
    changes.putRequest({
      id: requestId,
      threadId: run.threadId,
      runId: run.id,
      nodeId: null,
      kind: isQuestion ? "user_input" : item.requestKind,
      status: "pending",
      blocking,
      nativeRequestId: item.requestId,
      payload: isQuestion ? { questions: item.questions } : { title: item.title, detail: item.detail, requestKind: item.requestKind },
      resolution: null,
      createdAt: ctx.now,
      updatedAt: ctx.now,
      resolvedAt: null,
    });
    if (blocking) changes.updateRun(run, { status: isQuestion ? "waiting_on_user_input" : "waiting_on_approval", startedAt: run.startedAt ?? ctx.now });
    else if (run.status === "starting") changes.updateRun(run, { status: "running", startedAt: run.startedAt ?? ctx.now });
  } else if (run.status === "starting") {
    changes.updateRun(run, { status: "running", startedAt: run.startedAt ?? ctx.now });
  }
  // The message id is derived too, so an item reported again keeps it (spec 004 §2.2).
  const messageId = () => derive.messageFromProviderItem({ driver, providerTurnId: run.id, nativeItemId });
  const outputStreamId = () => derive.outputStreamOfItem({ turnItemId: itemId });
  const planId = () => joinId("plan", "turn-item", itemId);
  changes.addItem(run.threadId, run.id, turnItemBody(item, messageId, requestId, outputStreamId, planId), itemId);
  // A worktree child's file changes meet its siblings' as they happen (docs/workspaces.md, "Overlap awareness").
  if (item.kind === "file_change") noteFileChanges(changes, run.threadId, item.changes.map((change) => change.path));
  return changes.done();
}

/** The one event that ends a turn (DESIGN.md invariant 6). */
export function decideTurnCompleted(state: OrchestrationState, command: TurnCompletedCommand, ctx: DecideContext): Decision {
  const found = reportedRun(state, ctx, command.data.threadId, command.data.runId);
  if (found.kind === "rejected") return found;
  const { changes, run } = found;
  const { status, error } = command.data;
  const attempt = openAttempt(changes, run.id);
  if (attempt !== undefined && command.data.usage !== undefined) recordUsage(changes, attempt, command.data.usage);
  // Work the turn awaits still runs: the run settles it first (docs/runs.md, "Background work").
  if (status === "completed" && run.interruptRequestedAt === null && awaitsBackgroundWork(changes, run)) {
    beginSettling(changes, run);
    return changes.done();
  }
  if (status === "failed") {
    changes.addItem(run.threadId, run.id, { type: "error", code: "provider_error", message: error ?? "the provider reported a failure", detail: null });
  }
  // An interrupt request gets its answer: the turn stopped, or it had ended on its own first.
  if (run.interruptRequestedAt !== null) {
    changes.addItem(run.threadId, run.id, status === "interrupted" ? { type: "run_interrupt_result", outcome: "interrupted", message: null } : { type: "run_interrupt_result", outcome: "already_terminal", message: `the turn ended ${status} before the interrupt took effect` });
  }
  const endReason =
    command.data.endReason ?? (status === "completed" ? "completed" : status === "failed" ? "provider_error" : run.interruptRequestedAt !== null ? "interrupted_by_user" : "interrupted");
  const ended = endRun(changes, run, {
    status,
    endReason,
    failure: status === "failed" ? { code: "provider_error", message: error ?? "the provider reported a failure" } : null,
  });
  // A usage limit stopped it: the thread waits for the reset, and its work resumes then (docs/limits.md).
  if (status === "failed" && command.data.limit !== undefined) recordLimitStop(changes, ended, command.data.limit);
  settleTask(changes, run.threadId);
  return changes.done();
}

/**
 * A run whose process-bound work was lost: interrupted (or failed) with a
 * system notice saying why. Nothing stays running forever.
 */
export function decideRunLost(state: OrchestrationState, command: RunLostCommand, ctx: DecideContext): Decision {
  const found = reportedRun(state, ctx, command.data.threadId, command.data.runId);
  if (found.kind === "rejected") return found;
  const { changes, run } = found;
  const { status, reason, message, instanceOnCrash } = command.data;
  // A settling run's turn was over: it does not run again, it completes without the background work it lost.
  if (run.status === "settling_background_work") {
    if (!loseBackgroundWork(changes, run.threadId, reason)) completeSettled(changes, run, "background_work_lost");
    return changes.done();
  }
  // A run lost with its server resumes as a new attempt where its policy says so (docs/runs.md, "Work after a crash").
  if (status === "interrupted" && resumesAfterCrash(changes, run, reason, instanceOnCrash)) {
    resumeLostRun(changes, run, reason, resumeNotice(reason, (run.resumes?.length ?? 0) + 1));
    return changes.done();
  }
  changes.addItem(run.threadId, run.id, { type: "system_notice", level: "warning", text: message });
  // A run lost with its process (a restart) abandons its attempt; one that failed to start fails it.
  const ended = endRun(changes, run, { status, endReason: reason, failure: status === "failed" ? { code: reason, message } : null, attemptStatus: status === "failed" ? "failed" : "abandoned" });
  // A notice this run carried and its agent never read goes out again (docs/delegation.md).
  if (status === "interrupted") markLostNotices(changes, ended);
  settleTask(changes, run.threadId);
  return changes.done();
}
