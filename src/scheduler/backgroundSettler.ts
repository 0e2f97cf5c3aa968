import type { App } from "../app/app.js";
import { AppError } from "../app/errors.js";
import type { StreamHandle } from "../app/orchestration/subscriptions.js";
import type { SettlingRun } from "../app/threads/backgroundSettle.js";
import { DueTimer, REAL_TIMERS, type SchedulerTimers } from "./dueTimer.js";

export interface BackgroundSettlerOptions {
  readonly app: Pick<App, "clock" | "settlingRuns" | "followSettlingRuns" | "settleTimedOut">;
  readonly timers?: SchedulerTimers;
  readonly log?: (line: string) => void;
}

/** Wait before retrying a settle that failed unexpectedly. */
const RETRY_MS = 10_000;
/** Rejections that mean the run settled already (its work ended, another node, a retry) or is gone. */
const SETTLED_REJECTIONS: ReadonlySet<string> = new Set(["run_not_settling", "run_not_found", "thread_not_found"]);

/**
 * Bounds runs settling background work (docs/runs.md, "Background work"):
 * one timer armed for the earliest backgroundSettleBy, re-armed whenever a
 * run starts or stops settling (on this node or another). A due settle is
 * one command derived from the run, so it happens once across retries,
 * restarts and nodes; a bound that passed while the server was down is
 * settled at start.
 */
export class BackgroundSettler {
  private readonly timer: DueTimer;
  private readonly log: (line: string) => void;
  private feed: StreamHandle | null = null;
  /** Runs whose last settle failed unexpectedly: not retried before this time (ms). */
  private readonly retryAt = new Map<string, number>();

  constructor(private readonly options: BackgroundSettlerOptions) {
    this.log = options.log ?? (() => undefined);
    this.timer = new DueTimer({
      timers: options.timers ?? REAL_TIMERS,
      clock: options.app.clock,
      earliest: () => this.earliest(),
      run: () => this.settleDue(),
      onError: (error) => this.log(`loom: background settler: ${error instanceof Error ? error.message : String(error)}`),
    });
  }

  async start(): Promise<void> {
    this.feed = await this.options.app.followSettlingRuns(() => this.timer.rearm());
    this.timer.wake();
  }

  async stop(): Promise<void> {
    this.feed?.close();
    await this.timer.stop();
  }

  private dueAt(run: SettlingRun): number {
    return Math.max(Date.parse(run.settleBy), this.retryAt.get(run.runId) ?? 0);
  }

  private earliest(): number | null {
    let earliest: number | null = null;
    for (const run of this.options.app.settlingRuns()) earliest = earliest === null ? this.dueAt(run) : Math.min(earliest, this.dueAt(run));
    return earliest;
  }

  private async settleDue(): Promise<void> {
    const app = this.options.app;
    for (const run of app.settlingRuns()) {
      if (this.dueAt(run) > app.clock()) continue;
      try {
        await app.settleTimedOut(run);
        this.retryAt.delete(run.runId);
      } catch (error) {
        if (error instanceof AppError && error.rejectionCode !== undefined && SETTLED_REJECTIONS.has(error.rejectionCode)) continue;
        this.retryAt.set(run.runId, app.clock() + RETRY_MS);
        this.log(`loom: background settler: settling ${run.runId} failed, retrying in ${RETRY_MS} ms: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
