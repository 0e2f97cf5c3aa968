import { type AppContext, freshUuid } from "../context.js";

/** What a wait hands back when it ends: the tasks whose result it took, and those whose pending question it owes its run. */
export interface HoldOutcome {
  readonly took: readonly string[];
  readonly owed: readonly string[];
}

export interface TaskHolds {
  /** Record the wait's end (idempotent): what it took is acknowledged, what it owes is recorded for its run. */
  release(outcome: HoldOutcome): Promise<void>;
}

/**
 * Record that a wait holds `taskIds` before it looks at them
 * (docs/delegation.md, "Waits and notices"): from then on no node delivers
 * their result or blocking question as a notice, and the wait's end is one
 * recorded decision that takes what the wait handed over. `runId` is the
 * caller's run, whose end releases the hold too; the holder is this node,
 * whose loss releases it. A hold that cannot be recorded (the run ended
 * meanwhile) leaves the wait unheld; its end still acknowledges what it took
 * if no notice went out first.
 */
export async function holdTasks(ctx: AppContext, taskIds: readonly string[], runId: string | null): Promise<TaskHolds> {
  const waitId = `wait:${freshUuid(ctx)}`;
  const ids = [...taskIds];
  if (ids.length > 0) {
    await ctx.orchestrator
      .dispatch({ type: "delegated-task.wait-hold", commandId: `cmd:wait-hold:${waitId}`, data: { waitId, taskIds: ids, runId, holder: ctx.nodeId } })
      .catch(() => null);
  }
  let released = false;
  return {
    release: async ({ took, owed }) => {
      if (released || ids.length === 0) return;
      released = true;
      const data = { waitId, taskIds: ids, took: [...took], owed: [...owed] };
      await ctx.orchestrator.dispatch({ type: "delegated-task.wait-release", commandId: `cmd:wait-release:${waitId}`, data });
    },
  };
}
