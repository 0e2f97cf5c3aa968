import type { App } from "../app/app.js";
import { AppError } from "../app/errors.js";
import type { StreamHandle } from "../app/orchestration/subscriptions.js";
import type { PullRequestWatch } from "../app/threads/pullRequestWatches.js";
import { DueTimer, REAL_TIMERS, type SchedulerTimers } from "./dueTimer.js";
import { type PullRequestReader, ghPullRequestReader } from "./ghPullRequests.js";

export interface PullRequestWatcherOptions {
  readonly app: App;
  /** Default: the GitHub CLI on PATH. */
  readonly read?: PullRequestReader;
  readonly timers?: SchedulerTimers;
  readonly log?: (line: string) => void;
}

/** Wait before retrying a sync that failed unexpectedly. */
const RETRY_MS = 10_000;
/** Rejections that mean the sync was done already (a retry, another node) or the watch changed. */
const SETTLED_REJECTIONS: ReadonlySet<string> = new Set(["pull_request_sync_stale", "thread_not_found", "thread_deleted"]);

/**
 * Runs the pull request watches (docs/pull-requests.md): one timer armed for
 * the earliest due sync among the threads, re-armed whenever a thread's
 * watch or links change (on this node or another). A due sync reads every
 * linked pull request and records it with a command derived from (thread,
 * due time), so a retry or a second node never records one due time twice.
 */
export class PullRequestWatcher {
  private readonly timer: DueTimer;
  private readonly read: PullRequestReader;
  private readonly log: (line: string) => void;
  private feed: StreamHandle | null = null;
  /** Threads whose last sync failed unexpectedly: not retried before this time (ms). */
  private readonly retryAt = new Map<string, number>();

  constructor(private readonly options: PullRequestWatcherOptions) {
    this.read = options.read ?? ghPullRequestReader();
    this.log = options.log ?? (() => undefined);
    this.timer = new DueTimer({
      timers: options.timers ?? REAL_TIMERS,
      clock: options.app.clock,
      earliest: () => this.earliest(),
      run: () => this.syncDue(),
      onError: (error) => this.log(`loom: pull request watcher: ${error instanceof Error ? error.message : String(error)}`),
    });
  }

  async start(): Promise<void> {
    this.feed = await this.options.app.followPullRequestWatches(() => this.timer.rearm());
    this.timer.wake();
  }

  async stop(): Promise<void> {
    this.feed?.close();
    await this.timer.stop();
  }

  private earliest(): number | null {
    let earliest: number | null = null;
    for (const watch of this.options.app.pullRequestWatches()) {
      const due = Math.max(Date.parse(watch.nextSyncAt), this.retryAt.get(watch.threadId) ?? 0);
      earliest = earliest === null ? due : Math.min(earliest, due);
    }
    return earliest;
  }

  private async syncDue(): Promise<void> {
    const app = this.options.app;
    for (const watch of app.pullRequestWatches()) {
      if (Math.max(Date.parse(watch.nextSyncAt), this.retryAt.get(watch.threadId) ?? 0) > app.clock()) continue;
      if (await this.sync(watch)) this.retryAt.delete(watch.threadId);
    }
  }

  /** Read a watch's pull requests and record them; false when it was settled elsewhere or failed (then retried later). */
  private async sync(watch: PullRequestWatch): Promise<boolean> {
    const app = this.options.app;
    const now = new Date(app.clock()).toISOString();
    const results = await Promise.all(watch.urls.map((url) => this.read(url, now)));
    try {
      await app.recordPullRequestSync({ threadId: watch.threadId, dueAt: watch.nextSyncAt, results });
      return true;
    } catch (error) {
      if (error instanceof AppError && error.rejectionCode !== undefined && SETTLED_REJECTIONS.has(error.rejectionCode)) return false;
      this.retryAt.set(watch.threadId, app.clock() + RETRY_MS);
      this.log(`loom: pull request watcher: syncing ${watch.threadId} failed, retrying in ${RETRY_MS} ms: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  }
}
