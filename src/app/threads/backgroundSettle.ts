import { RunStatus } from "../../contracts/entities/runs.js";
import { joinId } from "../../core/ids.js";
import { activeRunOf } from "../../engine/queries.js";
import type { AppContext } from "../context.js";
import { execute } from "../context.js";
import type { StreamHandle } from "../orchestration/subscriptions.js";

/** A run settling background work, and when Loom stops waiting for it (docs/runs.md, "Background work"). */
export interface SettlingRun {
  readonly threadId: string;
  readonly runId: string;
  /** ISO-8601: the settle is due then. */
  readonly settleBy: string;
}

/** Every run settling background work: what the background settler's timer is armed for. */
export function settlingRuns(ctx: AppContext): SettlingRun[] {
  const due: SettlingRun[] = [];
  for (const run of ctx.orchestrator.state.runs.values()) {
    if (run.status === RunStatus.settlingBackgroundWork && run.backgroundSettleBy !== undefined) due.push({ threadId: run.threadId, runId: run.id, settleBy: run.backgroundSettleBy });
  }
  return due;
}

/**
 * `onChange` hears every later start or end of a thread's run settling
 * background work, on any node sharing the log. Resolves once the feed is
 * live.
 */
export async function followSettlingRuns(ctx: AppContext, onChange: () => void): Promise<StreamHandle> {
  const after = await ctx.orchestrator.readCommitted((state) => state.lastSequence);
  const settling = new Set(settlingRuns(ctx).map((run) => run.threadId));
  let closed = false;
  // The state has applied the event when it arrives: the thread's active run says whether it settles now.
  const subscription = ctx.orchestrator.follow(after, (event) => {
    if (closed || event.type !== "run.updated") return;
    const now = activeRunOf(ctx.orchestrator.state, event.streamId)?.status === RunStatus.settlingBackgroundWork;
    if (now === settling.has(event.streamId)) return;
    if (now) settling.add(event.streamId);
    else settling.delete(event.streamId);
    onChange();
  });
  await subscription.caughtUp;
  return {
    close() {
      closed = true;
      subscription.close();
    },
  };
}

/**
 * The run's settle bound passed: Loom stops waiting, cancels the work still
 * pending and completes the run with a notice. The command id is derived
 * from the run, so a retry, a restart or a second node settle it once; a
 * run that settled meanwhile refuses it (run_not_settling).
 */
export async function settleTimedOut(ctx: AppContext, due: SettlingRun): Promise<void> {
  await execute(ctx, {
    type: "thread.background-work.settle",
    commandId: joinId("background-settle", due.threadId, due.runId),
    data: { threadId: due.threadId, runId: due.runId, timedOut: true },
  });
}
