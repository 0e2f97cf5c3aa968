import type { CheckpointRollbackCommand } from "../../contracts/commands/workspaceCommands.js";
import { EffectKind } from "../../contracts/effects.js";
import type { Checkpoint, CheckpointFile } from "../../contracts/entities/checkpoints.js";
import { checkpointEvent, checkpointRollbackEvent } from "../../contracts/events.js";
import { type DecideContext, type Decision, reject } from "../decision.js";
import { settleTask } from "../delegation/settle.js";
import { Changes } from "../run/changes.js";
import { activeRun, endRun, enqueue, newRun, requestInterrupt, startRun, providerNotSet, threadProvider, turnFacts } from "../run/lifecycle.js";
import type { OrchestrationState } from "../state.js";
import { liveThread } from "../thread/guards.js";
import { isPreparing } from "./turns.js";

/** Most restored files the recovery message names one by one. */
const LISTED_FILES = 50;

/**
 * checkpoint.rollback: restore the thread's workspace to one of its ready
 * checkpoints. The active run is interrupted first; a rollback_recovery run
 * is queued at the front (or starts when the thread is idle). That run's
 * preparation restores the files once nothing else runs in the thread, after
 * the interrupted turn's post-turn checkpoint, then its turn tells the agent
 * what was rolled back. The restore writes only the working tree the
 * checkpoint's scope snapshots.
 */
export function decideCheckpointRollback(state: OrchestrationState, command: CheckpointRollbackCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const checkpoint = state.checkpoints.get(command.data.checkpointId);
  if (checkpoint === undefined || checkpoint.threadId !== thread.id) {
    return reject("checkpoint_not_found", `checkpoint ${command.data.checkpointId} does not exist in thread ${thread.id}`);
  }
  if (checkpoint.status !== "ready") {
    return reject("checkpoint_not_ready", `checkpoint ${checkpoint.id} is ${checkpoint.status}${checkpoint.reason ? ` (${checkpoint.reason})` : ""}: there is nothing to restore`);
  }
  const changes = new Changes(state, ctx);
  const pending = changes.threadRuns(thread.id).find((run) => (run.status === "queued" || isPreparing(run)) && run.preparation?.kind === "rollback");
  if (pending !== undefined) return reject("rollback_in_progress", `run ${pending.id} is already rolling thread ${thread.id} back`);
  const providerId = threadProvider(thread);
  if (providerId === null) return providerNotSet(thread.id);
  const facts = ctx.providers(providerId);
  if (facts === null) return reject("provider_unavailable", `provider instance ${providerId} is not available`);
  const runId = command.data.recoveryRunId ?? ctx.allocate.run();
  if (state.runs.has(runId)) return reject("thread_not_sendable", `run ${runId} already exists`);

  const force = command.data.force ?? false;
  const active = activeRun(changes, thread.id);
  changes.events.push(
    checkpointRollbackEvent({
      threadId: thread.id,
      checkpointId: checkpoint.id,
      scopeId: checkpoint.scopeId,
      ordinalWithinScope: checkpoint.ordinalWithinScope,
      interruptedRunId: active?.id ?? null,
      recoveryRunId: runId,
      force,
      requestedAt: ctx.now,
    }),
  );
  const recovery = newRun(changes, thread, facts, {
    runId,
    kind: "rollback_recovery",
    messageId: ctx.allocate.message(),
    preparation: { kind: "rollback", status: "preparing", step: "restore", setupItemId: null, checkpointId: checkpoint.id, force, startedAt: ctx.now, endedAt: null },
  });
  if (active === null) {
    startRun(changes, recovery);
    return changes.done();
  }
  enqueue(changes, recovery, "front");
  if (active.interruptRequestedAt === null) {
    const reason = `rolling back to checkpoint #${checkpoint.ordinalWithinScope}`;
    if (turnFacts(ctx, active)?.capabilities.interrupt === false) {
      // The provider cannot stop a turn: end it here and release its session, as a Stop does.
      changes.addItem(thread.id, active.id, { type: "system_notice", level: "warning", text: `Stopped for a rollback. The provider cannot interrupt a turn, so its session was released.` });
      endRun(changes, active, { status: "interrupted", endReason: "stopped_by_session_release" });
      changes.effect(EffectKind.releaseSession, thread.id, { threadId: thread.id, reason: "detached", message: "released to stop a turn for a rollback" });
      settleTask(changes, thread.id);
    } else {
      requestInterrupt(changes, active, "user", reason);
    }
  }
  return changes.done();
}

/** Every ready checkpoint of the scope after `target` is superseded by the rollback; its timeline item says so too. */
export function markStaleAfter(changes: Changes, target: Checkpoint): void {
  const superseded = new Set<string>();
  const threads = new Set<string>();
  for (const id of changes.state.scopeCheckpoints.get(target.scopeId) ?? []) {
    const checkpoint = changes.state.checkpoints.get(id)!;
    if (checkpoint.ordinalWithinScope > target.ordinalWithinScope && checkpoint.status === "ready") {
      changes.events.push(checkpointEvent({ ...checkpoint, status: "stale", updatedAt: changes.ctx.now }));
      superseded.add(checkpoint.id);
      threads.add(checkpoint.threadId);
    }
  }
  for (const threadId of threads) {
    for (const item of changes.state.turnItems.get(threadId) ?? []) {
      if (item?.type === "checkpoint" && superseded.has(item.checkpointId)) changes.updateItem(item, { status: "stale" });
    }
  }
}

/** What a rollback_recovery turn tells the agent: what was restored, and what is gone. */
export function recoveryMessage(checkpoint: Checkpoint, restored: readonly CheckpointFile[], overwritten: readonly string[]): string {
  const lines = [
    `The workspace was rolled back to checkpoint #${checkpoint.ordinalWithinScope} (taken ${checkpoint.trigger === "turn_start" ? "before" : "after"} run ${checkpoint.appRunOrdinal}).`,
    "Work done after that checkpoint is no longer in the files; continue from the restored state.",
  ];
  if (restored.length === 0) {
    lines.push("No file differed from the checkpoint.");
  } else {
    lines.push(`Files restored (${restored.length}):`);
    for (const file of restored.slice(0, LISTED_FILES)) lines.push(`- ${file.path}: ${describeRestore(file)}`);
    if (restored.length > LISTED_FILES) lines.push(`- ... and ${restored.length - LISTED_FILES} more`);
  }
  if (overwritten.length > 0) lines.push(`Uncaptured changes overwritten: ${overwritten.join(", ")}.`);
  return lines.join("\n");
}

/** A restore entry is the change from the files as they were to the checkpoint. */
function describeRestore(file: CheckpointFile): string {
  switch (file.kind) {
    case "added":
      return "recreated";
    case "deleted":
      return "removed";
    case "renamed":
      return `renamed back from ${file.previousPath ?? "?"}`;
    case "modified":
      return "restored";
    default: {
      const exhaustive: never = file.kind;
      return exhaustive;
    }
  }
}
