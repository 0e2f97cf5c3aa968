/** The timer seam: production uses setTimeout; tests pass a manual clock's timers. */
export interface SchedulerTimers {
  set(callback: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
}

export const REAL_TIMERS: SchedulerTimers = {
  set: (callback, delayMs) => setTimeout(callback, delayMs),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** setTimeout's longest delay; a later due time is re-armed on waking. */
const MAX_DELAY_MS = 2_147_483_647;

export interface DueTimerOptions {
  readonly timers: SchedulerTimers;
  readonly clock: () => number;
  /** The earliest due time in epoch ms, or null when nothing is due ever. */
  readonly earliest: () => number | null;
  /** Do what is due now; never runs twice at once. */
  readonly run: () => Promise<void>;
  /** Reports a run that threw. */
  readonly onError: (error: unknown) => void;
}

/**
 * One timer armed for the earliest due time of whatever its owner keeps (the
 * scheduler's tasks, the pull request watches). `rearm` after every change
 * the owner follows; `wake` runs the due work now. A wake during a run runs
 * once more after it; the timer is re-armed when a run ends. No polling.
 */
export class DueTimer {
  private timer: unknown = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly options: DueTimerOptions) {}

  wake(): void {
    if (this.stopped) return;
    if (this.running !== null) {
      this.again = true;
      return;
    }
    this.running = this.options
      .run()
      .catch((error: unknown) => this.options.onError(error))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        } else {
          this.rearm();
        }
      });
  }

  rearm(): void {
    if (this.stopped || this.running !== null) return;
    if (this.timer !== null) this.options.timers.clear(this.timer);
    this.timer = null;
    const earliest = this.options.earliest();
    if (earliest === null) return;
    const delayMs = Math.min(MAX_DELAY_MS, Math.max(0, earliest - this.options.clock()));
    this.timer = this.options.timers.set(() => {
      this.timer = null;
      this.wake();
    }, delayMs);
  }

  /** Stop arming; waits for a run in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) this.options.timers.clear(this.timer);
    this.timer = null;
    await this.running;
  }
}
