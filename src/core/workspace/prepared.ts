import type {
  CheckpointRollbackFailCommand,
  PreparedRunFailCommand,
  PreparedRunProgressCommand,
  PreparedRunReleaseCommand,
  PreparedRunRetryCommand,
  SetupReport,
} from "../../contracts/commands/workspaceCommands.js";
import { type Run, type RunPreparationKind, isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { type DecideContext, type Decision, type Rejected, reject } from "../decision.js";
import { settleTask } from "../delegation/settle.js";
import { Changes } from "../run/changes.js";
import { activeRun, endRun, enqueue, newRun, queuedRuns, startRun, providerNotSet, threadProvider } from "../run/lifecycle.js";
import type { OrchestrationState } from "../state.js";
import { changed, liveThread } from "../thread/guards.js";
import { freePortBlock } from "./portBlocks.js";
import { markStaleAfter, recoveryMessage } from "./rollback.js";
import { beginTurn } from "./turns.js";

/**
 * The prepared-run commands (spec 004 §3.1): the workspace effects report a
 * preparation's progress (the worktree made, setup output so far), release
 * the run to its provider, or fail it; a failed preparation can be retried.
 */

type Found = { kind: "found"; changes: Changes; run: Run } | Rejected;

/** The run named, in its thread, still preparing (of `kind` when given). */
function preparingRun(state: OrchestrationState, ctx: DecideContext, threadId: string, runId: string, kind?: RunPreparationKind): Found {
  const found = liveThread(state, threadId);
  if (found.kind === "rejected") return found;
  const run = state.runs.get(runId);
  if (run === undefined || run.threadId !== threadId) return reject("run_not_found", `run ${runId} does not exist in thread ${threadId}`);
  if (run.status !== "starting" || run.preparation?.status !== "preparing" || (kind !== undefined && run.preparation.kind !== kind)) {
    return reject("preparation_not_active", `run ${runId} is not preparing${kind === undefined ? "" : ` a ${kind}`} (${run.status})`);
  }
  return { kind: "found", changes: new Changes(state, ctx), run };
}

/** prepared-run.progress: the worktree is recorded on the thread; setup output updates its command item. */
export function decidePreparedRunProgress(state: OrchestrationState, command: PreparedRunProgressCommand, ctx: DecideContext): Decision {
  const found = preparingRun(state, ctx, command.data.threadId, command.data.runId, "workspace");
  if (found.kind === "rejected") return found;
  const { changes } = found;
  let run = found.run;
  const { worktree, setup } = command.data;
  if (command.data.step === "worktree" && worktree === undefined) return reject("invalid_workspace", "a worktree progress report needs `worktree`");
  if (command.data.step === "setup" && setup === undefined) return reject("invalid_workspace", "a setup progress report needs `setup`");
  if (worktree !== undefined) {
    const thread = changes.thread(run.threadId)!;
    if (thread.worktreePath !== null && thread.worktreePath !== worktree.path) {
      return reject("invalid_workspace", `thread ${thread.id} already works in ${thread.worktreePath}`);
    }
    // A replayed report keeps the block the first one took.
    const portBlock = thread.workspace?.portBlock ?? freePortBlock(changes.state, thread.id);
    const workspace = thread.workspace === undefined || thread.workspace === null ? thread.workspace : { ...thread.workspace, portBlock };
    changes.putThread("thread.metadata-updated", changed(thread, ctx, { worktreePath: worktree.path, branch: worktree.branch, workspace }));
    run = changes.updateRun(run, { preparation: { ...run.preparation!, step: "setup" } });
  }
  if (setup !== undefined) run = recordSetup(changes, run, setup, "in_progress");
  return changes.done();
}

/**
 * prepared-run.release: the preparation is done. A worktree thread's
 * workspace becomes ready; a rollback marks the checkpoints after its target
 * stale and writes the recovery message. Then the turn begins.
 */
export function decidePreparedRunRelease(state: OrchestrationState, command: PreparedRunReleaseCommand, ctx: DecideContext): Decision {
  const found = preparingRun(state, ctx, command.data.threadId, command.data.runId);
  if (found.kind === "rejected") return found;
  const { changes } = found;
  let run = found.run;
  const preparation = run.preparation!;
  if (preparation.kind === "workspace") {
    const thread = changes.thread(run.threadId)!;
    if (thread.worktreePath === null && thread.workspace?.status === "pending") {
      return reject("invalid_workspace", `thread ${thread.id} has no worktree recorded yet`);
    }
    if (command.data.setup !== undefined) run = recordSetup(changes, run, command.data.setup, "completed");
    if (thread.workspace?.status === "pending") {
      changes.putThread("thread.metadata-updated", changed(thread, ctx, { workspace: { ...thread.workspace, status: "ready" } }));
    }
  } else {
    const checkpoint = preparation.checkpointId === null ? undefined : state.checkpoints.get(preparation.checkpointId);
    if (checkpoint === undefined) return reject("checkpoint_not_found", `the rollback's checkpoint ${preparation.checkpointId ?? "?"} is not recorded`);
    markStaleAfter(changes, checkpoint);
    if (run.messageId !== null) {
      const text = recoveryMessage(checkpoint, command.data.restoredFiles ?? [], command.data.overwritten ?? []);
      changes.addItem(run.threadId, run.id, { type: "user_message", messageId: run.messageId, text, createdBy: "system", creationSource: "api" });
    }
  }
  run = changes.updateRun(run, { preparation: { ...run.preparation!, status: "ready", endedAt: ctx.now } });
  beginTurn(changes, run);
  return changes.done();
}

/** prepared-run.fail: a worktree or setup failed. The run fails before its provider ever starts. */
export function decidePreparedRunFail(state: OrchestrationState, command: PreparedRunFailCommand, ctx: DecideContext): Decision {
  const found = preparingRun(state, ctx, command.data.threadId, command.data.runId, "workspace");
  if (found.kind === "rejected") return found;
  const { changes } = found;
  let run = found.run;
  if (command.data.setup !== undefined) run = recordSetup(changes, run, command.data.setup, "failed");
  const files = command.data.files ?? [];
  const message = files.length === 0 ? command.data.message : `${command.data.message} (files: ${files.join(", ")})`;
  failPreparation(changes, run, { code: command.data.code, message }, "preparation_failed");
  return changes.done();
}

/** checkpoint.rollback.fail: the restore could not apply; the recovery run fails, naming the files in conflict. */
export function decideRollbackFail(state: OrchestrationState, command: CheckpointRollbackFailCommand, ctx: DecideContext): Decision {
  const found = preparingRun(state, ctx, command.data.threadId, command.data.runId, "rollback");
  if (found.kind === "rejected") return found;
  if (found.run.preparation!.checkpointId !== command.data.checkpointId) {
    return reject("preparation_not_active", `run ${found.run.id} restores checkpoint ${found.run.preparation!.checkpointId ?? "?"}, not ${command.data.checkpointId}`);
  }
  const files = command.data.files;
  const message = files.length === 0 ? command.data.message : `${command.data.message} (files in conflict: ${files.join(", ")})`;
  failPreparation(found.changes, found.run, { code: command.data.code, message }, "rollback_failed");
  return found.changes.done();
}

function failPreparation(changes: Changes, run: Run, failure: { code: string; message: string }, endReason: string): void {
  changes.addItem(run.threadId, run.id, { type: "error", code: failure.code, message: failure.message, detail: null });
  endRun(changes, run, { status: "failed", endReason, failure });
  settleTask(changes, run.threadId);
}

/**
 * prepared-run.retry: a run that ended before its preparation finished (it
 * failed, was interrupted, or Loom restarted) gets a new run with its kind
 * and message, prepared again (steps already done, such as a recorded
 * worktree, are not repeated). It starts when the thread is idle, else it queues.
 */
export function decidePreparedRunRetry(state: OrchestrationState, command: PreparedRunRetryCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const failed = state.runs.get(command.data.runId);
  if (failed === undefined || failed.threadId !== thread.id) return reject("run_not_found", `run ${command.data.runId} does not exist in thread ${thread.id}`);
  if (!isTerminalRunStatus(failed.status) || failed.preparation?.status !== "failed") {
    return reject("run_not_retryable", `run ${failed.id} did not end in its preparation (${failed.status}, ${failed.endReason ?? "no end reason"})`);
  }
  const providerId = threadProvider(thread);
  if (providerId === null) return providerNotSet(thread.id);
  const facts = ctx.providers(providerId);
  if (facts === null) return reject("provider_unavailable", `provider instance ${providerId} is not available`);
  const runId = command.data.newRunId ?? ctx.allocate.run();
  if (state.runs.has(runId)) return reject("thread_not_sendable", `run ${runId} already exists`);
  const old = failed.preparation;
  if (old.kind === "rollback") {
    const checkpoint = old.checkpointId === null ? undefined : state.checkpoints.get(old.checkpointId);
    if (checkpoint?.status !== "ready") return reject("checkpoint_not_ready", `checkpoint ${old.checkpointId ?? "?"} can no longer be restored`);
  }
  const changes = new Changes(state, ctx);
  // A rollback keeps its target; a workspace preparation is worked out afresh when the run starts.
  const preparation = old.kind === "rollback" ? { ...old, status: "preparing" as const, step: "restore" as const, setupItemId: null, startedAt: ctx.now, endedAt: null } : undefined;
  const run = newRun(changes, thread, facts, { runId, kind: failed.kind, messageId: failed.messageId, ...(preparation === undefined ? {} : { preparation }) });
  const idle = activeRun(changes, thread.id) === null && !queuedRuns(changes, thread.id).some((queued) => !queued.held);
  if (idle) startRun(changes, run);
  else enqueue(changes, run, "back");
  return changes.done();
}

/** Create or update the setup's command_execution item from a report. */
function recordSetup(changes: Changes, run: Run, setup: SetupReport, status: "in_progress" | "completed" | "failed"): Run {
  const preparation = run.preparation!;
  const body = {
    type: "command_execution" as const,
    command: setup.command,
    cwd: setup.cwd,
    status,
    exitCode: setup.exitCode ?? null,
    durationMs: setup.durationMs ?? null,
    outputPreview: setup.output,
    outputTruncated: setup.outputTruncated,
    outputStreamId: null,
  };
  const existing = preparation.setupItemId === null ? undefined : changes.existingItem(preparation.setupItemId);
  if (existing?.type === "command_execution") {
    changes.updateItem(existing, body);
    return run;
  }
  const item = changes.addItem(run.threadId, run.id, body);
  return changes.updateRun(run, { preparation: { ...preparation, step: "setup", setupItemId: item.id } });
}
