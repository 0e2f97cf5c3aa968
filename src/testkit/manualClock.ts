import type { SchedulerTimers } from "../scheduler/scheduler.js";

/**
 * A clock tests move by hand, with the scheduler's timer seam on it: a timer
 * fires when `advance` moves the clock past its due time, never on its own.
 */
export class ManualClock {
  private nowMs: number;
  private nextId = 1;
  private readonly pending = new Map<number, { readonly atMs: number; readonly callback: () => void }>();

  constructor(start: string | number) {
    this.nowMs = typeof start === "number" ? start : Date.parse(start);
  }

  readonly now = (): number => this.nowMs;

  readonly timers: SchedulerTimers = {
    set: (callback, delayMs) => {
      const id = this.nextId++;
      this.pending.set(id, { atMs: this.nowMs + delayMs, callback });
      return id;
    },
    clear: (handle) => {
      this.pending.delete(handle as number);
    },
  };

  /** Move the clock and run every timer now due, earliest first. */
  advance(ms: number): void {
    this.nowMs += ms;
    const due = [...this.pending.entries()].filter(([, timer]) => timer.atMs <= this.nowMs).sort((a, b) => a[1].atMs - b[1].atMs);
    for (const [id, timer] of due) {
      this.pending.delete(id);
      timer.callback();
    }
  }

  /** Timers waiting (a test can wait until the scheduler has armed one). */
  get armed(): number {
    return this.pending.size;
  }
}
