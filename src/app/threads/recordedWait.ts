import { activeRunOf } from "../../engine/queries.js";
import type { Caller } from "../caller.js";
import { type AppContext, freshUuid } from "../context.js";

/**
 * Run `wait` as a recorded wait of the calling agent: while it blocks, an open
 * `tool_call` node on the caller's active run says so durably (thread
 * summaries read it as blockedOnThreadWait; src/core/run/waits.ts). Owners
 * and threads without an active run wait unrecorded. Recording never fails
 * the wait: a refused or failed record only loses the marker.
 */
export async function withRecordedWait<T>(ctx: AppContext, caller: Caller, label: string, waitingOn: string, wait: () => Promise<T>): Promise<T> {
  if (caller.kind !== "agent") return wait();
  const run = activeRunOf(ctx.orchestrator.state, caller.threadId);
  if (run === null) return wait();
  const nodeId = `node:${freshUuid(ctx)}`;
  const threadId = caller.threadId;
  const started = await ctx.orchestrator
    .dispatch({ type: "thread-wait.started", commandId: `cmd:wait-started:${nodeId}`, data: { threadId, runId: run.id, nodeId, label, waitingOn } })
    .catch(() => null);
  if (started?.status !== "accepted") return wait();
  try {
    return await wait();
  } finally {
    // Refused when the run ended meanwhile: its end already closed the wait.
    await ctx.orchestrator.dispatch({ type: "thread-wait.ended", commandId: `cmd:wait-ended:${nodeId}`, data: { threadId, nodeId } }).catch(() => null);
  }
}
