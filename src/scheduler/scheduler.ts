import type { ScheduledTask } from "../contracts/entities/scheduledTasks.js";
import type { AppContext } from "../app/context.js";
import { AppError } from "../app/errors.js";
import { type TimedTrigger, instantsThrough, nextDueAfter } from "../app/schedules/dueTimes.js";
import { fireScheduledTask } from "../app/schedules/fire.js";
import { joinId } from "../core/ids.js";
import { DueTimer, REAL_TIMERS, type SchedulerTimers } from "./dueTimer.js";

export type { SchedulerTimers } from "./dueTimer.js";

/** Rejections that mean another fire (a retry, another node) got there first or the task changed: nothing to do. */
const SETTLED_REJECTIONS: ReadonlySet<string> = new Set(["scheduled_fire_stale", "scheduled_task_paused", "scheduled_task_not_found"]);

export interface SchedulerOptions {
  readonly app: AppContext;
  readonly timers?: SchedulerTimers;
  readonly log?: (line: string) => void;
  /** Retry delay after a fire failed unexpectedly; doubles up to 60 s. */
  readonly retryMs?: number;
}

/**
 * Fires timed tasks (interval, daily). One timer, armed for the earliest due
 * time of the enabled tasks and re-armed whenever a task event is committed
 * (this node's or another's). No polling.
 *
 * A fire's command id is derived from (task, due instant), and a timed fire
 * must name the task's current due time, so a restart, a retry or a second
 * node firing the same instant produce one fire. A due time that passed
 * before this process started, or several that passed at once, fire once as
 * a catch-up that says how many instants it stands for.
 */
export class Scheduler {
  private readonly log: (line: string) => void;
  private readonly startedAtMs: number;
  private readonly timer: DueTimer;
  private subscription: ReturnType<AppContext["orchestrator"]["follow"]> | null = null;
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
    const orchestrator = this.options.app.orchestrator;
    this.subscription = orchestrator.follow(orchestrator.state.lastSequence, (event) => {
      if (event.type === "scheduled-task.updated" || event.type === "scheduled-task.deleted") this.timer.rearm();
    });
    await this.subscription.caughtUp;
    this.wake();
  }

  /** Stop firing; waits for a fire in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.subscription?.close();
    await this.timer.stop();
  }

  /** Fire every due task now (the timer's callback; tests with a manual clock call it through their timers). */
  wake(): void {
    this.timer.wake();
  }

  private dueTasks(nowMs: number): ScheduledTask[] {
    return [...this.options.app.orchestrator.state.scheduledTasks.values()].filter(
      (task) => task.enabled && task.nextFireAt !== null && Date.parse(task.nextFireAt) <= nowMs && (this.backoff.get(task.id)?.untilMs ?? 0) <= nowMs,
    );
  }

  private async fireDue(): Promise<void> {
    const app = this.options.app;
    for (const task of this.dueTasks(app.clock())) {
      if (this.stopped) return;
      if (task.trigger.type === "webhook" || task.nextFireAt === null) continue;
      const trigger: TimedTrigger = task.trigger;
      const nowMs = app.clock();
      const dueMs = Date.parse(task.nextFireAt);
      const zone = app.schedules.timeZone;
      const instants = instantsThrough(trigger, dueMs, nowMs, zone);
      const missedDowntime = dueMs < this.startedAtMs;
      try {
        await fireScheduledTask(app, {
          scheduledTaskId: task.id,
          cause: missedDowntime || instants > 1 ? "catch_up" : "timer",
          dueAt: task.nextFireAt,
          instants,
          nextFireAt: new Date(nextDueAfter(trigger, nowMs, dueMs, zone)).toISOString(),
          fireKey: joinId("due", task.nextFireAt),
          context: null,
        });
        this.backoff.delete(task.id);
      } catch (error) {
        if (error instanceof AppError && error.rejectionCode !== undefined && SETTLED_REJECTIONS.has(error.rejectionCode)) continue;
        const delayMs = Math.min(60_000, (this.backoff.get(task.id)?.delayMs ?? (this.options.retryMs ?? 1_000) / 2) * 2);
        this.backoff.set(task.id, { untilMs: app.clock() + delayMs, delayMs });
        this.log(`loom: scheduler: firing ${task.id} failed, retrying in ${delayMs} ms: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** The earliest due time of the enabled tasks (or a backoff's end). */
  private earliest(): number | null {
    let earliest = Number.POSITIVE_INFINITY;
    for (const task of this.options.app.orchestrator.state.scheduledTasks.values()) {
      if (!task.enabled || task.nextFireAt === null) continue;
      earliest = Math.min(earliest, Math.max(Date.parse(task.nextFireAt), this.backoff.get(task.id)?.untilMs ?? 0));
    }
    return earliest === Number.POSITIVE_INFINITY ? null : earliest;
  }
}
