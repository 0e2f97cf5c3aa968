import { isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type { ThreadWaitInput, ThreadWaitOutput } from "../../contracts/tools/threadTools.js";
import { latestRunOf } from "../../engine/queries.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { type WaitContext, waitBudget, waitUntil } from "../waits.js";
import { liveThreadOrFail } from "./authorize.js";
import { withRecordedWait } from "./recordedWait.js";
import { runResultText } from "./views.js";
import { RunAcrossLimits } from "../limits/limitWaits.js";

/**
 * t3_thread_wait: wait for a run to end. Without runId it pins the latest run
 * at call time; an idle thread returns at once. A timeout reports the latest
 * durable status and does not cancel anything. An agent's wait that blocks is
 * recorded on its active run (blockedOnThreadWait).
 */
export async function waitForThread(ctx: AppContext, input: ThreadWaitInput, wait: WaitContext, caller?: Caller): Promise<ThreadWaitOutput> {
  const thread = liveThreadOrFail(ctx, input.threadId);
  const state = ctx.orchestrator.state;
  const runId = input.runId ?? latestRunOf(state, thread.id)?.id ?? null;
  if (runId === null) {
    return { threadId: thread.id, runId: null, status: "idle", terminal: true, waitTimedOut: false, result: null, error: null, endReason: null };
  }
  const pinned = state.runs.get(runId);
  if (pinned === undefined || pinned.threadId !== thread.id) fail("run_not_found", `run ${runId} does not exist in thread ${thread.id}`);
  // A run a usage limit stopped is waited through: its work resumes after the reset, in the run this follows.
  const tracked = new RunAcrossLimits(() => ctx.orchestrator.state, thread.id, runId);
  const ended = () => tracked.ended();
  const waitForEnd = () => waitUntil(ctx, wait, waitBudget(ctx, input.timeoutMs), ended, () => tracked.limit()?.text ?? `run ${tracked.current().id} is ${tracked.current().status}`);
  const finished = ended() || caller === undefined ? await waitForEnd() : await withRecordedWait(ctx, caller, "t3_thread_wait", thread.id, waitForEnd);
  const run = tracked.current();
  const limit = finished ? null : tracked.limit();
  return {
    threadId: thread.id,
    runId: run.id,
    status: run.status,
    terminal: isTerminalRunStatus(run.status) && limit === null,
    waitTimedOut: !finished,
    result: runResultText(ctx.orchestrator.timeline, run),
    error: limit === null ? (run.failure?.message ?? null) : null,
    endReason: run.endReason,
    ...(limit === null ? {} : { limitRecovery: limit }),
  };
}
