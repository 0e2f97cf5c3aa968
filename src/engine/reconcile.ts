import type { EventStore } from "../store/eventStore.js";
import { isActiveRunStatus } from "../core/run/lifecycle.js";
import type { Orchestrator } from "./orchestrator.js";

export const RESTART_NOTICE = "Loom restarted while this run was active; its provider process was lost, so the run was interrupted.";
/** For a run still in its preparation (worktree, setup, restore): no agent had started. */
export const RESTART_PREPARATION_NOTICE =
  "Loom restarted while this run was being prepared (worktree, setup or restore), so the run was interrupted before its agent started; retry it with prepared-run.retry or send the message again.";

export interface ReconcileReport {
  readonly lostEffects: number;
  readonly interruptedRuns: number;
  readonly releasedSessions: number;
}

/**
 * Boot reconciliation (DESIGN.md invariant 4). Provider processes do not
 * survive a restart, so:
 * 1. process-bound effects left pending or leased by the previous process
 *    fail for good (replay-safe ones stay and are retried);
 * 2. every run that was starting, running or waiting ends `interrupted` with
 *    a system notice saying why — its queued successors then start;
 * 3. sessions still attached are recorded as released.
 * Must run before the outbox worker starts.
 */
export async function reconcileOnBoot(orchestrator: Orchestrator, store: EventStore, bootId: string): Promise<ReconcileReport> {
  let lostEffects = 0;
  for (const status of ["pending", "leased"] as const) {
    for (const row of await store.listOutbox(status)) {
      if (!row.replaySafe && (await store.abandonOutbox(row.id, "lost with the previous server process"))) lostEffects += 1;
    }
  }
  const state = orchestrator.state;
  const active = [...state.runs.values()].filter((run) => isActiveRunStatus(run.status));
  for (const run of active) {
    await orchestrator.dispatch({
      type: "provider-runtime.run-lost",
      commandId: `cmd:boot:${bootId}:run-lost:${run.id}`,
      data: {
        threadId: run.threadId,
        runId: run.id,
        status: "interrupted",
        reason: "server_restarted",
        message: run.preparation?.status === "preparing" ? RESTART_PREPARATION_NOTICE : RESTART_NOTICE,
      },
    });
  }
  const sessions = [...state.providerSessions.values()].filter((session) => session.releasedAt === null);
  for (const session of sessions) {
    await orchestrator.dispatch({
      type: "provider-runtime.session-released",
      commandId: `cmd:boot:${bootId}:session-released:${session.id}`,
      data: { threadId: session.threadId, providerSessionId: session.id, reason: "server_restarted", message: "Loom restarted; the provider session ended with it." },
    });
  }
  return { lostEffects, interruptedRuns: active.length, releasedSessions: sessions.length };
}
