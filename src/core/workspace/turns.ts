import { EffectKind } from "../../contracts/effects.js";
import { CheckpointTrigger } from "../../contracts/entities/checkpoints.js";
import { type Run, type RunPreparation, isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type { RuntimeMode } from "../../contracts/modes.js";
import type { AppThread } from "../../contracts/thread.js";
import type { Changes } from "../run/changes.js";

/**
 * How a starting run reaches its provider (docs/workspaces.md, "A turn"):
 *
 *   starting → [prepared run: worktree, setup | restore] → pre-turn checkpoint → provider.turn.start
 *   turn ends → post-turn checkpoint
 *
 * The effects of one thread run one at a time in commit order, so a capture
 * emitted before `provider.turn.start` in the same decision has finished
 * (and is recorded) before the provider starts.
 */

/**
 * Which runtime modes may write files: a turn in one gets a checkpoint before
 * and after. Every mode Loom has today may write; a read-only mode would be
 * `false` here.
 */
export const RUNTIME_MODE_WRITES: { readonly [M in RuntimeMode]: boolean } = {
  "approval-required": true,
  "auto-accept-edits": true,
  "full-access": true,
};

/** Whether the run's turn reached its provider start: it needed no preparation, or its preparation was released. */
export function turnBegan(run: Run): boolean {
  return run.preparation === undefined || run.preparation.status === "ready";
}

/** A run still in its preparation (worktree, setup, restore): no provider turn exists for it yet. */
export function isPreparing(run: Run): boolean {
  return run.preparation?.status === "preparing";
}

/**
 * A run that just became `starting`: run its preparation first when it has
 * one, or when its thread's worktree is not ready yet; otherwise begin its turn.
 */
export function beginRun(changes: Changes, run: Run): Run {
  const thread = changes.thread(run.threadId);
  if (run.preparation?.status === "preparing") return emitPreparation(changes, thread, run);
  if (thread?.workspace?.status === "pending") {
    const preparation: RunPreparation = {
      kind: "workspace",
      status: "preparing",
      step: "worktree",
      setupItemId: null,
      checkpointId: null,
      force: false,
      startedAt: changes.ctx.now,
      endedAt: null,
    };
    return emitPreparation(changes, thread, changes.updateRun(run, { preparation }));
  }
  beginTurn(changes, run);
  return run;
}

/** The pre-turn checkpoint (when the run may write and checkpoints are on), then the provider start. */
export function beginTurn(changes: Changes, run: Run): void {
  if (capturesTurns(changes, run)) requestCapture(changes, run.threadId, run.id, CheckpointTrigger.turnStart);
  changes.effect(EffectKind.startTurn, run.threadId, { threadId: run.threadId, runId: run.id });
}

/** The post-turn checkpoint of a run that is ending (`run` as it was before it ended). */
export function captureAfterTurn(changes: Changes, run: Run): void {
  if (run.status === "queued" || !turnBegan(run) || !capturesTurns(changes, run)) return;
  requestCapture(changes, run.threadId, run.id, CheckpointTrigger.turnEnd);
}

/**
 * A run that ends while its setup command runs (an interrupt, a restart): the
 * setup's command item is closed as failed, with the output last reported.
 * A report earlier in the same decision (prepared-run.fail) already closed it.
 */
export function closeSetupItem(changes: Changes, run: Run): void {
  const id = run.preparation?.status === "preparing" ? run.preparation.setupItemId : null;
  if (id === null || id === undefined) return;
  const item = changes.existingItem(id);
  if (item?.type === "command_execution" && item.status === "in_progress") changes.updateItem(item, { status: "failed" });
}

function capturesTurns(changes: Changes, run: Run): boolean {
  return changes.ctx.turnCheckpoints === true && RUNTIME_MODE_WRITES[run.runtimeMode];
}

function requestCapture(changes: Changes, threadId: string, runId: string | null, trigger: CheckpointTrigger, checkpointId = changes.ctx.allocate.checkpoint(), forRunId: string | null = null): void {
  changes.effect(EffectKind.captureCheckpoint, threadId, { threadId, checkpointId, runId, trigger, forRunId });
}

/**
 * The next step of a preparing run. A rollback restores its checkpoint. A
 * worktree child whose base (its parent's checkpoint) is not recorded yet asks
 * for it on the parent's effect chain, so it is serialized with the parent's
 * other captures; recording it emits the child's workspace.prepare. Otherwise
 * the worktree and setup are prepared.
 */
function emitPreparation(changes: Changes, thread: AppThread | undefined, run: Run): Run {
  const preparation = run.preparation!;
  if (preparation.kind === "rollback") {
    changes.effect(EffectKind.restoreCheckpoint, run.threadId, { threadId: run.threadId, runId: run.id, checkpointId: preparation.checkpointId ?? "", force: preparation.force });
    return run;
  }
  const baseId = thread?.workspace?.baseCheckpointId ?? null;
  const parentId = thread?.lineage.parentThreadId ?? null;
  if (baseId !== null && parentId !== null && !changes.state.checkpoints.has(baseId)) {
    const waiting = preparation.step === "base" ? run : changes.updateRun(run, { preparation: { ...preparation, step: "base" } });
    const parentRun = newestActiveRunId(changes, parentId);
    requestCapture(changes, parentId, parentRun, CheckpointTrigger.childBranch, baseId, run.id);
    return waiting;
  }
  changes.effect(EffectKind.prepareWorkspace, run.threadId, { threadId: run.threadId, runId: run.id });
  return run;
}

function newestActiveRunId(changes: Changes, threadId: string): string | null {
  const runs = changes.threadRuns(threadId);
  for (let i = runs.length - 1; i >= 0; i--) {
    const status = runs[i]!.status;
    if (status !== "queued" && !isTerminalRunStatus(status)) return runs[i]!.id;
  }
  return null;
}
