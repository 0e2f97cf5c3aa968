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

/** What a wait reads and times itself with: the parts of the app context it uses. */
export type WaitHost = Pick<AppContext, "orchestrator" | "clock" | "timers" | "progressIntervalMs">;

/** A wait context for callers that neither cancel nor watch progress. */
export const UNOBSERVED_WAIT: WaitContext = { signal: new AbortController().signal, progress: () => Promise.resolve() };

/**
 * Resolve true when `done()` holds — checked now and after every event of the
 * committed log — or false when `timeoutMs` passes or the call is aborted.
 * Reports progress every progressIntervalMs so clients see the wait is alive.
 *
 * `done` and `describe` read the engine (the timeline reads the store), and
 * they run in the wait's own callbacks, where nothing catches: a read that
 * throws (the store closed as the server stops) rejects the wait with that
 * error, which the transport answers as a typed failure (toFailure), instead
 * of escaping the callback and ending the process.
 */
export function waitUntil(ctx: WaitHost, wait: WaitContext, timeoutMs: number, done: () => boolean, describe: () => string): Promise<boolean> {
  if (done()) return Promise.resolve(true);
  if (wait.signal.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve, reject) => {
    const started = ctx.clock();
    let ticks = 0;
    let finished = false;
    const stop = (): boolean => {
      if (finished) return false;
      finished = true;
      subscription.close();
      timer.cancel();
      progress.cancel();
      wait.signal.removeEventListener("abort", onAbort);
      return true;
    };
    const finish = (result: boolean) => {
      if (stop()) resolve(result);
    };
    /** What `read` answers, or undefined when it threw: the wait is then rejected with that error. */
    const guarded = <T>(read: () => T): T | undefined => {
      try {
        return read();
      } catch (error) {
        if (stop()) reject(error instanceof Error ? error : new Error(String(error)));
        return undefined;
      }
    };
    // One check per burst of events: a commit delivers its events back to back.
    let checkQueued = false;
    const subscription = ctx.orchestrator.follow(ctx.orchestrator.state.lastSequence, () => {
      if (checkQueued) return;
      checkQueued = true;
      queueMicrotask(() => {
        checkQueued = false;
        if (!finished && guarded(done) === true) finish(true);
      });
    });
    const timers = ctx.timers ?? systemTimers;
    const timer = timers.timeout(timeoutMs, () => {
      const met = guarded(done);
      if (met !== undefined) finish(met);
    });
    const progress = timers.interval(ctx.progressIntervalMs, () => {
      ticks += 1;
      const elapsed = ctx.clock() - started;
      const text = guarded(describe);
      if (text !== undefined) void wait.progress({ progress: ticks, message: `${text} (${Math.round(elapsed / 1000)} s)` });
    });
    const onAbort = () => finish(false);
    wait.signal.addEventListener("abort", onAbort);
  });
}

/** A wait's time budget: what the caller asked for, never more than the server cap. */
export function waitBudget(ctx: AppContext, requested: number | undefined): number {
  return Math.min(requested ?? ctx.maxWaitMs, ctx.maxWaitMs);
}
