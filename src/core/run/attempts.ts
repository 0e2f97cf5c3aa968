import type { ReportedUsage } from "../../contracts/commands/runtimeCommands.js";
import type { ProviderTurnStatus } from "../../contracts/entities/providerRecords.js";
import type { Failure } from "../../contracts/entities/fields.js";
import { type Run, type RunAttempt, type RunAttemptStatus, type TokenUsage, isTerminalRunAttemptStatus } from "../../contracts/entities/runs.js";
import { derive } from "../ids.js";
import type { Changes } from "./changes.js";

/**
 * Run attempts (spec 004 §2): one try at executing a run on a provider
 * session. The session manager opens one when it hands a run to a session;
 * the provider's turn.started fills in its native thread and turn; the run's
 * end closes it. Usage reported by the provider lands on the attempt.
 */

/** The run's attempt that has not ended, if any. */
export function openAttempt(changes: Changes, runId: string): RunAttempt | undefined {
  const attempts = changes.runAttempts(runId);
  const last = attempts[attempts.length - 1];
  return last !== undefined && !isTerminalRunAttemptStatus(last.status) ? last : undefined;
}

/** A new attempt of `run` on `providerSessionId`; an attempt still open is abandoned first. */
export function beginAttempt(changes: Changes, run: Run, providerSessionId: string | null, status: "starting" | "running"): RunAttempt {
  const previous = openAttempt(changes, run.id);
  if (previous !== undefined) closeAttempt(changes, previous, "abandoned", null);
  const attemptOrdinal = changes.runAttempts(run.id).length + 1;
  const now = changes.ctx.now;
  return changes.createAttempt({
    id: derive.runAttemptFromOrdinal({ runId: run.id, attemptOrdinal }),
    runId: run.id,
    threadId: run.threadId,
    attemptOrdinal,
    status,
    providerSessionId,
    providerThreadId: null,
    providerTurnId: null,
    usage: null,
    failure: null,
    createdAt: now,
    updatedAt: now,
    endedAt: null,
  });
}

/** The session a thread has attached now (its only unreleased one). */
function attachedSession(changes: Changes, threadId: string): string | null {
  for (const session of changes.state.providerSessions.values()) {
    if (session.threadId === threadId && session.releasedAt === null) return session.id;
  }
  return null;
}

export interface TurnStartFacts {
  readonly providerSessionId?: string;
  readonly nativeThreadId?: string | null;
  readonly nativeTurnId?: string | null;
}

/** The provider began the run's turn: the attempt runs, with the provider's thread and turn recorded. */
export function attemptTurnStarted(changes: Changes, run: Run, facts: TurnStartFacts): RunAttempt {
  const sessionId = facts.providerSessionId ?? openAttempt(changes, run.id)?.providerSessionId ?? attachedSession(changes, run.threadId);
  let attempt = openAttempt(changes, run.id);
  if (attempt === undefined || (facts.providerSessionId !== undefined && attempt.providerSessionId !== facts.providerSessionId)) {
    attempt = beginAttempt(changes, run, sessionId, "running");
  }
  const now = changes.ctx.now;
  let providerThreadId: string | null = attempt.providerThreadId;
  if (facts.nativeThreadId) {
    providerThreadId = derive.providerThread({ driver: run.driver ?? "unknown", providerInstanceId: run.providerInstanceId, threadId: run.threadId, nativeThreadId: facts.nativeThreadId });
    const known = changes.providerThread(providerThreadId);
    if (known === undefined || known.providerSessionId !== sessionId) {
      changes.putProviderThread({
        id: providerThreadId,
        threadId: run.threadId,
        providerSessionId: sessionId,
        providerInstanceId: run.providerInstanceId,
        driver: run.driver ?? "unknown",
        nativeThreadId: facts.nativeThreadId,
        createdAt: known?.createdAt ?? now,
        updatedAt: now,
      });
    }
  }
  let providerTurnId: string | null = attempt.providerTurnId;
  if (facts.nativeTurnId && providerThreadId !== null) {
    providerTurnId = derive.providerTurn({ providerThreadId, nativeTurnId: facts.nativeTurnId });
    changes.putProviderTurn({
      id: providerTurnId,
      providerThreadId,
      threadId: run.threadId,
      runId: run.id,
      runAttemptId: attempt.id,
      nativeTurnId: facts.nativeTurnId,
      status: "running",
      startedAt: now,
      updatedAt: now,
      endedAt: null,
    });
  }
  if (attempt.status === "running" && attempt.providerThreadId === providerThreadId && attempt.providerTurnId === providerTurnId && attempt.providerSessionId === sessionId) {
    return attempt;
  }
  return changes.updateAttempt(attempt, { status: "running", providerSessionId: sessionId, providerThreadId, providerTurnId });
}

export function tokenUsage(reported: ReportedUsage): TokenUsage {
  return {
    inputTokens: Math.max(0, Math.round(reported.inputTokens)),
    outputTokens: Math.max(0, Math.round(reported.outputTokens)),
    cachedInputTokens: reported.cachedInputTokens === undefined ? null : Math.max(0, Math.round(reported.cachedInputTokens)),
    reasoningOutputTokens: reported.reasoningOutputTokens === undefined ? null : Math.max(0, Math.round(reported.reasoningOutputTokens)),
    costUsd: reported.costUsd === undefined ? null : Math.max(0, reported.costUsd),
  };
}

/** Record the attempt's usage so far (cumulative for the turn); unchanged usage writes nothing. */
export function recordUsage(changes: Changes, attempt: RunAttempt, reported: ReportedUsage): RunAttempt {
  const usage = tokenUsage(reported);
  const same = attempt.usage !== null && Object.entries(usage).every(([key, value]) => attempt.usage![key as keyof TokenUsage] === value);
  return same ? attempt : changes.updateAttempt(attempt, { usage });
}

const TURN_STATUS_OF: { readonly [S in Exclude<RunAttemptStatus, "starting" | "running">]: ProviderTurnStatus } = {
  completed: "completed",
  interrupted: "interrupted",
  failed: "failed",
  abandoned: "abandoned",
};

/** End an attempt (and its provider turn). */
export function closeAttempt(changes: Changes, attempt: RunAttempt, status: Exclude<RunAttemptStatus, "starting" | "running">, failure: Failure | null): RunAttempt {
  const now = changes.ctx.now;
  if (attempt.providerTurnId !== null) {
    const turn = changes.providerTurn(attempt.providerTurnId);
    if (turn !== undefined && turn.endedAt === null) changes.putProviderTurn({ ...turn, status: TURN_STATUS_OF[status], updatedAt: now, endedAt: now });
  }
  return changes.updateAttempt(attempt, { status, failure, endedAt: now });
}
