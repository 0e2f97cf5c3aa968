import type { OutboxRow } from "../contracts/envelopes.js";
import type { EventStore } from "../store/eventStore.js";

/** Runs one effect. Throwing marks the attempt failed. */
export type EffectHandler = (row: OutboxRow) => Promise<void>;

export interface OutboxWorkerOptions {
  readonly store: EventStore;
  readonly handlers: ReadonlyMap<string, EffectHandler>;
  /** Lease owner name, unique per process. */
  readonly owner: string;
  readonly clock?: () => number;
  readonly leaseMs?: number;
  /** How often to look for retries and expired leases when nothing wakes the worker. */
  readonly pollMs?: number;
  /** Attempts a replay-safe effect gets before it fails for good. */
  readonly maxAttempts?: number;
  /** Called once when an effect fails for good. */
  readonly onFailed?: (row: OutboxRow, error: unknown) => void;
  readonly log?: (line: string) => void;
}

/**
 * Drains the outbox (DESIGN.md invariant 4). Effects of one thread run one at
 * a time in commit order; different threads run in parallel, so a slow
 * provider start never holds up another thread. A replay-safe effect that
 * fails is retried with backoff; a process-bound one fails at once.
 */
export class OutboxWorker {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly clock: () => number;
  private readonly leaseMs: number;
  private readonly maxAttempts: number;
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly options: OutboxWorkerOptions) {
    this.clock = options.clock ?? Date.now;
    this.leaseMs = options.leaseMs ?? 5 * 60_000;
    this.maxAttempts = options.maxAttempts ?? 5;
  }

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), this.options.pollMs ?? 1_000);
    this.timer.unref();
    this.kick();
  }

  /** Look for work now (called after every commit). */
  kick(): void {
    if (this.stopped) return;
    if (this.polling !== null) {
      this.again = true;
      return;
    }
    this.polling = this.poll().finally(() => {
      this.polling = null;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async poll(): Promise<void> {
    try {
      for (;;) {
        const rows = await this.options.store.claimOutbox({
          owner: this.options.owner,
          now: this.clock(),
          leaseMs: this.leaseMs,
          limit: 64,
          kinds: [...this.options.handlers.keys()],
        });
        for (const row of rows) this.enqueue(row);
        if (rows.length < 64 || this.stopped) return;
      }
    } catch (error) {
      this.options.log?.(`loom: outbox poll failed: ${String(error)}`);
    }
  }

  private enqueue(row: OutboxRow): void {
    const previous = this.chains.get(row.streamId) ?? Promise.resolve();
    const next = previous.then(() => this.run(row));
    this.chains.set(row.streamId, next);
    void next.finally(() => {
      if (this.chains.get(row.streamId) === next) this.chains.delete(row.streamId);
    });
  }

  private async run(row: OutboxRow): Promise<void> {
    const handler = this.options.handlers.get(row.kind);
    try {
      if (handler === undefined) throw new Error(`no handler for effect ${row.kind}`);
      await handler(row);
      await this.options.store.completeOutbox(row.id, this.options.owner);
    } catch (error) {
      const retry = row.replaySafe && row.attempts < this.maxAttempts;
      const retryAt = retry ? this.clock() + Math.min(30_000, 250 * 2 ** row.attempts) : null;
      await this.options.store.failOutbox(row.id, this.options.owner, errorText(error), retryAt).catch(() => false);
      if (!retry) this.options.onFailed?.(row, error);
      else this.options.log?.(`loom: effect ${row.kind} failed (attempt ${row.attempts}), retrying: ${errorText(error)}`);
    }
  }

  /** Stop claiming; effects already running finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    // A claim in flight enqueues what it leased: wait for it, then for those effects too.
    await this.polling;
    await Promise.allSettled([...this.chains.values()]);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
