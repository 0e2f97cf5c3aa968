import { type Run, isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type { LimitRecoveryView } from "../../contracts/tools/toolOutputs.js";
import { FAILOVER_TITLE } from "../../core/run/limitFailover.js";
import { LIMIT_RESUME_TITLE } from "../../core/run/limitRecovery.js";
import { runsOf } from "../../engine/queries.js";
import type { AppContext } from "../context.js";
import { limitRecoveryView } from "../limits/limitView.js";

/**
 * The run a wait served as a task is about now (docs/mcp.md, "Tasks through
 * a usage limit"), read from the log's facts alone so that any node answers
 * it, after a restart too: the pinned run, or, when a usage limit stopped it
 * and its work resumed (at the reset, or moved to another instance), the run
 * that resumed it, and so on. The plain t3_thread_wait follows the same runs
 * as it watches them (src/app/limits/limitWaits.ts).
 */
export interface RunOfWork {
  readonly run: Run;
  /** The limit the run waits on, resuming by itself; null when none holds it. */
  readonly limit: LimitRecoveryView | null;
}

/** Titles of the follow-up a limit's resume or failover starts (src/core/run/limitRecovery.ts, limitFailover.ts). */
const RESUME_TITLES: ReadonlySet<string> = new Set([LIMIT_RESUME_TITLE, FAILOVER_TITLE]);

export function runOfWork(ctx: AppContext, threadId: string, runId: string): RunOfWork | null {
  const { state } = ctx.orchestrator;
  let run = state.runs.get(runId);
  if (run === undefined) return null;
  for (;;) {
    if (!isTerminalRunStatus(run.status)) return { run, limit: null };
    const thread = state.threads.get(threadId);
    const limit = thread === undefined ? null : limitRecoveryView(state, thread);
    if (limit !== null && limit.runId === run.id && limit.status === "waiting_on_limit") return { run, limit };
    // A resume comes only while no other run followed the stopped one, so it is the next run or none.
    const stopped: Run = run;
    const next = runsOf(state, threadId).find((candidate) => candidate.ordinal > stopped.ordinal);
    if (next === undefined || next.kind !== "system_follow_up" || !resumes(ctx, threadId, next)) return { run, limit: null };
    run = next;
  }
}

/** Whether a follow-up run carries a limit's resume or failover notice (its run input). */
function resumes(ctx: AppContext, threadId: string, run: Run): boolean {
  return ctx.orchestrator.timeline.items(threadId, { types: ["notification"], order: "desc" }).some((item) => item.runId === run.id && item.type === "notification" && item.title !== null && RESUME_TITLES.has(item.title));
}
