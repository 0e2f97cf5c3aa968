import type { Clock, TimerHandle, Timers } from "../../engine/clock.js";

/** Who registered a timer: a node incarnation (its timers die with it) or the world (0). */
export type TimerOwner = number;
export const WORLD: TimerOwner = 0;

interface Entry {
  readonly at: number;
  readonly seq: number;
  readonly owner: TimerOwner;
  readonly fn: () => void;
  cancelled: boolean;
}

/** 2026-01-01T00:00:00.000Z: every simulation starts here. */
export const SIM_EPOCH = Date.UTC(2026, 0, 1);

/**
 * Virtual time. Nothing fires on its own: the runner pops the earliest timer
 * (ties in registration order), moves the clock to it and runs it. Timers
 * are tagged with their owner so a crash drops exactly the dead node's
 * timers, as kill -9 does.
 */
export class SimScheduler {
  private current = SIM_EPOCH;
  private seq = 0;
  private readonly heap: Entry[] = [];
  private readonly deadOwners = new Set<TimerOwner>();
  /** Counts registrations: part of the runner's "is anything still happening" measure. */
  registrations = 0;

  readonly clock: Clock = () => this.current;

  get now(): number {
    return this.current;
  }

  /** Move the clock forward without running anything (never backwards). */
  advanceTo(at: number): void {
    if (at > this.current) this.current = at;
  }

  at(owner: TimerOwner, at: number, fn: () => void): TimerHandle {
    const entry: Entry = { at: Math.max(at, this.current), seq: ++this.seq, owner, fn, cancelled: this.deadOwners.has(owner) };
    this.registrations += 1;
    this.push(entry);
    return { cancel: () => void (entry.cancelled = true) };
  }

  after(owner: TimerOwner, ms: number, fn: () => void): TimerHandle {
    return this.at(owner, this.current + Math.max(0, ms), fn);
  }

  /** Resolves `ms` of virtual time from now; never, if the owner dies first. */
  sleep(owner: TimerOwner, ms: number): Promise<void> {
    return new Promise((resolve) => this.after(owner, ms, resolve));
  }

  /** The Timers seam for one owner. */
  timers(owner: TimerOwner): Timers {
    return {
      timeout: (ms, fn) => this.after(owner, ms, fn),
      interval: (ms, fn) => {
        const period = Math.max(1, ms);
        let handle: TimerHandle | null = null;
        let cancelled = false;
        const tick = () => {
          if (cancelled) return;
          handle = this.after(owner, period, tick);
          fn();
        };
        handle = this.after(owner, period, tick);
        return {
          cancel: () => {
            cancelled = true;
            handle?.cancel();
          },
        };
      },
    };
  }

  /** Cancel every timer of `owner`, now and later (a crashed node). */
  kill(owner: TimerOwner): void {
    this.deadOwners.add(owner);
    for (const entry of this.heap) if (entry.owner === owner) entry.cancelled = true;
  }

  /** When the earliest live timer is due, or null when none is left. */
  nextAt(): number | null {
    this.dropCancelled();
    return this.heap[0]?.at ?? null;
  }

  /** Run the earliest live timer due at or before `limit`; false when there is none. */
  runNext(limit = Number.POSITIVE_INFINITY): boolean {
    this.dropCancelled();
    const top = this.heap[0];
    if (top === undefined || top.at > limit) return false;
    this.pop();
    this.advanceTo(top.at);
    top.fn();
    return true;
  }

  private dropCancelled(): void {
    while (this.heap[0]?.cancelled === true) this.pop();
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): Entry | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
        if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
        if (smallest === i) break;
        [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
        i = smallest;
      }
    }
    return top;
  }
}

function before(a: Entry, b: Entry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
