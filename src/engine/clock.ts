import { randomUUID } from "node:crypto";

/**
 * The seams through which the engine, the session manager and the app layer
 * read time, set timers and draw random ids. Production passes nothing and
 * gets the system defaults below; the deterministic simulator
 * (src/testkit/sim, docs/simulation.md) passes a virtual clock, virtual
 * timers and a seeded id source, so one seed replays one history exactly.
 */

/** Epoch milliseconds. */
export type Clock = () => number;

/** A pending timer; cancelling twice, or after it fired, does nothing. */
export interface TimerHandle {
  cancel(): void;
}

export interface TimerOptions {
  /** Do not keep the process alive for this timer alone (Node's `unref`). */
  readonly unref?: boolean;
}

export interface Timers {
  /** Call `fn` once, `ms` from now. */
  timeout(ms: number, fn: () => void, options?: TimerOptions): TimerHandle;
  /** Call `fn` every `ms` until cancelled. */
  interval(ms: number, fn: () => void, options?: TimerOptions): TimerHandle;
}

/** Where fresh random ids come from. */
export interface Random {
  /** A version-4-shaped UUID. */
  uuid(): string;
}

export const systemClock: Clock = Date.now;

export const systemTimers: Timers = {
  timeout(ms, fn, options) {
    const timer = setTimeout(fn, ms);
    if (options?.unref === true) timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
  interval(ms, fn, options) {
    const timer = setInterval(fn, ms);
    if (options?.unref === true) timer.unref();
    return { cancel: () => clearInterval(timer) };
  },
};

export const systemRandom: Random = { uuid: () => randomUUID() };
