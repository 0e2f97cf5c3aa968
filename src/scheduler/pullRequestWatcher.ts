import type { AppContext } from "../app/context.js";
import { execute } from "../app/context.js";
import { AppError } from "../app/errors.js";
import type { AppThread } from "../contracts/thread.js";
import { joinId } from "../core/ids.js";
import { DueTimer, REAL_TIMERS, type SchedulerTimers } from "./dueTimer.js";
import { type PullRequestReader, ghPullRequestReader } from "./ghPullRequests.js";

export interface PullRequestWatcherOptions {
  readonly app: AppContext;
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
  private subscription: ReturnType<AppContext["orchestrator"]["follow"]> | null = null;
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
    const orchestrator = this.options.app.orchestrator;
    this.subscription = orchestrator.follow(orchestrator.state.lastSequence, (event) => {
      if (event.type === "thread.pull-request-link-updated" || event.type === "thread.pull-request-synced" || event.type === "thread.deleted") this.timer.rearm();
    });
    await this.subscription.caughtUp;
    this.timer.wake();
  }

  async stop(): Promise<void> {
    this.subscription?.close();
    await this.timer.stop();
  }

  private watched(): AppThread[] {
    return [...this.options.app.orchestrator.state.threads.values()].filter((thread) => thread.deletedAt === null && (thread.pullRequestWatch ?? null) !== null);
  }

  private earliest(): number | null {
    let earliest: number | null = null;
    for (const thread of this.watched()) {
      const due = Math.max(Date.parse(thread.pullRequestWatch!.nextSyncAt), this.retryAt.get(thread.id) ?? 0);
      earliest = earliest === null ? due : Math.min(earliest, due);
    }
    return earliest;
  }

  private async syncDue(): Promise<void> {
    const app = this.options.app;
    for (const thread of this.watched()) {
      const dueAt = thread.pullRequestWatch!.nextSyncAt;
      if (Math.max(Date.parse(dueAt), this.retryAt.get(thread.id) ?? 0) > app.clock()) continue;
      const now = new Date(app.clock()).toISOString();
      const links = thread.pullRequests.filter((link) => link.unlinkedAt === null);
      const results = await Promise.all(links.map((link) => this.read(link.url, now)));
      try {
        await execute(app, { type: "thread.pull-request-watch.sync", commandId: joinId("pull-request-sync", thread.id, dueAt), data: { threadId: thread.id, dueAt, results } });
      } catch (error) {
        if (error instanceof AppError && error.rejectionCode !== undefined && SETTLED_REJECTIONS.has(error.rejectionCode)) continue;
        this.retryAt.set(thread.id, app.clock() + RETRY_MS);
        this.log(`loom: pull request watcher: syncing ${thread.id} failed, retrying in ${RETRY_MS} ms: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      this.retryAt.delete(thread.id);
    }
  }
}
