import type { StoredEvent } from "../../contracts/envelopes.js";
import type { SubscriptionHub } from "../subscriptions.js";

/** Default pause between checks for commits made by other connections. */
export const DEFAULT_SQLITE_POLL_INTERVAL_MS = 50;

export interface SqliteLogSource {
  /** Events with sequence > after, ascending, at most limit (synchronous). */
  readonly read: (after: number, limit: number) => readonly StoredEvent[];
  /** The last committed sequence. */
  readonly head: () => number;
  /** PRAGMA data_version: changes when another connection commits to the file. */
  readonly dataVersion: () => number;
}

/**
 * Feeds a SubscriptionHub the whole SQLite log in sequence order, whoever
 * wrote it. This connection's commits are published synchronously as each
 * commit returns; commits of other connections (a second store on the file,
 * another process) are read from the log by sequence when a timer sees
 * `PRAGMA data_version` change. Either way anything missing before them is
 * read first, so the hub gets every event once, ascending, with no gap.
 *
 * `published` is the highest sequence handed to the hub. While nobody
 * subscribes it just follows this connection's commits without reading
 * anything: a later subscriber replays from the log, and everything up to
 * `published` was committed before it registered.
 */
export class SqliteLogFeed {
  private published: number;
  private seenVersion: number;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly hub: SubscriptionHub,
    private readonly source: SqliteLogSource,
    private readonly pageSize: number,
    private readonly pollIntervalMs: number,
  ) {
    this.published = source.head();
    this.seenVersion = source.dataVersion();
  }

  /** Publish what this connection just committed (ascending, contiguous), after anything before it. */
  afterCommit(written: readonly StoredEvent[]): void {
    const last = written[written.length - 1];
    if (last === undefined) return;
    if (this.hub.size === 0) {
      this.published = Math.max(this.published, last.sequence);
      return;
    }
    this.pullUpTo((written[0] as StoredEvent).sequence - 1);
    const fresh = written.filter((event) => event.sequence > this.published);
    if (fresh.length === 0) return;
    this.published = last.sequence;
    this.hub.publish(fresh);
  }

  /**
   * Call before adding a subscriber. With nobody subscribed until now,
   * `published` may trail commits of other connections; everything up to the
   * head is committed, so the new subscriber's replay will read it.
   */
  beforeSubscribe(): void {
    if (this.stopped) return;
    if (this.hub.size === 0) {
      this.seenVersion = this.source.dataVersion();
      this.published = Math.max(this.published, this.source.head());
    }
    if (this.timer === null) {
      // Unref'd: an open store never keeps the process alive by itself.
      this.timer = setInterval(() => this.tick(), this.pollIntervalMs);
      this.timer.unref();
    }
  }

  stop(): void {
    this.stopped = true;
    this.stopTimer();
  }

  private tick(): void {
    if (this.stopped || this.hub.size === 0) {
      this.stopTimer();
      return;
    }
    try {
      // Read the version before the rows: a commit landing in between changes it again.
      const version = this.source.dataVersion();
      if (version === this.seenVersion) return;
      this.seenVersion = version;
      this.pullUpTo(Number.POSITIVE_INFINITY);
    } catch (error) {
      this.hub.report(error);
    }
  }

  /**
   * Read and publish the log after `published` up to `upTo`. A listener may
   * commit while a page is published; that commit pulls from the already
   * advanced `published`, so nothing is published twice or out of order.
   */
  private pullUpTo(upTo: number): void {
    while (!this.stopped && this.published < upTo) {
      const limit = Math.min(this.pageSize, upTo - this.published);
      const page = this.source.read(this.published, limit);
      const last = page[page.length - 1];
      if (last === undefined) return;
      // Synchronous: nothing can move `published` between the read and here.
      this.published = last.sequence;
      this.hub.publish(page);
      if (page.length < limit) return;
    }
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
