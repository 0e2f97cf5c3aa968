import { EFFECTS, EFFECT_KINDS, type EffectKind, type EffectPayload, isEffectKind, retryDelay } from "../contracts/effects.js";
import type { OutboxRow } from "../contracts/envelopes.js";
import { formatZodIssues } from "../contracts/zodIssues.js";
import type { EventStore } from "../store/eventStore.js";
import { type TimerHandle, type Timers, systemTimers } from "./clock.js";

/** What a handler learns about the effect it runs besides its payload. */
export interface EffectContext {
  /** The outbox row's id: stable across retries, so a handler can be idempotent by it. */
  readonly effectId: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** The thread the effect belongs to. */
  readonly threadId: string;
}

/** Runs one effect kind with its decoded payload. Throwing marks the attempt failed. */
export type EffectHandler<K extends EffectKind> = (payload: EffectPayload<K>, effect: EffectContext) => Promise<void>;

/** One handler per effect kind: the compiler checks the table is total. */
export type EffectHandlers = { readonly [K in EffectKind]: EffectHandler<K> };

export interface OutboxWorkerOptions {
  readonly store: EventStore;
  readonly handlers: EffectHandlers;
  /** Lease owner name, unique per process. */
  readonly owner: string;
  readonly clock?: () => number;
  /** Poll and lease-renewal timers; the system's by default. */
  readonly timers?: Timers;
  readonly leaseMs?: number;
  /** How often to look for retries and expired leases when nothing wakes the worker. */
  readonly pollMs?: number;
  /** Called once when an effect fails for good (its retry policy spent, or a payload that does not decode). */
  readonly onFailed?: (row: OutboxRow, error: unknown) => void;
  readonly log?: (line: string) => void;
  /**
   * Called when a claim leased rows, before they run: a node sharing the log
   * with others folds what they committed, since a row may belong to work its
   * state has not seen yet. None by default.
   */
  readonly beforeRun?: () => Promise<void>;
  /** Threads whose effects another node runs (its agent holds them): read before each claim. None by default. */
  readonly skipStreams?: () => Promise<readonly string[]>;
}

/**
 * Drains the outbox (DESIGN.md invariant 4). Effects of one thread run one at
 * a time in commit order; different threads run in parallel, so a slow
 * provider start never holds up another thread. Each kind's payload is decoded
 * with its schema and retried by its policy (src/contracts/effects.ts). While
 * a handler runs, its lease is renewed, so a long steer or start is never
 * claimed a second time by another worker; and should its lease lapse anyway,
 * this worker never runs a row it is still running again.
 */
export class OutboxWorker {
  private readonly chains = new Map<string, Promise<void>>();
  /** Ids of the rows enqueued or running here. */
  private readonly inFlight = new Set<string>();
  private readonly clock: () => number;
  private readonly leaseMs: number;
  private readonly timers: Timers;
  private timer: TimerHandle | null = null;
  private polling: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly options: OutboxWorkerOptions) {
    this.clock = options.clock ?? Date.now;
    this.leaseMs = options.leaseMs ?? 5 * 60_000;
    this.timers = options.timers ?? systemTimers;
  }

  start(): void {
    this.stopped = false;
    this.timer = this.timers.interval(this.options.pollMs ?? 1_000, () => this.kick(), { unref: true });
    this.kick();
  }

  /** Look for work now (called after every commit that wrote outbox rows). */
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

  /** Resolves when a claim and everything it leased have run (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.polling !== null || this.chains.size > 0) {
      await this.polling;
      await Promise.allSettled([...this.chains.values()]);
    }
  }

  private async poll(): Promise<void> {
    try {
      const skipStreams = this.options.skipStreams === undefined ? undefined : await this.options.skipStreams();
      for (;;) {
        const rows = await this.options.store.claimOutbox({
          owner: this.options.owner,
          now: this.clock(),
          leaseMs: this.leaseMs,
          limit: 64,
          kinds: EFFECT_KINDS,
          ...(skipStreams === undefined ? {} : { skipStreams }),
        });
        if (rows.length > 0) await this.options.beforeRun?.();
        for (const row of rows) this.enqueue(row);
        if (rows.length < 64 || this.stopped) return;
      }
    } catch (error) {
      this.options.log?.(`loom: outbox poll failed: ${String(error)}`);
    }
  }

  private enqueue(row: OutboxRow): void {
    // A row whose lease lapsed while its handler still runs here (lost renewals, a
    // stalled event loop) comes back from a claim: it must not run a second time.
    if (this.inFlight.has(row.id)) {
      this.options.log?.(`loom: effect ${row.kind} was claimed again while it still runs here; not running it twice`);
      return;
    }
    this.inFlight.add(row.id);
    const previous = this.chains.get(row.streamId) ?? Promise.resolve();
    const next = previous.then(() => this.run(row)).finally(() => this.inFlight.delete(row.id));
    this.chains.set(row.streamId, next);
    void next.finally(() => {
      if (this.chains.get(row.streamId) === next) this.chains.delete(row.streamId);
    });
  }

  private async run(row: OutboxRow): Promise<void> {
    const heartbeat = this.timers.interval(
      Math.max(1, Math.floor(this.leaseMs / 3)),
      () => {
        this.options.store.renewOutbox(row.id, this.options.owner, this.clock(), this.leaseMs).catch((error: unknown) => {
          this.options.log?.(`loom: renewing the lease of effect ${row.kind} failed: ${errorText(error)}`);
        });
      },
      { unref: true },
    );
    try {
      await this.handle(row);
      await this.options.store.completeOutbox(row.id, this.options.owner);
    } catch (error) {
      const delay = error instanceof UndecodableEffectError || !isEffectKind(row.kind) ? null : retryDelay(EFFECTS[row.kind].retry, row.attempts);
      const retryAt = delay === null ? null : this.clock() + delay;
      await this.options.store.failOutbox(row.id, this.options.owner, errorText(error), retryAt).catch(() => false);
      if (retryAt === null) this.options.onFailed?.(row, error);
      else this.options.log?.(`loom: effect ${row.kind} failed (attempt ${row.attempts}), retrying: ${errorText(error)}`);
    } finally {
      heartbeat.cancel();
    }
  }

  private handle(row: OutboxRow): Promise<void> {
    if (!isEffectKind(row.kind)) throw new UndecodableEffectError(`no handler for effect ${row.kind}`);
    return this.dispatch(row.kind, row);
  }

  private dispatch<K extends EffectKind>(kind: K, row: OutboxRow): Promise<void> {
    const decoded = EFFECTS[kind].payload.safeParse(row.payload);
    if (!decoded.success) throw new UndecodableEffectError(`effect ${kind} has a malformed payload: ${formatZodIssues(decoded.error)}`);
    const handler = this.options.handlers[kind] as EffectHandler<K>;
    return handler(decoded.data as EffectPayload<K>, { effectId: row.id, attempt: row.attempts, threadId: row.streamId });
  }

  /** Stop claiming; effects already running finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    // A claim in flight enqueues what it leased: wait for it, then for those effects too.
    await this.polling;
    await Promise.allSettled([...this.chains.values()]);
  }
}

/** An effect no handler can run as stored: never retried. */
class UndecodableEffectError extends Error {
  override readonly name = "UndecodableEffectError";
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
