import type { OutboxRow } from "../contracts/envelopes.js";
import { isActiveRunStatus } from "../core/run/lifecycle.js";
import type { EventStore } from "../store/eventStore.js";
import type { Orchestrator } from "./orchestrator.js";
import { type InstanceCrashPolicy, abandonProcessBoundEffects, loseRuns, releaseLostHolds, resendResumedSteers } from "./reconcile.js";

export const NODE_LOST_NOTICE = "The Loom node running this run stopped heartbeating; its provider process was lost with it, so the run was interrupted (node_lost).";
export const NODE_LOST_REASON = "node_lost";

/** What a lost node held: the provider sessions of its agents (from its live credentials). */
export interface LostNodeHoldings {
  readonly nodeId: string;
  /** Provider sessions (and their threads) whose agent process ran on the node. */
  readonly sessions: readonly { readonly threadId: string; readonly providerSessionId: string }[];
}

export interface TakeoverReport {
  readonly nodeId: string;
  readonly lostEffects: number;
  readonly resentSteers: number;
  readonly interruptedRuns: number;
  /** Runs started again as a new attempt, on whichever node claims their start (onCrash resume). */
  readonly resumedRuns: number;
  readonly releasedSessions: number;
}

/**
 * Take the work of a lost node over (docs/postgres.md "When a node dies"),
 * the way boot reconciliation does for a restarted single node, but only for
 * what the lost node carried:
 * 1. process-bound effects its outbox worker had leased fail for good
 *    (replay-safe ones are claimed again once their lease lapses); a lost
 *    steer whose run had ended is re-sent as a follow-up run;
 * 2. every active run on a thread whose agent ran on the node, or whose lost
 *    effect belonged to it, starts again as a new attempt when its onCrash
 *    policy says resume (its start is claimed by whichever live node's outbox
 *    worker comes first), or ends `interrupted` (reason node_lost) with a
 *    notice — queued successors then start on whichever node claims them, and
 *    the delegation reactor notifies parents of ended tasks as after a restart;
 * 3. the task holds of the waits it served end;
 * 4. its provider sessions are recorded as released.
 * Command ids are derived from the lost node's id, so two nodes taking the
 * same node over write everything once.
 */
export async function takeOverLostNode(orchestrator: Orchestrator, store: EventStore, holdings: LostNodeHoldings, onCrash: InstanceCrashPolicy = () => undefined): Promise<TakeoverReport> {
  const { nodeId } = holdings;
  const leased = (await store.listOutbox("leased")).filter((row) => row.leaseOwner === nodeId);
  const { lostEffects, resentSteers: resentForEnded, lost } = await abandonProcessBoundEffects(orchestrator, store, leased, `lost with node ${nodeId}`);
  const state = orchestrator.state;
  const threads = new Set(holdings.sessions.map((session) => session.threadId));
  const runIds = new Set(lost.map(runIdOf).filter((runId): runId is string => runId !== null));
  const active = [...state.runs.values()].filter((run) => isActiveRunStatus(run.status) && (threads.has(run.threadId) || runIds.has(run.id)));
  const { resumedRuns, interruptedRuns } = await loseRuns(orchestrator, active, {
    commandId: (run) => `cmd:node-lost:${nodeId}:run-lost:${run.id}`,
    reason: NODE_LOST_REASON,
    message: () => NODE_LOST_NOTICE,
    onCrash,
  });
  const resentSteers = resentForEnded + (await resendResumedSteers(orchestrator, lost));
  // Waits the lost node served answered nobody: their holds end, whichever run they blocked.
  await releaseLostHolds(orchestrator, nodeId, `cmd:node-lost:${nodeId}:waits-lost`);
  let releasedSessions = 0;
  for (const { threadId, providerSessionId } of holdings.sessions) {
    const session = orchestrator.state.providerSessions.get(providerSessionId);
    if (session === undefined || session.releasedAt !== null) continue;
    const receipt = await orchestrator.dispatch({
      type: "provider-runtime.session-released",
      commandId: `cmd:node-lost:${nodeId}:session-released:${providerSessionId}`,
      data: { threadId, providerSessionId, reason: "crashed", message: `Loom node ${nodeId} stopped heartbeating; the provider session ended with it.` },
    });
    if (receipt.status === "accepted") releasedSessions += 1;
  }
  return { nodeId, lostEffects, resentSteers, interruptedRuns, resumedRuns, releasedSessions };
}

function runIdOf(row: OutboxRow): string | null {
  const payload = row.payload as { readonly runId?: unknown } | null;
  return payload !== null && typeof payload === "object" && typeof payload.runId === "string" ? payload.runId : null;
}
