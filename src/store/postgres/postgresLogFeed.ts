import type { StoredEvent } from "../../contracts/envelopes.js";
import type { SubscriptionHub } from "../subscriptions.js";

/** Default pause between polls of the log while anyone subscribes (the fallback behind LISTEN/NOTIFY). */
export const DEFAULT_POSTGRES_POLL_INTERVAL_MS = 1_000;

/** Events with sequence > after, ascending, at most limit. */
export type ReadLog = (after: number, limit: number) => Promise<readonly StoredEvent[]>;

/** What the feed needs from the notification connection. */
export interface NotificationSource {
  start(): void;
  close(): Promise<void>;
}

/**
 * Feeds a SubscriptionHub the whole PostgreSQL log in sequence order, whoever
 * wrote it: this store's commits as each returns, other stores' and
 * processes' commits when a NOTIFY (or, as a fallback, a poll) says the log
 * moved. Commits become visible in sequence order (the log lock,
 * postgresCommit.ts), so reading `sequence > published` never skips one.
 *
 * Every step runs on one promise chain, so reads and publishes never
 * interleave: the hub gets each event once, ascending, with no gap.
 * `published` is the highest sequence handed to the hub. While nobody
 * subscribes it just follows commits this store makes or hears of, without
 * reading: a later subscriber replays from the log, and everything up to
 * `published` was committed before it registered.
 */
export class PostgresLogFeed {
  private published: number;
  /** The highest sequence this store committed or heard of in a NOTIFY (or published): the log is at least there. */
  private heard: number;
  private chain: Promise<void> = Promise.resolve();
  private pullQueued = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly hub: SubscriptionHub,
    private readonly read: ReadLog,
    private readonly notifications: NotificationSource | null,
    head: number,
    private readonly pageSize: number,
    private readonly pollIntervalMs: number,
  ) {
    this.published = head;
    this.heard = head;
  }

  /** The highest sequence known to be committed, by this store or (through NOTIFY) another: a hint, read without a round trip. */
  get knownHead(): number {
    return Math.max(this.heard, this.published);
  }

  /**
   * This store committed `written` (ascending, contiguous). Resolves once it
   * has been published, after any earlier events (other writers') it had not
   * published yet. Never rejects: a failed read is reported to the hub and the
   * next poll retries.
   */
  afterCommit(written: readonly StoredEvent[]): Promise<void> {
    const last = written[written.length - 1];
    if (last === undefined) return Promise.resolve();
    this.heard = Math.max(this.heard, last.sequence);
    if (this.hub.size === 0) {
      this.published = Math.max(this.published, last.sequence);
      return Promise.resolve();
    }
    return this.enqueue(async () => {
      await this.pullUpTo((written[0] as StoredEvent).sequence - 1);
      const fresh = written.filter((event) => event.sequence > this.published);
      if (fresh.length === 0) return;
      this.published = last.sequence;
      this.hub.publish(fresh);
    });
  }

  /** A NOTIFY from some writer: `payload` is the last sequence of its commit. */
  notified(payload: string): void {
    const sequence = Number(payload);
    if (Number.isSafeInteger(sequence)) this.heard = Math.max(this.heard, sequence);
    if (this.hub.size === 0 && Number.isSafeInteger(sequence)) {
      this.published = Math.max(this.published, sequence);
      return;
    }
    this.requestPull();
  }

  /** Read and publish whatever was committed after `published` (coalesces with a pull already queued). */
  requestPull(): void {
    if (this.pullQueued || this.stopped) return;
    this.pullQueued = true;
    void this.enqueue(async () => {
      this.pullQueued = false;
      if (this.hub.size > 0) await this.pullUpTo(Number.POSITIVE_INFINITY);
    });
  }

  /** Call when a subscriber is about to register: starts notifications and polling. */
  beforeSubscribe(): void {
    if (this.stopped) return;
    this.notifications?.start();
    if (this.timer === null) {
      // Unref'd: an open store never keeps the process alive by itself.
      this.timer = setInterval(() => this.tick(), this.pollIntervalMs);
      this.timer.unref();
    }
  }

  /** Stop polling and listening; resolves when the step in progress has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopTimer();
    await this.notifications?.close();
    await this.chain;
  }

  private tick(): void {
    if (this.stopped || this.hub.size === 0) {
      this.stopTimer();
      return;
    }
    this.requestPull();
  }

  private async pullUpTo(upTo: number): Promise<void> {
    while (!this.stopped && this.published < upTo) {
      const limit = Math.min(this.pageSize, upTo - this.published);
      const page = await this.read(this.published, limit);
      // `published` may have moved while reading (a notification or commit with nobody subscribed).
      const fresh = page.filter((event) => event.sequence > this.published);
      const last = fresh[fresh.length - 1];
      if (last !== undefined && !this.stopped) {
        this.published = last.sequence;
        this.hub.publish(fresh);
      }
      if (page.length < limit) return;
    }
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    const run = this.chain.then(step).catch((error: unknown) => {
      if (!this.stopped) this.hub.report(error);
    });
    this.chain = run;
    return run;
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
