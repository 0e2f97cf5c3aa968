import type { NewOutboxEffect } from "../../contracts/envelopes.js";
import type { ProviderSession } from "../../contracts/entities/projects.js";
import type { ExecutionNode, Run, RunAttempt } from "../../contracts/entities/runs.js";
import type { RuntimeRequest } from "../../contracts/entities/runtimeRequests.js";
import {
  type EventOf,
  type KnownDomainEvent,
  type ProviderSessionEvent,
  type RunAttemptEvent,
  type RunEvent,
  providerSessionEvent,
  runAttemptEvent,
  runEvent,
  runtimeRequestEvent,
  turnItemEvent,
} from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import type { TurnItem, TurnItemOf } from "../../contracts/turnItems.js";
import { derive } from "../ids.js";
import type { TurnItemBody } from "../run/changes.js";
import { itemEntityEvents } from "../run/itemEntities.js";
import { CREATED_AT, aThread } from "./fixtures.js";
import { TEST_NOW } from "./scenario.js";

/**
 * Fixtures for run lifecycle tests: threads on the TEST_PROVIDERS instances,
 * runs, turn items, runtime requests and sessions as history events, and the
 * ids testContext() allocates.
 */

/** The n-th id a fresh testContext() allocates, with its entity prefix: `testId("run", 1)` = "run:00000000-0000-4000-8000-000000000001". */
export function testId(prefix: string, n: number): string {
  return `${prefix}:00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

/**
 * A live thread whose model selection points at `provider` (model "m1"): a
 * TEST_PROVIDERS key (steerable, plain, stubborn), any other (unconfigured) instance id, or null for none.
 */
export function aProviderThread(id: string, provider: string | null = "steerable", overrides: Partial<AppThread> = {}): AppThread {
  return aThread({
    id,
    providerInstanceId: provider,
    modelSelection: provider === null ? null : { providerInstanceId: provider, model: "m1" },
    ...overrides,
  });
}

/**
 * A run of `thread`, created at CREATED_AT on the thread's provider with its
 * modes. Defaults to `running` (started at CREATED_AT); a queued or starting
 * run has no startedAt.
 */
export function aRun(thread: AppThread, overrides: Partial<Run> & { id: string }): Run {
  const status = overrides.status ?? "running";
  return {
    threadId: thread.id,
    ordinal: 1,
    kind: "user_turn",
    status,
    providerInstanceId: thread.modelSelection?.providerInstanceId ?? thread.providerInstanceId,
    driver: "scripted",
    modelSelection: thread.modelSelection,
    runtimeMode: thread.runtimeMode,
    interactionMode: thread.interactionMode,
    messageId: null,
    failure: null,
    queueRank: null,
    held: false,
    interruptRequestedAt: null,
    endReason: null,
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    startedAt: status === "queued" || status === "starting" ? null : CREATED_AT,
    endedAt: null,
    ...overrides,
  };
}

export const runCreated = (run: Run): RunEvent => runEvent("run.created", run);
export const runUpdated = (run: Run): RunEvent => runEvent("run.updated", run);

/** A record after a change made at TEST_NOW: the patch plus updatedAt. */
export function after<T extends { updatedAt: string }>(record: T, patch: Partial<T>): T {
  return { ...record, ...patch, updatedAt: TEST_NOW };
}

/** A turn item at `position` of its thread's timeline, created at CREATED_AT unless overridden. */
export function anItem<B extends TurnItemBody>(
  thread: string,
  runId: string | null,
  position: number,
  id: string,
  body: B,
  times: { createdAt?: string; updatedAt?: string } = {},
): Extract<TurnItem, { type: B["type"] }> {
  const createdAt = times.createdAt ?? CREATED_AT;
  return { ...body, id, threadId: thread, runId, position, createdAt, updatedAt: times.updatedAt ?? createdAt } as unknown as Extract<TurnItem, { type: B["type"] }>;
}

/** A user message item; `messageId` is what links it to the run it started. */
export function aUserMessage(
  thread: string,
  runId: string | null,
  position: number,
  id: string,
  messageId: string,
  text: string,
  times: { createdAt?: string; updatedAt?: string } = {},
): TurnItemOf<"user_message"> {
  return anItem(thread, runId, position, id, { type: "user_message", messageId, text, createdBy: "user", creationSource: "api" }, times);
}

export const itemEvent = (item: TurnItem): EventOf<"turn-item.updated"> => turnItemEvent(item);

/** What a decision commits for an item: its turn-item.updated, then the message or plan record it stands for (src/core/run/itemEntities.ts). */
export const itemEvents = (item: TurnItem): KnownDomainEvent[] => [turnItemEvent(item), ...itemEntityEvents(item)];

/** A pending, blocking approval request on `run`, created at CREATED_AT. */
export function aRequest(run: Run, overrides: Partial<RuntimeRequest> & { id: string }): RuntimeRequest {
  return {
    threadId: run.threadId,
    runId: run.id,
    nodeId: null,
    kind: "command",
    status: "pending",
    blocking: true,
    nativeRequestId: "native-request-1",
    payload: { title: "Run npm test", detail: "npm test", requestKind: "command" },
    resolution: null,
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    resolvedAt: null,
    ...overrides,
  };
}

export const requestEvent = (request: RuntimeRequest): EventOf<"runtime-request.updated"> => runtimeRequestEvent(request);

/** A ready provider session of `threadId` on the steerable instance, opened at CREATED_AT. */
export function aSession(threadId: string, overrides: Partial<ProviderSession> & { id: string }): ProviderSession {
  return {
    threadId,
    providerInstanceId: "steerable",
    driver: "scripted",
    status: "ready",
    nativeSessionId: null,
    nativeThreadId: null,
    startedAt: CREATED_AT,
    updatedAt: CREATED_AT,
    releasedAt: null,
    releaseReason: null,
    ...overrides,
  };
}

export const sessionAttached = (session: ProviderSession): ProviderSessionEvent => providerSessionEvent("provider-session.attached", session);

/** Attempt `ordinal` of `run`, starting on `providerSessionId`, created at `at`. */
export function anAttempt(run: Run, ordinal: number, providerSessionId: string | null, at: string, overrides: Partial<RunAttempt> = {}): RunAttempt {
  return {
    id: derive.runAttemptFromOrdinal({ runId: run.id, attemptOrdinal: ordinal }),
    runId: run.id,
    threadId: run.threadId,
    attemptOrdinal: ordinal,
    status: "starting",
    providerSessionId,
    providerThreadId: null,
    providerTurnId: null,
    usage: null,
    failure: null,
    createdAt: at,
    updatedAt: at,
    endedAt: null,
    ...overrides,
  };
}

export const attemptCreated = (attempt: RunAttempt): RunAttemptEvent => runAttemptEvent("run-attempt.created", attempt);
export const attemptUpdated = (attempt: RunAttempt): RunAttemptEvent => runAttemptEvent("run-attempt.updated", attempt);

/** The outbox effects the run lifecycle emits, as decide returns them. Kinds are spelled out: they are stored wire values. */
export const effects = {
  startTurn: (threadId: string, runId: string): NewOutboxEffect => ({ kind: "provider.turn.start", streamId: threadId, payload: { threadId, runId }, replaySafe: false }),
  steerTurn: (threadId: string, runId: string, messageId: string, text: string): NewOutboxEffect => ({
    kind: "provider.turn.steer",
    streamId: threadId,
    payload: { threadId, runId, messageId, text },
    replaySafe: false,
  }),
  interruptTurn: (threadId: string, runId: string): NewOutboxEffect => ({ kind: "provider.turn.interrupt", streamId: threadId, payload: { threadId, runId }, replaySafe: true }),
  respondRequest: (request: RuntimeRequest, response: Record<string, unknown>): NewOutboxEffect => ({
    kind: "provider.request.respond",
    streamId: request.threadId,
    payload: { threadId: request.threadId, runId: request.runId, requestId: request.id, nativeRequestId: request.nativeRequestId, response },
    replaySafe: false,
  }),
  releaseSession: (threadId: string, providerSessionId: string, message: string): NewOutboxEffect => ({
    kind: "provider.session.release",
    streamId: threadId,
    payload: { threadId, providerSessionId, reason: "detached", message },
    replaySafe: true,
  }),
};

/** A recorded wait (src/core/run/waits.ts): a `tool_call` node of `run`, waiting since TEST_NOW. */
export function aWaitNode(run: Run, id: string, label: string): ExecutionNode {
  return {
    id,
    threadId: run.threadId,
    runId: run.id,
    runAttemptId: null,
    parentNodeId: null,
    kind: "tool_call",
    status: "waiting",
    label,
    createdAt: TEST_NOW,
    updatedAt: TEST_NOW,
    endedAt: null,
  };
}
