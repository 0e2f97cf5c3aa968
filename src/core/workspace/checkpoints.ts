import type { CheckpointCapturedCommand } from "../../contracts/commands/runtimeCommands.js";
import { type Checkpoint, CheckpointStatus, CheckpointTrigger } from "../../contracts/entities/checkpoints.js";
import { checkpointEvent, checkpointScopeEvent } from "../../contracts/events.js";
import { EffectKind } from "../../contracts/effects.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { settleTask } from "../delegation/settle.js";
import { Changes } from "../run/changes.js";
import { endRun } from "../run/lifecycle.js";
import type { OrchestrationState } from "../state.js";
import { noteOverlaps } from "./overlaps.js";
import { isPreparing } from "./turns.js";

/**
 * workspace-runtime.checkpoint-captured: record a capture effect's outcome.
 * The scope is created with its first checkpoint. A turn's post-turn
 * checkpoint also joins the timeline as a checkpoint item (the turn's
 * changes). A child_branch checkpoint lets the worktree child waiting for it
 * go on to its worktree, or fails its preparation when nothing was captured.
 * The thread may be deleted: its last checkpoint is recorded before its
 * worktree is removed.
 */
export function decideCheckpointCaptured(state: OrchestrationState, command: CheckpointCapturedCommand, ctx: DecideContext): Decision {
  const data = command.data;
  const thread = state.threads.get(data.threadId);
  if (thread === undefined) return reject("thread_not_found", `thread ${data.threadId} does not exist`);
  if (state.checkpoints.has(data.checkpointId)) return reject("checkpoint_already_recorded", `checkpoint ${data.checkpointId} is already recorded`);
  const scope = state.checkpointScopes.get(data.scopeId);
  if (scope !== undefined && scope.threadId !== thread.id) {
    return reject("invalid_workspace", `checkpoint scope ${data.scopeId} belongs to thread ${scope.threadId}`);
  }
  const run = data.runId === null ? undefined : state.runs.get(data.runId);
  if (data.runId !== null && run?.threadId !== thread.id) return reject("run_not_found", `run ${data.runId} does not exist in thread ${thread.id}`);

  const changes = new Changes(state, ctx);
  if (scope === undefined) {
    changes.events.push(checkpointScopeEvent({ id: data.scopeId, threadId: thread.id, workspacePath: data.workspacePath, createdAt: ctx.now, updatedAt: ctx.now }));
  }
  const runs = changes.threadRuns(thread.id);
  const checkpoint: Checkpoint = {
    id: data.checkpointId,
    threadId: thread.id,
    scopeId: data.scopeId,
    ordinalWithinScope: data.ordinal,
    appRunOrdinal: run?.ordinal ?? runs[runs.length - 1]?.ordinal ?? 0,
    runId: data.runId,
    nodeId: null,
    ref: data.ref,
    status: data.status,
    files: data.files,
    trigger: data.trigger,
    commit: data.commit,
    reason: data.reason,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
  changes.events.push(checkpointEvent(checkpoint));
  if (data.trigger === CheckpointTrigger.turnEnd && run !== undefined) {
    changes.addItem(thread.id, run.id, {
      type: "checkpoint",
      checkpointId: checkpoint.id,
      scopeId: checkpoint.scopeId,
      appRunOrdinal: checkpoint.appRunOrdinal,
      status: checkpoint.status,
      files: checkpoint.files,
    });
  }
  if (data.trigger === CheckpointTrigger.childBranch && data.forRunId !== null) continueChild(changes, checkpoint, data.forRunId);
  noteOverlaps(changes, checkpoint);
  return changes.done();
}

/** The worktree child waiting for this checkpoint goes on, or fails its preparation when there is no snapshot to branch from. */
function continueChild(changes: Changes, checkpoint: Checkpoint, childRunId: string): void {
  const run = changes.run(childRunId);
  if (run === undefined || !isPreparing(run) || run.preparation!.step !== "base") return;
  if (checkpoint.status === CheckpointStatus.ready) {
    changes.updateRun(run, { preparation: { ...run.preparation!, step: "worktree" } });
    changes.effect(EffectKind.prepareWorkspace, run.threadId, { threadId: run.threadId, runId: run.id });
    return;
  }
  const message = `the parent's workspace could not be captured to branch from (checkpoint ${checkpoint.status}): ${checkpoint.reason ?? "no reason given"}`;
  changes.addItem(run.threadId, run.id, { type: "error", code: "workspace_base_unavailable", message, detail: null });
  endRun(changes, run, { status: "failed", endReason: "preparation_failed", failure: { code: "workspace_base_unavailable", message } });
  settleTask(changes, run.threadId);
}
