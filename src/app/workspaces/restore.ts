import { joinId } from "../../core/ids.js";
import type { EffectContext } from "../../engine/outboxWorker.js";
import { isWorkspaceError } from "../../workspaces/errors.js";
import { probeWorkingTree } from "../../workspaces/repository.js";
import { rollbackToCheckpoint } from "../../workspaces/rollback.js";
import type { CaptureContext } from "./capture.js";
import { privateIndexDir } from "./paths.js";

/**
 * checkpoint.restore: the preparation of a rollback_recovery run. It runs in
 * the thread's effect chain after the interrupted turn's post-turn capture,
 * so the checkpoint scope's latest checkpoint holds everything the agent
 * wrote. Only the scope's own working tree is written. The run is released
 * (its turn then tells the agent what was restored) or fails with
 * checkpoint.rollback.fail naming the files in conflict.
 */
export async function restoreCheckpoint(ctx: CaptureContext, payload: { threadId: string; runId: string; checkpointId: string; force: boolean }, effect: EffectContext): Promise<void> {
  const state = ctx.orchestrator.state;
  const run = state.runs.get(payload.runId);
  if (run?.status !== "starting" || run.preparation?.status !== "preparing" || run.preparation.kind !== "rollback") return;
  const fail = async (code: string, message: string, files: readonly string[]) => {
    await ctx.orchestrator.dispatch({
      type: "checkpoint.rollback.fail",
      commandId: joinId("cmd", "restore", effect.effectId, "fail"),
      data: { threadId: payload.threadId, runId: payload.runId, checkpointId: payload.checkpointId, code, message, files: [...files] },
    });
  };
  const checkpoint = state.checkpoints.get(payload.checkpointId);
  const scope = checkpoint === undefined ? undefined : state.checkpointScopes.get(checkpoint.scopeId);
  if (checkpoint === undefined || scope === undefined) return fail("checkpoint_not_found", `checkpoint ${payload.checkpointId} is not recorded`, []);
  const probe = await probeWorkingTree(scope.workspacePath);
  if (probe.tree === null) return fail("workspace_unavailable", `the checkpoint's workspace cannot be restored: ${probe.reason}`, []);
  try {
    const result = await rollbackToCheckpoint({
      workspacePath: scope.workspacePath,
      scopeId: scope.id,
      ordinal: checkpoint.ordinalWithinScope,
      indexDir: privateIndexDir(probe.tree.commonDir),
      force: payload.force,
    });
    await ctx.orchestrator.dispatch({
      type: "prepared-run.release",
      commandId: joinId("cmd", "restore", effect.effectId, "release"),
      data: { threadId: payload.threadId, runId: payload.runId, restoredFiles: result.files, overwritten: result.overwritten },
    });
  } catch (error) {
    if (!isWorkspaceError(error)) throw error;
    await fail(error.code, error.message, error.files);
  }
}
