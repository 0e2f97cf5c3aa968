import { EFFECTS, EffectKind } from "../contracts/effects.js";
import { isTerminalRunStatus } from "../contracts/entities/runs.js";
import type { OutboxRow } from "../contracts/envelopes.js";
import type { OnCrashPolicy, Run } from "../contracts/entities/runs.js";
import type { EventStore } from "../store/eventStore.js";
import { isActiveRunStatus } from "../core/run/lifecycle.js";
import type { Orchestrator } from "./orchestrator.js";

export const RESTART_NOTICE = "Loom restarted while this run was active; its provider process was lost, so the run was interrupted.";
/** For a run still in its preparation (worktree, setup, restore): no agent had started. */
export const RESTART_PREPARATION_NOTICE =
  "Loom restarted while this run was being prepared (worktree, setup or restore), so the run was interrupted before its agent started; retry it with prepared-run.retry or send the message again.";

/** A provider instance's configured onCrash (config.json `providers[].onCrash`), when it sets one. */
export type InstanceCrashPolicy = (providerInstanceId: string | null) => OnCrashPolicy | undefined;

/** The lookup over configured provider instances (each with its optional onCrash). */
export function instanceCrashPolicy(instances: readonly { readonly id: string; readonly onCrash?: OnCrashPolicy }[]): InstanceCrashPolicy {
  const policies = new Map(instances.flatMap((instance) => (instance.onCrash === undefined ? [] : [[instance.id, instance.onCrash] as const])));
  return (providerInstanceId) => (providerInstanceId === null ? undefined : policies.get(providerInstanceId));
}

export interface ReconcileReport {
  readonly lostEffects: number;
  /** Runs started again as a new attempt (onCrash resume, docs/runs.md "Work after a crash"). */
  readonly resumedRuns: number;
  /** Steers lost after their turn had ended, re-sent as follow-up runs. */
  readonly resentSteers: number;
  readonly interruptedRuns: number;
  readonly releasedSessions: number;
}

/**
 * Boot reconciliation (DESIGN.md invariant 4). Provider processes do not
 * survive a restart, so:
 * 1. process-bound effects left pending or leased by the previous process
 *    fail for good (replay-safe ones stay and are retried); a lost steer
 *    whose run had already ended never reached any turn, so its message is
 *    re-sent as a follow-up run (as the session manager does when a steer
 *    finds its turn gone), and so is one whose run step 2 resumes;
 * 2. every run that was starting, running or waiting starts again as a new
 *    attempt when its onCrash policy says resume (the decider weighs the
 *    delegation's, the instance's and the default, src/core/run/crashResume.ts),
 *    or else ends `interrupted` with a system notice saying why — its queued
 *    successors then start;
 * 3. the task holds of the previous process's waits end (their runs' ends
 *    took most of them; a caller without a run leaves the rest);
 * 4. sessions still attached are recorded as released.
 * Must run before the outbox worker starts.
 */
export async function reconcileOnBoot(orchestrator: Orchestrator, store: EventStore, bootId: string, onCrash: InstanceCrashPolicy = () => undefined): Promise<ReconcileReport> {
  const rows = [...(await store.listOutbox("pending")), ...(await store.listOutbox("leased"))];
  const { lostEffects, resentSteers: resentForEnded, lost } = await abandonProcessBoundEffects(orchestrator, store, rows, "lost with the previous server process");
  const state = orchestrator.state;
  const active = [...state.runs.values()].filter((run) => isActiveRunStatus(run.status));
  const { resumedRuns, interruptedRuns } = await loseRuns(orchestrator, active, {
    commandId: (run) => `cmd:boot:${bootId}:run-lost:${run.id}`,
    reason: "server_restarted",
    message: (run) => (run.preparation?.status === "preparing" ? RESTART_PREPARATION_NOTICE : RESTART_NOTICE),
    onCrash,
  });
  const resentSteers = resentForEnded + (await resendResumedSteers(orchestrator, lost));
  // The waits of the previous process answered nobody: their task holds end, so the results they held go out as notices.
  await releaseLostHolds(orchestrator, null, `cmd:boot:${bootId}:waits-lost`);
  const sessions = [...state.providerSessions.values()].filter((session) => session.releasedAt === null);
  for (const session of sessions) {
    await orchestrator.dispatch({
      type: "provider-runtime.session-released",
      commandId: `cmd:boot:${bootId}:session-released:${session.id}`,
      data: { threadId: session.threadId, providerSessionId: session.id, reason: "server_restarted", message: "Loom restarted; the provider session ended with it." },
    });
  }
  return { lostEffects, resumedRuns, resentSteers, interruptedRuns, releasedSessions: sessions.length };
}

/** End the task holds `holder` served (every holder when null), if any: their waits died with their process. */
export async function releaseLostHolds(orchestrator: Orchestrator, holder: string | null, commandId: string): Promise<void> {
  const lost = [...orchestrator.state.tasks.values()].some((task) => task.heldBy?.some((hold) => holder === null || hold.holder === holder));
  if (lost) await orchestrator.dispatch({ type: "delegated-task.waits-lost", commandId, data: { holder } });
}

/**
 * Hand every run whose process was lost to `provider-runtime.run-lost` with
 * its instance's onCrash: the decider resumes it or ends it `interrupted`.
 * Shared by boot reconciliation and the takeover of a lost node; counts the
 * accepted ones by what became of them.
 */
export async function loseRuns(
  orchestrator: Orchestrator,
  runs: readonly Run[],
  how: { readonly commandId: (run: Run) => string; readonly reason: string; readonly message: (run: Run) => string; readonly onCrash: InstanceCrashPolicy },
): Promise<{ resumedRuns: number; interruptedRuns: number }> {
  let resumedRuns = 0;
  let interruptedRuns = 0;
  for (const run of runs) {
    const instanceOnCrash = how.onCrash(run.providerInstanceId);
    const receipt = await orchestrator.dispatch({
      type: "provider-runtime.run-lost",
      commandId: how.commandId(run),
      data: { threadId: run.threadId, runId: run.id, status: "interrupted", reason: how.reason, message: how.message(run), ...(instanceOnCrash === undefined ? {} : { instanceOnCrash }) },
    });
    if (receipt.status !== "accepted") continue;
    const now = orchestrator.state.runs.get(run.id);
    if (now !== undefined && isActiveRunStatus(now.status)) resumedRuns += 1;
    else interruptedRuns += 1;
  }
  return { resumedRuns, interruptedRuns };
}

/**
 * Fail for good the process-bound rows among `rows` (replay-safe ones stay
 * and are retried by whoever claims them next), and re-send as a follow-up
 * run the message of every lost steer whose run had already ended. Shared by
 * boot reconciliation and the takeover of a lost node (nodeTakeover.ts).
 */
export async function abandonProcessBoundEffects(
  orchestrator: Orchestrator,
  store: EventStore,
  rows: readonly OutboxRow[],
  why: string,
): Promise<{ lostEffects: number; resentSteers: number; lost: readonly OutboxRow[] }> {
  let lostEffects = 0;
  const lost: OutboxRow[] = [];
  for (const row of rows) {
    if (row.replaySafe || !(await store.abandonOutbox(row.id, why))) continue;
    lostEffects += 1;
    lost.push(row);
  }
  // A steer of a run still active is part of the run the caller ends or resumes next (resendResumedSteers).
  const resentSteers = await resendLostSteers(orchestrator, lost, (run) => isTerminalRunStatus(run.status));
  return { lostEffects, resentSteers, lost };
}

/**
 * After the lost runs were ended or resumed: the message of every lost
 * steer whose run started again (onCrash resume) is re-sent as a follow-up
 * run, queued behind the resumed one, since the new attempt's input is the
 * run's own message and the steer never reached any agent. A steer of a run
 * that ended here is part of that end, with its notice.
 */
export function resendResumedSteers(orchestrator: Orchestrator, lost: readonly OutboxRow[]): Promise<number> {
  return resendLostSteers(orchestrator, lost, (run) => run.resumes !== undefined && isActiveRunStatus(run.status));
}

async function resendLostSteers(orchestrator: Orchestrator, rows: readonly OutboxRow[], resend: (run: Run) => boolean): Promise<number> {
  let resentSteers = 0;
  for (const row of rows) {
    if (row.kind !== EffectKind.steerTurn) continue;
    const steer = EFFECTS[EffectKind.steerTurn].payload.safeParse(row.payload);
    const run = steer.success ? orchestrator.state.runs.get(steer.data.runId) : undefined;
    if (!steer.success || run === undefined || !resend(run)) continue;
    const { threadId, messageId, text } = steer.data;
    const resent = await orchestrator.dispatch({
      type: "message.dispatch",
      commandId: `cmd:resteer:${row.id}`,
      data: { threadId, text, mode: "queue", messageId: `${messageId}:resent`, runKind: "system_follow_up", createdBy: "system", creationSource: "api" },
    });
    if (resent.status === "accepted") resentSteers += 1;
  }
  return resentSteers;
}
