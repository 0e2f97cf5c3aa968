import { EffectKind, type EffectPayload } from "../../contracts/effects.js";
import type { OutboxRow } from "../../contracts/envelopes.js";
import { joinId } from "../../core/ids.js";
import type { EffectHandlers } from "../../engine/outboxWorker.js";
import { type CaptureContext, captureAndRecord, recordCaptureError } from "./capture.js";
import { removeDeletedThreadWorktree } from "./cleanup.js";
import { failQueuedEntry, mergeQueuedEntry } from "./mergeQueueEffect.js";
import { prepareWorkspace } from "./prepare.js";
import { restoreCheckpoint } from "./restore.js";

/** The effect kinds the workspace layer runs. */
export type WorkspaceEffectHandlers = Pick<
  EffectHandlers,
  | typeof EffectKind.prepareWorkspace
  | typeof EffectKind.captureCheckpoint
  | typeof EffectKind.restoreCheckpoint
  | typeof EffectKind.cleanupWorkspace
  | typeof EffectKind.mergeQueueEntry
>;

export interface WorkspaceEffectsOptions extends CaptureContext {
  readonly log?: (line: string) => void;
}

/**
 * The workspace effects of the outbox (src/contracts/effects.ts), wired into
 * the worker next to the session manager's: git work is I/O, so it runs here
 * and its outcome re-enters the log as commands.
 */
export class WorkspaceEffects {
  constructor(private readonly options: WorkspaceEffectsOptions) {}

  handlers(): WorkspaceEffectHandlers {
    return {
      [EffectKind.prepareWorkspace]: (payload, effect) => prepareWorkspace(this.options, payload, effect),
      [EffectKind.captureCheckpoint]: (payload) => captureAndRecord(this.options, payload),
      [EffectKind.restoreCheckpoint]: (payload, effect) => restoreCheckpoint(this.options, payload, effect),
      [EffectKind.cleanupWorkspace]: (payload) => this.cleanup(payload),
      [EffectKind.mergeQueueEntry]: (payload) => mergeQueuedEntry(this.options, payload),
    };
  }

  /**
   * An effect that failed for good must not leave a run waiting on it: a
   * capture is recorded as an `error` checkpoint (a worktree child waiting for
   * it then fails its preparation), and a preparation or restore fails its run.
   */
  onEffectFailed(row: OutboxRow, error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    const report = (work: Promise<unknown>) => work.catch((failure: unknown) => this.options.log?.(`loom: reporting the failure of effect ${row.kind} failed: ${String(failure)}`));
    switch (row.kind) {
      case EffectKind.captureCheckpoint:
        void report(recordCaptureError(this.options, row.payload as EffectPayload<"checkpoint.capture">, `the capture failed: ${reason}`));
        return;
      case EffectKind.prepareWorkspace: {
        const { threadId, runId } = row.payload as EffectPayload<"workspace.prepare">;
        void report(
          this.options.orchestrator.dispatch({
            type: "prepared-run.fail",
            commandId: joinId("cmd", "prepare-failed", row.id),
            data: { threadId, runId, code: "workspace_prepare_failed", message: `preparing the worktree failed: ${reason}` },
          }),
        );
        return;
      }
      case EffectKind.restoreCheckpoint: {
        const { threadId, runId, checkpointId } = row.payload as EffectPayload<"checkpoint.restore">;
        void report(
          this.options.orchestrator.dispatch({
            type: "checkpoint.rollback.fail",
            commandId: joinId("cmd", "restore-failed", row.id),
            data: { threadId, runId, checkpointId, code: "workspace_restore_failed", message: `the restore failed: ${reason}`, files: [] },
          }),
        );
        return;
      }
      case EffectKind.mergeQueueEntry:
        void report(failQueuedEntry(this.options, row.payload as EffectPayload<"merge-queue.merge">, `the merge failed: ${reason}`));
        return;
      default:
        this.options.log?.(`loom: effect ${row.kind} failed: ${reason}`);
    }
  }

  private async cleanup({ threadId }: EffectPayload<"workspace.cleanup">): Promise<void> {
    const thread = this.options.orchestrator.state.threads.get(threadId);
    if (thread === undefined) return;
    const outcome = await removeDeletedThreadWorktree(this.options, thread);
    if (!outcome.removed && outcome.path !== null) this.options.log?.(`loom: kept the worktree ${outcome.path} of deleted thread ${threadId}: ${outcome.keptBecause ?? "?"}`);
  }
}
