import { type Run, isTerminalRunStatus } from "../../contracts/entities/runs.js";
import type { LimitRecoveryView } from "../../contracts/tools/toolOutputs.js";
import type { OrchestrationState } from "../../core/state.js";
import { runsOf } from "../../engine/queries.js";
import { limitRecoveryView } from "./limitView.js";

/**
 * A wait on a run that a usage limit may stop (t3_thread_wait): while the
 * run's thread waits for the limit to reset (`waiting_on_limit`) the wait
 * goes on, and once the work resumes it follows the thread's next run, so
 * the waiter hears how the work ended, not that a limit paused it
 * (docs/limits.md, "Waiting for the reset").
 */
export class RunAcrossLimits {
  private runId: string;
  /** The tracked run ended waiting on a limit: its work's next run is the one to follow. */
  private limited = false;

  constructor(
    private readonly state: () => OrchestrationState,
    private readonly threadId: string,
    runId: string,
  ) {
    this.runId = runId;
  }

  /** The run the wait is about now. */
  current(): Run {
    return this.state().runs.get(this.runId)!;
  }

  /** The limit the tracked run waits on, if any. */
  limit(): LimitRecoveryView | null {
    const thread = this.state().threads.get(this.threadId);
    const view = thread === undefined ? null : limitRecoveryView(this.state(), thread);
    return view !== null && view.runId === this.runId && view.status === "waiting_on_limit" ? view : null;
  }

  /** Whether the work is over: the tracked run ended and no limit holds it; follows a resumed run first. */
  ended(): boolean {
    for (;;) {
      const run = this.current();
      if (!isTerminalRunStatus(run.status)) return false;
      if (this.limit() !== null) {
        this.limited = true;
        return false;
      }
      if (!this.limited) return true;
      const next = runsOf(this.state(), this.threadId).find((candidate) => candidate.ordinal > run.ordinal);
      if (next === undefined) return true;
      this.runId = next.id;
      this.limited = false;
    }
  }
}
