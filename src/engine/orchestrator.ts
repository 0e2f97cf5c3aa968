import type { Command } from "../contracts/commands.js";
import type { CommandReceipt, StoredEvent } from "../contracts/envelopes.js";
import { toDomainEvent } from "../contracts/events.js";
import type { DelegationLimits, ProviderFacts } from "../core/decision.js";
import type { UuidSource } from "../core/ids.js";
import { evolve, initialState, type OrchestrationState } from "../core/state.js";
import type { EventListener, EventStore, Subscription } from "../store/eventStore.js";
import { type Dispatched, Dispatcher } from "./dispatcher.js";
import { type Timeline, stateTimeline } from "./timeline.js";
import { type ShellSnapshot, type ThreadSnapshot, shellSnapshot, threadSnapshot } from "./projections.js";

export interface OrchestratorOptions {
  readonly store: EventStore;
  readonly clock?: () => number;
  readonly uuid?: UuidSource;
  readonly maxBatch?: number;
  /** Provider facts for send-mode selection; without it no thread can run work. */
  readonly providers?: (providerInstanceId: string) => ProviderFacts | null;
  readonly limits?: DelegationLimits;
  /** Capture a checkpoint before and after every turn that may write; off unless set. */
  readonly turnCheckpoints?: boolean;
}

export type CommittedListener = (events: readonly StoredEvent[]) => void;

/** Page size for replaying the log into the state. */
const REPLAY_PAGE = 10_000;

/**
 * The engine's front door: dispatches commands through the single writer and
 * answers queries from the state, which is rebuilt from the log on open.
 */
export class Orchestrator {
  private readonly live: OrchestrationState;
  private readonly dispatcher: Dispatcher;
  private readonly listeners = new Set<CommittedListener>();

  private constructor(
    private readonly store: EventStore,
    state: OrchestrationState,
    options: OrchestratorOptions,
  ) {
    this.live = state;
    this.dispatcher = new Dispatcher({
      store,
      state,
      clock: options.clock ?? Date.now,
      uuid: options.uuid ?? (() => crypto.randomUUID()),
      maxBatch: options.maxBatch,
      providers: options.providers ?? (() => null),
      limits: options.limits,
      turnCheckpoints: options.turnCheckpoints,
      onCommitted: (events) => this.notify(events),
      rebuild: async () => {
        const fresh = await replay(store);
        Object.assign(this.live, fresh);
      },
    });
  }

  static async open(options: OrchestratorOptions): Promise<Orchestrator> {
    const state = await replay(options.store);
    return new Orchestrator(options.store, state, options);
  }

  /** Decide and commit a command; resolves with its receipt. */
  async dispatch(command: Command): Promise<CommandReceipt> {
    return (await this.dispatcher.dispatch(command)).receipt;
  }

  /** Like dispatch, but also hands back the events the command wrote. */
  execute(command: Command): Promise<Dispatched> {
    return this.dispatcher.dispatch(command);
  }

  /**
   * Follow the committed log: events after `after`, then every later commit,
   * each exactly once and in sequence order, delivered once the state has
   * applied it. This is the one live-change path for reactors and waits.
   */
  follow(after: number, listener: EventListener): Subscription {
    return this.store.subscribe(after, listener);
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

  shellSnapshot(options: { includeArchived?: boolean } = {}): ShellSnapshot {
    return shellSnapshot(this.live, options);
  }

  threadSnapshot(threadId: string): ThreadSnapshot | null {
    return threadSnapshot(this.live, threadId);
  }

  /** Listen to every commit's events, after the state has applied them. */
  onCommitted(listener: CommittedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(events: readonly StoredEvent[]): void {
    for (const listener of this.listeners) {
      try {
        listener(events);
      } catch (error) {
        console.error("loom: commit listener failed", error);
      }
    }
  }

  /** Wait for queued commands to finish, then close the store. */
  async close(): Promise<void> {
    await this.store.close();
  }
}

/** Fold the whole log into a fresh state. */
export async function replay(store: EventStore): Promise<OrchestrationState> {
  const state = initialState();
  for (;;) {
    const page = await store.readAll(state.lastSequence, REPLAY_PAGE);
    if (page.length === 0) return state;
    for (const event of page) evolve(state, toDomainEvent(event));
    state.lastSequence = page[page.length - 1]!.sequence;
  }
}
