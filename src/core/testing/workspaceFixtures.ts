import type { NewOutboxEffect } from "../../contracts/envelopes.js";
import type { Checkpoint, CheckpointScope, CheckpointTrigger } from "../../contracts/entities/checkpoints.js";
import { type EventOf, checkpointEvent, checkpointScopeEvent } from "../../contracts/events.js";
import type { AppThread, ThreadWorkspace } from "../../contracts/thread.js";
import type { DecideContext } from "../decision.js";
import { CREATED_AT } from "./fixtures.js";
import { testContext } from "./scenario.js";

/** Fixtures for the workspace decisions: checkpoints, scopes, worktree threads and their effects. */

/** A test context with per-turn checkpoints on. */
export function checkpointContext(): DecideContext {
  return { ...testContext(), turnCheckpoints: true };
}

/** A pending worktree of its own for a thread (t3_thread_launch worktree). */
export function aWorkspace(overrides: Partial<ThreadWorkspace> = {}): ThreadWorkspace {
  return { strategy: "worktree", status: "pending", repoPath: "/repo", baseRef: null, startFromOrigin: false, baseCheckpointId: null, ...overrides };
}

export function aScope(thread: AppThread, id = "checkpoint-scope:1"): CheckpointScope {
  return { id, threadId: thread.id, workspacePath: "/repo", createdAt: CREATED_AT, updatedAt: CREATED_AT };
}

/** A ready checkpoint of `scope` at `ordinal`, taken for `runId` (ordinal 1 unless given). */
export function aCheckpoint(scope: CheckpointScope, ordinal: number, overrides: Partial<Checkpoint> & { id: string }): Checkpoint {
  return {
    threadId: scope.threadId,
    scopeId: scope.id,
    ordinalWithinScope: ordinal,
    appRunOrdinal: 1,
    runId: null,
    nodeId: null,
    ref: `refs/loom/checkpoints/scope/${ordinal}`,
    status: "ready",
    files: [],
    trigger: "turn_start",
    commit: `commit${ordinal}`,
    reason: null,
    createdAt: CREATED_AT,
    updatedAt: CREATED_AT,
    ...overrides,
  };
}

export const scopeCreated = (scope: CheckpointScope): EventOf<"checkpoint-scope.created"> => checkpointScopeEvent(scope);
export const captured = (checkpoint: Checkpoint): EventOf<"checkpoint.captured"> => checkpointEvent(checkpoint);

/** The workspace effects as decide returns them. Kinds are spelled out: they are stored wire values. */
export const workspaceEffects = {
  capture: (threadId: string, runId: string | null, trigger: CheckpointTrigger, checkpointId: string, forRunId: string | null = null): NewOutboxEffect => ({
    kind: "checkpoint.capture",
    streamId: threadId,
    payload: { threadId, checkpointId, runId, trigger, forRunId },
    replaySafe: true,
  }),
  prepare: (threadId: string, runId: string): NewOutboxEffect => ({ kind: "workspace.prepare", streamId: threadId, payload: { threadId, runId }, replaySafe: false }),
  restore: (threadId: string, runId: string, checkpointId: string, force = false): NewOutboxEffect => ({
    kind: "checkpoint.restore",
    streamId: threadId,
    payload: { threadId, runId, checkpointId, force },
    replaySafe: false,
  }),
  cleanup: (threadId: string): NewOutboxEffect => ({ kind: "workspace.cleanup", streamId: threadId, payload: { threadId }, replaySafe: true }),
};
