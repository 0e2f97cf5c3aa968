import { type ContextHandoff, HandoffStrategy } from "../../contracts/entities/contextTransfers.js";
import type { Run } from "../../contracts/entities/runs.js";
import type { AppThread } from "../../contracts/thread.js";
import type { TurnItemOf } from "../../contracts/turnItems.js";
import type { Changes } from "../run/changes.js";
import { type Transcript, buildTranscript, transcriptRuns } from "./transcript.js";

/**
 * Context that reaches a run's input: a pending handoff (provider.switch) is
 * built and attached when the first run on its target starts; pending fork
 * and merge-back transfers are attached to the receiving thread's next run.
 * The session manager reads them from the state when it starts the turn
 * (src/engine/runInput.ts). A run that ends without ever starting (lost to a
 * restart, interrupted before start) gives its context back, so the next run
 * receives it instead.
 */

/** The transfer kinds a thread's next run receives. */
const NEXT_RUN_KINDS: ReadonlySet<string> = new Set(["fork", "merge_back"]);

/**
 * The newest ordinal of a run of the thread that ran on `providerInstanceId`
 * (it started there), or 0 when that instance never worked on the thread.
 * Everything up to that run is in the instance's own context.
 */
export function lastSeenOrdinal(runs: readonly Run[], providerInstanceId: string): number {
  let seen = 0;
  for (const run of runs) {
    if (run.providerInstanceId === providerInstanceId && run.startedAt !== null && run.ordinal > seen) seen = run.ordinal;
  }
  return seen;
}

/** The runs `providerInstanceId` has not seen: after its last seen run, not queued, not `except`. */
export function unseenRuns(runs: readonly Run[], providerInstanceId: string, except: string | null = null): Run[] {
  const seen = lastSeenOrdinal(runs, providerInstanceId);
  return runs.filter((run) => run.ordinal > seen && run.status !== "queued" && run.id !== except);
}

/** Where a receiver can read the full text of a thread. */
export function readMoreOf(threadId: string): string {
  return `t3_thread_read on thread ${threadId}`;
}

function handoffInstructions(thread: AppThread, handoff: ContextHandoff, seen: number): string {
  const from = handoff.sourceProviderInstanceId === null ? "another provider" : `provider ${handoff.sourceProviderInstanceId}`;
  const intro =
    handoff.strategy === HandoffStrategy.deltaSinceTargetLastSeen
      ? `Thread "${thread.title}" ran on ${from} since you last worked on it (through run ${seen}).`
      : `Thread "${thread.title}" ran on ${from} before it moved to you.`;
  return `${intro} Below is the transcript of the runs you have not seen. Continue the thread from it; the new message follows after this context.`;
}

/** The handoff transcript of `runs` for the run that delivers it. */
export function handoffTranscript(changes: Changes, thread: AppThread, handoff: ContextHandoff, runs: readonly Run[]): Transcript {
  const seen = lastSeenOrdinal(changes.threadRuns(thread.id), handoff.targetProviderInstanceId);
  const first = runs[0]!.ordinal;
  const last = runs[runs.length - 1]!.ordinal;
  return buildTranscript({
    tag: "handoff",
    attributes: [
      ["id", handoff.id],
      ["strategy", handoff.strategy],
      ["thread", thread.id],
      ["from", handoff.sourceProviderInstanceId ?? "none"],
      ["to", handoff.targetProviderInstanceId],
      ["runs", first === last ? `${first}` : `${first}-${last}`],
    ],
    instructions: handoffInstructions(thread, handoff, seen),
    runs: transcriptRuns(changes.state.turnItems.get(thread.id) ?? [], runs),
    readMore: readMoreOf(thread.id),
  });
}

/** The handoff item of the thread's timeline for this handoff, if any. */
export function handoffItem(changes: Changes, handoff: ContextHandoff): TurnItemOf<"handoff"> | undefined {
  // One this decision added (a switch and the run it starts in one decision) or updated comes first.
  for (const item of changes.decidedItems()) {
    if (item.type === "handoff" && item.handoffId === handoff.id) return item;
  }
  const items = changes.state.turnItems.get(handoff.threadId) ?? [];
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item?.type === "handoff" && item.handoffId === handoff.id) return item;
  }
  return undefined;
}

/** Record a handoff's new state and keep its timeline item's status in step. */
export function putHandoffWithItem(changes: Changes, handoff: ContextHandoff): ContextHandoff {
  changes.putHandoff(handoff);
  const item = handoffItem(changes, handoff);
  if (item !== undefined && item.status !== handoff.status) changes.updateItem(item, { status: handoff.status });
  return handoff;
}

/** Attach the thread's pending context to `run`, which is starting now. */
export function deliverContext(changes: Changes, run: Run): void {
  const now = changes.ctx.now;
  for (const handoff of changes.threadHandoffs(run.threadId)) {
    if (handoff.status !== "pending" || handoff.targetProviderInstanceId !== run.providerInstanceId) continue;
    const thread = changes.state.threads.get(run.threadId);
    const runs = unseenRuns(changes.threadRuns(run.threadId), handoff.targetProviderInstanceId, run.id);
    if (thread === undefined || runs.length === 0) {
      putHandoffWithItem(changes, { ...handoff, status: "superseded", updatedAt: now });
      continue;
    }
    const transcript = handoffTranscript(changes, thread, handoff, runs);
    putHandoffWithItem(changes, {
      ...handoff,
      status: "ready",
      coveredRunOrdinals: transcript.covered!,
      summaryText: transcript.text,
      history: transcript.history,
      delivery: { runId: run.id, deliveredAt: now },
      updatedAt: now,
    });
  }
  for (const transfer of changes.threadTransfers(run.threadId)) {
    if (transfer.threadId !== run.threadId || transfer.status !== "pending" || !NEXT_RUN_KINDS.has(transfer.kind)) continue;
    changes.putTransfer({ ...transfer, status: "consumed", consumedAt: now, deliveredRunId: run.id, updatedAt: now });
  }
}

/**
 * `run` ended. If it never started on its provider, nothing read the context
 * attached to it: the handoff goes back to pending (rebuilt for the next run)
 * and the transfers back to pending.
 */
export function releaseContext(changes: Changes, run: Run): void {
  if (run.startedAt !== null) return;
  const now = changes.ctx.now;
  for (const handoff of changes.threadHandoffs(run.threadId)) {
    if (handoff.status !== "ready" || handoff.delivery?.runId !== run.id) continue;
    putHandoffWithItem(changes, { ...handoff, status: "pending", summaryText: null, history: [], delivery: null, updatedAt: now });
  }
  for (const transfer of changes.threadTransfers(run.threadId)) {
    if (transfer.threadId !== run.threadId || transfer.status !== "consumed" || transfer.deliveredRunId !== run.id) continue;
    changes.putTransfer({ ...transfer, status: "pending", consumedAt: null, deliveredRunId: null, updatedAt: now });
  }
}
