import type { App } from "../app/app.js";
import { AppError } from "../app/errors.js";
import type { LimitResume } from "../app/limits/limitResumes.js";
import type { StreamHandle } from "../app/orchestration/subscriptions.js";
import { DueTimer, REAL_TIMERS, type SchedulerTimers } from "./dueTimer.js";

export interface LimitResumerOptions {
  /** What the resumer asks of the app (the simulator gives these over its own app context). */
  readonly app: Pick<App, "clock" | "limitResumes" | "followLimitResumes" | "resumeAfterLimit" | "failOverLimited">;
  readonly timers?: SchedulerTimers;
  readonly log?: (line: string) => void;
}

/** Wait before retrying a resume that failed unexpectedly. */
const RETRY_MS = 10_000;
/** Rejections that mean the resume happened already (a retry, another node) or the thread is gone. */
const SETTLED_REJECTIONS: ReadonlySet<string> = new Set(["limit_recovery_stale", "thread_not_found", "thread_deleted"]);

/**
 * Resumes work a usage limit stopped (docs/limits.md, "Waiting for the
 * reset"): one timer armed for the earliest reset among the threads' limit
 * recoveries, re-armed whenever one is recorded or cleared (on this node or
 * another). A due resume is one command derived from (thread, run, reset),
 * so it fires once across retries, restarts and nodes.
 */
export class LimitResumer {
  private readonly timer: DueTimer;
  private readonly log: (line: string) => void;
  private feed: StreamHandle | null = null;
  /** Threads whose last resume failed unexpectedly: not retried before this time (ms). */
  private readonly retryAt = new Map<string, number>();
  /** The failover pass running, and whether a change came in meanwhile (another pass follows). */
  private failingOver: Promise<void> | null = null;
  private failOverAgain = false;

  constructor(private readonly options: LimitResumerOptions) {
    this.log = options.log ?? (() => undefined);
    this.timer = new DueTimer({
      timers: options.timers ?? REAL_TIMERS,
      clock: options.app.clock,
      earliest: () => this.earliest(),
      run: () => this.resumeDue(),
      onError: (error) => this.log(`loom: limit resumer: ${error instanceof Error ? error.message : String(error)}`),
    });
  }

  /** Follow recoveries and resume what is due already (a reset that passed while the server was down). */
  async start(): Promise<void> {
    this.feed = await this.options.app.followLimitResumes(() => {
      this.timer.rearm();
      this.failOver();
    });
    this.timer.wake();
    this.failOver();
  }

  async stop(): Promise<void> {
    this.feed?.close();
    await this.failingOver;
    await this.timer.stop();
  }

  /** Move what a limit stopped to an available failover instance now (docs/limits.md, "Moving work a limit stopped"); one pass at a time. */
  private failOver(): void {
    if (this.failingOver !== null) {
      this.failOverAgain = true;
      return;
    }
    this.failingOver = (async () => {
      do {
        this.failOverAgain = false;
        await this.options.app.failOverLimited(this.log);
      } while (this.failOverAgain);
    })()
      .catch((error: unknown) => this.log(`loom: limit failover: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        this.failingOver = null;
      });
  }

  private dueAt(resume: LimitResume): number {
    return Math.max(Date.parse(resume.resetAt), this.retryAt.get(resume.threadId) ?? 0);
  }

  private earliest(): number | null {
    let earliest: number | null = null;
    for (const resume of this.options.app.limitResumes()) earliest = earliest === null ? this.dueAt(resume) : Math.min(earliest, this.dueAt(resume));
    return earliest;
  }

  private async resumeDue(): Promise<void> {
    const app = this.options.app;
    for (const resume of app.limitResumes()) {
      if (this.dueAt(resume) > app.clock()) continue;
      try {
        await app.resumeAfterLimit(resume);
        this.retryAt.delete(resume.threadId);
      } catch (error) {
        if (error instanceof AppError && error.rejectionCode !== undefined && SETTLED_REJECTIONS.has(error.rejectionCode)) continue;
        this.retryAt.set(resume.threadId, app.clock() + RETRY_MS);
        this.log(`loom: limit resumer: resuming ${resume.threadId} failed, retrying in ${RETRY_MS} ms: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
