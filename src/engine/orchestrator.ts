import type { Command } from "../contracts/commands.js";
import type { AcceptedReceipt, CommandReceipt, Rejection, StoredEvent } from "../contracts/envelopes.js";
import { isTerminalRunStatus } from "../contracts/entities/runs.js";
import { type DomainEvent, toDomainEvent } from "../contracts/events.js";
import type { DelegationLimits, ProviderFacts } from "../core/decision.js";
import type { UuidSource } from "../core/ids.js";
import { evolve, type OrchestrationState } from "../core/state.js";
import type { EventListener, EventStore, Subscription } from "../store/eventStore.js";
import { SubscriptionHub } from "../store/subscriptions.js";
import { isStoreClosed } from "../store/storeErrors.js";
import { type Decide, type Dispatched, Dispatcher } from "./dispatcher.js";
import { LiveChannel } from "./liveChannel.js";
import { type Timeline, stateTimeline } from "./timeline.js";
import { type ShellSnapshot, type ThreadSnapshot, shellSnapshot, threadSnapshot } from "./projections.js";
import { DEFAULT_HOT_THREADS, trimTurnItems } from "./hotTurnItems.js";
import { type Folded, type RestoreReport, replayAll, restore } from "./restore.js";
import { DEFAULT_SNAPSHOT_EVERY, SnapshotWriter } from "./snapshotWriter.js";
import type { ThreadIndex } from "./threadIndex.js";

export interface OrchestratorOptions {
  readonly store: EventStore;
  readonly clock?: () => number;
  readonly uuid?: UuidSource;
  readonly maxBatch?: number;
  /** Provider facts for send-mode selection; without it no thread can run work. */
  readonly providers?: (providerInstanceId: string) => ProviderFacts | null;
  readonly limits?: DelegationLimits;
  /** The decider; core's `decide` unless a test substitutes a mutant. */
  readonly decide?: Decide;
  /** Capture a checkpoint before and after every turn that may write; off unless set. */
  readonly turnCheckpoints?: boolean;
  /**
   * Save a state snapshot into the store every this many events, and on
   * close (default DEFAULT_SNAPSHOT_EVERY); null never saves one. Start-up
   * loads the latest snapshot of this code's state version either way.
   */
  readonly snapshotEvery?: number | null;
  /**
   * Keep the turn items of at most this many threads in memory besides the
   * live ones (default DEFAULT_HOT_THREADS); the rest are read from the
   * store on demand. Backends whose reads wait on the network (PostgreSQL)
   * keep every item in memory.
   */
  readonly hotThreads?: number;
  /**
   * The outbox worker's wake-up, called after each of this process's commits
   * (`wroteEffects` when it added outbox rows, so the worker has work). It is
   * the only in-process commit callback: every other live view follows the
   * log (`follow`), which also hears the commits of other nodes.
   */
  readonly wakeOutbox?: (wroteEffects: boolean) => void;
}

/**
 * The engine's front door: dispatches commands through the single writer and
 * answers queries from the state, which is rebuilt from the log on open.
 */
export class Orchestrator {
  private readonly live: OrchestrationState;
  private readonly index: ThreadIndex;
  private readonly dispatcher: Dispatcher;
  /** Re-publishes the log to followers once the state has applied each event. */
  private readonly followers: SubscriptionHub;
  /** The store subscription every committed event arrives through, this process's and other writers'. */
  private readonly tail: Subscription;
  /** Streaming that is not history: assistant deltas and command output (DESIGN invariant 14). */
  readonly liveChannel = new LiveChannel();
  private readonly snapshots: SnapshotWriter | null;
  private readonly hotThreads: number;

  private constructor(
    private readonly store: EventStore,
    folded: Folded & { readonly report: RestoreReport },
    options: OrchestratorOptions,
  ) {
    const { state, index } = folded;
    this.live = state;
    this.index = index;
    this.restored = folded.report;
    this.hotThreads = Math.max(0, Math.floor(options.hotThreads ?? DEFAULT_HOT_THREADS));
    this.followers = new SubscriptionHub((after, limit) => store.readAll(after, limit), { onListenerError: (error, event) => reportFollowerError(error, event) });
    this.tail = store.subscribe(state.lastSequence, (event) => this.onLogEvent(event));
    this.dispatcher = new Dispatcher({
      store,
      state,
      clock: options.clock ?? Date.now,
      uuid: options.uuid ?? (() => crypto.randomUUID()),
      decide: options.decide,
      maxBatch: options.maxBatch,
      providers: options.providers ?? (() => null),
      limits: options.limits,
      onEvolved: (event) => this.evolved(event),
      turnCheckpoints: options.turnCheckpoints,
      onCommitted: (_events, wroteEffects) => this.committed(wroteEffects, options.wakeOutbox),
      rebuild: async () => {
        const fresh = await restore(store, { hotThreads: this.hotThreads });
        Object.assign(this.live, fresh.state);
        this.index.replaceWith(fresh.index);
      },
    });
    const every = options.snapshotEvery === undefined ? DEFAULT_SNAPSHOT_EVERY : options.snapshotEvery;
    this.snapshots =
      every === null
        ? null
        : new SnapshotWriter({
            store,
            state,
            every: Math.max(1, Math.floor(every)),
            savedThrough: folded.report.snapshotSequence ?? 0,
            atSettledState: (read) => this.dispatcher.atSettledState(read),
          });
  }

  /**
   * Load the latest snapshot and fold the log's tail (or the whole log
   * without one), then take commands. Resolves once the orchestrator follows
   * the log live: until its subscription has replayed, commits would only
   * queue in its buffer, and a burst that never lets the event loop turn
   * would keep all of its events in memory. Rejects when the log cannot be
   * followed.
   */
  static async open(options: OrchestratorOptions): Promise<Orchestrator> {
    const orchestrator = new Orchestrator(options.store, await restore(options.store, { hotThreads: options.hotThreads }), options);
    await orchestrator.tail.caughtUp;
    return orchestrator;
  }

  /** How start-up got its state: from which snapshot, how many events it replayed. */
  readonly restored: RestoreReport;

  /** Save a state snapshot now (unless the last one is current); resolves once written. */
  snapshot(): Promise<void> {
    return this.snapshots?.save() ?? Promise.resolve();
  }

  /** Decide and commit a command; resolves with its receipt. */
  async dispatch(command: Command): Promise<CommandReceipt> {
    return (await this.dispatcher.dispatch(command)).receipt;
  }

  /** What the decider would answer `command` now, recording nothing: its rejection, or null (a dry run). */
  check(command: Command): Rejection | null {
    return this.dispatcher.check(command);
  }

  /** Like dispatch, but also hands back the events the command wrote. */
  execute(command: Command): Promise<Dispatched> {
    return this.dispatcher.dispatch(command);
  }

  /** A committed command's receipt (an accepted one names the sequence of its last event), or null. */
  receiptOf(commandId: string): Promise<CommandReceipt | null> {
    return this.store.lookupReceipt(commandId);
  }

  /** The events an accepted command wrote, read back from the log, so a repeated commandId gets them too. */
  async eventsOf(receipt: AcceptedReceipt): Promise<readonly StoredEvent[]> {
    if (receipt.eventCount === 0) return [];
    const events = await this.store.readAll(receipt.sequence - receipt.eventCount, receipt.eventCount);
    return events.filter((event) => event.commandId === receipt.commandId);
  }

  /**
   * Follow the committed log: events after `after`, then every later commit,
   * each exactly once and in sequence order, delivered once the state has
   * applied it. This is the one live-change path for reactors and waits.
   */
  follow(after: number, listener: EventListener): Subscription {
    return this.followers.subscribe(after, listener);
  }

  /**
   * Every committed event, in order, exactly once. This process's own
   * commits were folded in when they were decided; another writer's (a
   * second Loom node on the same database) are folded in here. Then
   * followers hear of it.
   */
  private onLogEvent(event: StoredEvent): void {
    this.apply(event);
    this.followers.publish([event]);
  }

  /** Fold one committed event the state does not hold yet. */
  private apply(event: StoredEvent): void {
    if (event.sequence <= this.live.lastSequence) return;
    const domain = toDomainEvent(event);
    evolve(this.live, domain);
    this.evolved(domain);
    this.live.lastSequence = event.sequence;
    trimTurnItems(this.live, this.hotThreads);
    this.snapshots?.progressed();
  }

  /** What follows an event the state folded: the thread index, and a run's end closes its live output streams. */
  private evolved(event: DomainEvent): void {
    this.index.apply(event);
    if (event.type === "run.updated" && isTerminalRunStatus(event.data.run.status)) this.liveChannel.endRunOutputs(event.data.run.id);
  }

  /**
   * Fold everything the log holds now, without waiting for the tail to bring
   * it (docs/postgres.md, Who runs what): an outbox row claimed from a shared
   * log may belong to a run another node created a moment ago. Followers
   * still hear of each event from the tail, once.
   */
  async syncWithLog(): Promise<void> {
    const head = await this.store.lastSequence();
    while (this.live.lastSequence < head) {
      const events = await this.store.readAll(this.live.lastSequence, Math.min(1_000, head - this.live.lastSequence));
      if (events.length === 0) return;
      for (const event of events) this.apply(event);
    }
  }

  /**
   * Read the state at a point where it holds exactly the committed log up to
   * `state.lastSequence` (never events of a commit still in flight), so a
   * snapshot taken here and `follow(state.lastSequence)` together see every
   * event once: the wire's snapshot-then-stream subscriptions start here.
   */
  readCommitted<T>(read: (state: Readonly<OrchestrationState>) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.dispatcher.atSettledState(() => {
        try {
          resolve(read(this.live));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
  }

  /** Threads' timelines (turn items): read them here, not from the state's maps. */
  get timeline(): Timeline {
    return (this.timelineView ??= stateTimeline(this.live));
  }

  private timelineView: Timeline | null = null;

  /** The live folded state, current as of the last commit. Callers must not mutate it. */
  get state(): Readonly<OrchestrationState> {
    return this.live;
  }

  /** Thread lists in newest-first order, in step with the state (t3_thread_list, the shell snapshot). */
  get threads(): ThreadIndex {
    return this.index;
  }

  shellSnapshot(options: { includeArchived?: boolean } = {}): ShellSnapshot {
    return shellSnapshot(this.live, options);
  }

  threadSnapshot(threadId: string): ThreadSnapshot | null {
    return threadSnapshot(this.live, threadId);
  }

  private committed(wroteEffects: boolean, wakeOutbox: ((wroteEffects: boolean) => void) | undefined): void {
    trimTurnItems(this.live, this.hotThreads);
    this.snapshots?.progressed();
    try {
      wakeOutbox?.(wroteEffects);
    } catch (error) {
      console.error("loom: waking the outbox worker failed", error);
    }
  }

  /** Save a last state snapshot, then close the store. */
  async close(): Promise<void> {
    this.tail.close();
    this.followers.closeAll();
    await this.snapshots?.close();
    await this.store.close();
  }
}

/** Fold the whole log into a fresh state (no snapshot). */
export async function replay(store: EventStore): Promise<OrchestrationState> {
  return (await replayAll(store)).state;
}

function reportFollowerError(error: unknown, event: StoredEvent | null): void {
  // A follower that read the store as it closed under it is the server stopping, not a fault.
  if (isStoreClosed(error)) return;
  const where = event === null ? "while catching up" : `on event ${event.sequence} (${event.type})`;
  console.error(`loom: a log follower failed ${where}`, error);
}
