import type { App } from "../app/app.js";
import { AppError } from "../app/errors.js";
import type { StreamHandle } from "../app/orchestration/subscriptions.js";
import type { DueScheduledTask } from "../app/schedules/timed.js";
import { DueTimer, REAL_TIMERS, type SchedulerTimers } from "./dueTimer.js";

export type { SchedulerTimers } from "./dueTimer.js";

/** Rejections that mean another fire (a retry, another node) got there first or the task changed: nothing to do. */
const SETTLED_REJECTIONS: ReadonlySet<string> = new Set(["scheduled_fire_stale", "scheduled_task_paused", "scheduled_task_not_found"]);

export interface SchedulerOptions {
  readonly app: App;
  readonly timers?: SchedulerTimers;
  readonly log?: (line: string) => void;
  /** Retry delay after a fire failed unexpectedly; doubles up to 60 s. */
  readonly retryMs?: number;
}

/**
 * Fires timed tasks (interval, daily). One timer, armed for the earliest due
 * time of the enabled tasks and re-armed whenever a task change is committed
 * (this node's or another's: the app's change feed). No polling.
 *
 * A fire goes through the app (fireDueScheduledTask): its command id is
 * derived from (task, due instant) and it must name the task's current due
 * time, so a restart, a retry or a second node firing the same instant
 * produce one fire; a due time that passed before this scheduler started
 * fires as a catch-up.
 */
export class Scheduler {
  private readonly log: (line: string) => void;
  private readonly startedAtMs: number;
  private readonly timer: DueTimer;
  private feed: StreamHandle | null = null;
  private stopped = false;
  /** Tasks whose last fire failed unexpectedly: not before this time, and the current backoff. */
  private readonly backoff = new Map<string, { untilMs: number; delayMs: number }>();

  constructor(private readonly options: SchedulerOptions) {
    this.log = options.log ?? (() => undefined);
    this.startedAtMs = options.app.clock();
    this.timer = new DueTimer({
      timers: options.timers ?? REAL_TIMERS,
      clock: options.app.clock,
      earliest: () => this.earliest(),
      run: () => this.fireDue(),
      onError: (error) => this.log(`loom: scheduler: ${error instanceof Error ? error.message : String(error)}`),
    });
  }

  /** Follow task changes and fire what is already due (catch-up after downtime). */
  async start(): Promise<void> {
    this.feed = await this.options.app.followScheduledTaskChanges(() => this.timer.rearm());
    this.wake();
  }

  /** Stop firing; waits for a fire in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.feed?.close();
    await this.timer.stop();
  }

  /** Fire every due task now (the timer's callback; tests with a manual clock call it through their timers). */
  wake(): void {
    this.timer.wake();
  }

  private dueTasks(nowMs: number): DueScheduledTask[] {
    return this.options.app.dueScheduledTasks().filter((task) => Date.parse(task.nextFireAt) <= nowMs && (this.backoff.get(task.scheduledTaskId)?.untilMs ?? 0) <= nowMs);
  }

  private async fireDue(): Promise<void> {
    const app = this.options.app;
    for (const task of this.dueTasks(app.clock())) {
      if (this.stopped) return;
      try {
        await app.fireDueScheduledTask(task, this.startedAtMs);
        this.backoff.delete(task.scheduledTaskId);
      } catch (error) {
        if (error instanceof AppError && error.rejectionCode !== undefined && SETTLED_REJECTIONS.has(error.rejectionCode)) continue;
        const delayMs = Math.min(60_000, (this.backoff.get(task.scheduledTaskId)?.delayMs ?? (this.options.retryMs ?? 1_000) / 2) * 2);
        this.backoff.set(task.scheduledTaskId, { untilMs: app.clock() + delayMs, delayMs });
        this.log(`loom: scheduler: firing ${task.scheduledTaskId} failed, retrying in ${delayMs} ms: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** The earliest due time of the enabled tasks (or a backoff's end). */
  private earliest(): number | null {
    let earliest = Number.POSITIVE_INFINITY;
    for (const task of this.options.app.dueScheduledTasks()) {
      earliest = Math.min(earliest, Math.max(Date.parse(task.nextFireAt), this.backoff.get(task.scheduledTaskId)?.untilMs ?? 0));
    }
    return earliest === Number.POSITIVE_INFINITY ? null : earliest;
  }
}
