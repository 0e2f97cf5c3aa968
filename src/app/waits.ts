import { systemTimers } from "../engine/clock.js";
import type { AppContext } from "./context.js";

/** One progress report of a long call (a wait): `progress` increases from one report to the next. */
export interface ProgressUpdate {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/**
 * What a long app call needs from its transport: a signal that aborts it (the
 * client went away or cancelled) and a way to report progress. Never throws.
 */
export interface WaitContext {
  readonly signal: AbortSignal;
  progress(update: ProgressUpdate): Promise<void>;
}

/** A wait context for callers that neither cancel nor watch progress. */
export const UNOBSERVED_WAIT: WaitContext = { signal: new AbortController().signal, progress: () => Promise.resolve() };

/**
 * Resolve true when `done()` holds — checked now and after every event of the
 * committed log — or false when `timeoutMs` passes or the call is aborted.
 * Reports progress every progressIntervalMs so clients see the wait is alive.
 */
export function waitUntil(ctx: AppContext, wait: WaitContext, timeoutMs: number, done: () => boolean, describe: () => string): Promise<boolean> {
  if (done()) return Promise.resolve(true);
  if (wait.signal.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const started = ctx.clock();
    let ticks = 0;
    let finished = false;
    const finish = (result: boolean) => {
      if (finished) return;
      finished = true;
      subscription.close();
      timer.cancel();
      progress.cancel();
      wait.signal.removeEventListener("abort", onAbort);
      resolve(result);
    };
    // One check per burst of events: a commit delivers its events back to back.
    let checkQueued = false;
    const subscription = ctx.orchestrator.follow(ctx.orchestrator.state.lastSequence, () => {
      if (checkQueued) return;
      checkQueued = true;
      queueMicrotask(() => {
        checkQueued = false;
        if (!finished && done()) finish(true);
      });
    });
    const timers = ctx.timers ?? systemTimers;
    const timer = timers.timeout(timeoutMs, () => finish(done()));
    const progress = timers.interval(ctx.progressIntervalMs, () => {
      ticks += 1;
      const elapsed = ctx.clock() - started;
      void wait.progress({ progress: ticks, message: `${describe()} (${Math.round(elapsed / 1000)} s)` });
    });
    const onAbort = () => finish(false);
    wait.signal.addEventListener("abort", onAbort);
  });
}

/** A wait's time budget: what the caller asked for, never more than the server cap. */
export function waitBudget(ctx: AppContext, requested: number | undefined): number {
  return Math.min(requested ?? ctx.maxWaitMs, ctx.maxWaitMs);
}
