import type { AppContext } from "../context.js";
import type { StreamHandle } from "./subscriptions.js";

/**
 * Follow the committed log for events of some types: every such event
 * committed after the call, by this node or any other sharing the log
 * (`Orchestrator.follow` from a settled point). One commit's events arrive
 * back to back, so a burst of them is announced once, with the last one's
 * sequence, after the state has applied it. Resolves once the feed is live.
 */
export async function followChanges(ctx: AppContext, types: ReadonlySet<string>, onChange: (sequence: number) => void): Promise<StreamHandle> {
  const after = await ctx.orchestrator.readCommitted((state) => state.lastSequence);
  let closed = false;
  let pending: number | null = null;
  const subscription = ctx.orchestrator.follow(after, (event) => {
    if (closed || !types.has(event.type)) return;
    const queued = pending !== null;
    pending = event.sequence;
    if (queued) return;
    queueMicrotask(() => {
      const sequence = pending;
      pending = null;
      if (!closed && sequence !== null) onChange(sequence);
    });
  });
  await subscription.caughtUp;
  return {
    close() {
      closed = true;
      subscription.close();
    },
  };
}
