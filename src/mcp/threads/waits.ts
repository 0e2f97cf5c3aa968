import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import { latestRunOf } from "../../engine/queries.js";
import type { McpToolContext } from "../toolkit.js";
import type { ThreadWaitInput } from "../toolkits/threads/schemas.js";
import { type ThreadToolsContext, fail } from "./context.js";
import { liveThreadOrFail } from "./reads.js";
import { runResultText } from "./views.js";

/**
 * Resolve when `done()` holds (checked now and after every commit), or false
 * when `timeoutMs` passes or the call is aborted. Sends a progress
 * notification every progressIntervalMs so clients see the wait is alive.
 */
export function waitUntil(
  ctx: ThreadToolsContext,
  tool: Pick<McpToolContext, "signal" | "progress">,
  timeoutMs: number,
  done: () => boolean,
  describe: () => string,
): Promise<boolean> {
  if (done()) return Promise.resolve(true);
  if (tool.signal.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const started = ctx.clock();
    let ticks = 0;
    const finish = (result: boolean) => {
      unsubscribe();
      clearTimeout(timer);
      clearInterval(progress);
      tool.signal.removeEventListener("abort", onAbort);
      resolve(result);
    };
    const unsubscribe = ctx.orchestrator.onCommitted(() => {
      if (done()) finish(true);
    });
    const timer = setTimeout(() => finish(done()), timeoutMs);
    const progress = setInterval(() => {
      ticks += 1;
      const elapsed = ctx.clock() - started;
      void tool.progress({ progress: ticks, total: undefined, message: `${describe()} (${Math.round(elapsed / 1000)} s)` });
    }, ctx.progressIntervalMs);
    const onAbort = () => finish(false);
    tool.signal.addEventListener("abort", onAbort);
  });
}

/** A wait's time budget: what the caller asked for, never more than the server cap. */
export function waitBudget(ctx: ThreadToolsContext, requested: number | undefined): number {
  return Math.min(requested ?? ctx.maxWaitMs, ctx.maxWaitMs);
}

/**
 * t3_thread_wait: wait for a run to end. Without runId it pins the latest run
 * at call time; an idle thread returns at once. A timeout reports the latest
 * durable status and does not cancel anything.
 */
export async function waitForThread(ctx: ThreadToolsContext, input: ThreadWaitInput, tool: McpToolContext) {
  const thread = liveThreadOrFail(ctx, input.threadId);
  const state = ctx.orchestrator.state;
  const runId = input.runId ?? latestRunOf(state, thread.id)?.id ?? null;
  if (runId === null) {
    return { threadId: thread.id, runId: null, status: "idle", terminal: true, waitTimedOut: false, result: null, error: null, endReason: null };
  }
  const pinned = state.runs.get(runId);
  if (pinned === undefined || pinned.threadId !== thread.id) fail("run_not_found", `run ${runId} does not exist in thread ${thread.id}`);
  const current = () => ctx.orchestrator.state.runs.get(runId)!;
  const finished = await waitUntil(ctx, tool, waitBudget(ctx, input.timeoutMs), () => isTerminalRunStatus(current().status), () => `run ${runId} is ${current().status}`);
  const run = current();
  return {
    threadId: thread.id,
    runId,
    status: run.status,
    terminal: isTerminalRunStatus(run.status),
    waitTimedOut: !finished,
    result: runResultText(ctx.orchestrator.state, run),
    error: run.failure?.message ?? null,
    endReason: run.endReason,
  };
}
