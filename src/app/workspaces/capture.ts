import type { CheckpointCapturedCommand } from "../../contracts/commands/runtimeCommands.js";
import type { EffectPayload } from "../../contracts/effects.js";
import type { CheckpointTrigger } from "../../contracts/entities/checkpoints.js";
import type { AppThread } from "../../contracts/thread.js";
import { joinId } from "../../core/ids.js";
import type { OrchestrationState } from "../../core/state.js";
import type { Engine } from "../engine.js";
import { captureCheckpoint } from "../../workspaces/checkpoints.js";
import { commitMessage } from "../../workspaces/checkpointRefs.js";
import { isWorkspaceError } from "../../workspaces/errors.js";
import { checkpointRef } from "../../workspaces/refNames.js";
import { probeWorkingTree } from "../../workspaces/repository.js";
import { type WorkspaceLayout, canonical, privateIndexDir, workspacePathOf } from "./paths.js";

/**
 * Capture a thread's workspace as a checkpoint and record it
 * (workspace-runtime.checkpoint-captured). Runs inside the thread's effect
 * chain, so the captures of one scope never overlap and the state already
 * holds every earlier checkpoint of the scope: the next ordinal is the
 * highest recorded one plus one.
 *
 * Replay-safe: a checkpoint already recorded is not captured again; one whose
 * ref was written before a crash is found by its ordinal (the library answers
 * with the stored snapshot) and recognised by the checkpoint id its commit
 * message carries. A ref some other capture left without recording it is
 * skipped to the next ordinal.
 */

export interface CaptureContext extends WorkspaceLayout {
  readonly orchestrator: Engine;
}

export type CaptureRequest = EffectPayload<"checkpoint.capture">;

/** Ordinals tried past refs left by captures that never got recorded. */
const MAX_ORPHANED_ORDINALS = 20;

export async function captureAndRecord(ctx: CaptureContext, request: CaptureRequest): Promise<void> {
  const state = ctx.orchestrator.state;
  const thread = state.threads.get(request.threadId);
  if (thread === undefined || state.checkpoints.has(request.checkpointId)) return;
  const outcome = await capture(ctx, thread, request.checkpointId);
  await record(ctx, request, outcome);
}

/** Record a capture that could not be taken at all (its effect failed for good) as an `error` checkpoint. */
export async function recordCaptureError(ctx: CaptureContext, request: CaptureRequest, reason: string): Promise<void> {
  const state = ctx.orchestrator.state;
  const thread = state.threads.get(request.threadId);
  if (thread === undefined || state.checkpoints.has(request.checkpointId)) return;
  const path = workspacePathOf(ctx, thread);
  const root = canonical(path);
  const scopeId = scopeFor(state, thread.id, root);
  const ordinal = nextOrdinal(state, scopeId);
  await record(ctx, request, { scopeId, workspacePath: root, ordinal, status: "error", ref: checkpointRef(scopeId, ordinal), commit: null, files: [], reason });
}

interface Outcome {
  readonly scopeId: string;
  readonly workspacePath: string;
  readonly ordinal: number;
  readonly status: CheckpointCapturedCommand["data"]["status"];
  readonly ref: string;
  readonly commit: string | null;
  readonly files: CheckpointCapturedCommand["data"]["files"];
  readonly reason: string | null;
}

async function capture(ctx: CaptureContext, thread: AppThread, checkpointId: string): Promise<Outcome> {
  const state = ctx.orchestrator.state;
  const path = workspacePathOf(ctx, thread);
  const probe = await probeWorkingTree(path);
  const root = probe.tree?.root ?? canonical(path);
  const scopeId = scopeFor(state, thread.id, root);
  const first = nextOrdinal(state, scopeId);
  let ordinal = first;
  const without = (status: "missing" | "error", reason: string): Outcome => ({ scopeId, workspacePath: root, ordinal, status, ref: checkpointRef(scopeId, ordinal), commit: null, files: [], reason });
  if (thread.workspace?.strategy === "worktree" && thread.worktreePath === null) return without("missing", "the thread's worktree has not been created yet");
  if (probe.tree === null) return without("missing", probe.reason);
  const indexDir = privateIndexDir(probe.tree.commonDir);
  try {
    for (let tries = 0; tries <= MAX_ORPHANED_ORDINALS; tries += 1, ordinal += 1) {
      const message = `loom checkpoint ${scopeId} #${ordinal}\n\nLoom-Checkpoint: ${checkpointId}\n`;
      const result = await captureCheckpoint({ workspacePath: path, scopeId, ordinal, indexDir, message });
      if (result.status === "missing") return without("missing", result.reason);
      if (result.alreadyCaptured && !(await commitMessage(root, result.ref)).includes(`Loom-Checkpoint: ${checkpointId}\n`)) continue;
      return { scopeId, workspacePath: root, ordinal, status: "ready", ref: result.ref, commit: result.commit, files: result.files, reason: null };
    }
    ordinal = first;
    return without("error", `ordinals ${first} to ${first + MAX_ORPHANED_ORDINALS} of scope ${scopeId} hold refs no recorded checkpoint owns`);
  } catch (error) {
    // A lock held by another git process may clear: let the effect retry. Anything else is this checkpoint's outcome.
    if (isWorkspaceError(error) && error.retryable) throw error;
    return without("error", error instanceof Error ? error.message : String(error));
  }
}

async function record(ctx: CaptureContext, request: CaptureRequest, outcome: Outcome): Promise<void> {
  const receipt = await ctx.orchestrator.dispatch({
    type: "workspace-runtime.checkpoint-captured",
    commandId: joinId("cmd", "checkpoint", request.checkpointId),
    data: {
      threadId: request.threadId,
      checkpointId: request.checkpointId,
      runId: request.runId,
      trigger: request.trigger satisfies CheckpointTrigger,
      forRunId: request.forRunId,
      ...outcome,
    },
  });
  if (receipt.status === "rejected" && receipt.rejection.code !== "checkpoint_already_recorded" && receipt.rejection.code !== "thread_not_found") {
    throw new Error(`recording checkpoint ${request.checkpointId} was refused: ${receipt.rejection.code}: ${receipt.rejection.message}`);
  }
}

/**
 * The thread's scope for a working tree: the one it already has there, else
 * a new one (created when its first checkpoint is recorded). Derived from the
 * state alone, so a replayed capture names the same scope.
 */
export function scopeFor(state: OrchestrationState, threadId: string, workspacePath: string): string {
  let count = 0;
  for (const scope of state.checkpointScopes.values()) {
    if (scope.threadId !== threadId) continue;
    if (scope.workspacePath === workspacePath) return scope.id;
    count += 1;
  }
  return joinId("checkpoint-scope", "thread", threadId, "scope", count);
}

export function nextOrdinal(state: OrchestrationState, scopeId: string): number {
  let next = 0;
  for (const id of state.scopeCheckpoints.get(scopeId) ?? []) next = Math.max(next, state.checkpoints.get(id)!.ordinalWithinScope + 1);
  return next;
}
