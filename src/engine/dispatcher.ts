import type { Command } from "../contracts/commands.js";
import type { CommandReceipt, Rejection, StoredEvent } from "../contracts/envelopes.js";
import { type DomainEvent, toDomainEvent } from "../contracts/events.js";
import { decide } from "../core/decider.js";
import { DEFAULT_DELEGATION_LIMITS, type DecideContext, type Decision, type DelegationLimits, type ProviderFacts } from "../core/decision.js";
import { type Allocate, makeAllocate, type UuidSource } from "../core/ids.js";
import { evolve, type OrchestrationState } from "../core/state.js";
import type { CommitEntry, EventStore } from "../store/eventStore.js";

export interface DispatcherOptions {
  readonly store: EventStore;
  readonly state: OrchestrationState;
  /** Epoch milliseconds. */
  readonly clock: () => number;
  readonly uuid: UuidSource;
  /** The decider; core's `decide` unless a test substitutes a mutant (the simulator's planted bugs). */
  readonly decide?: Decide;
  /** Provider facts for send-mode selection; configuration, read at decision time. */
  readonly providers: (providerInstanceId: string) => ProviderFacts | null;
  readonly limits?: DelegationLimits;
  /** Capture a checkpoint before and after every turn that may write (DecideContext.turnCheckpoints). */
  readonly turnCheckpoints?: boolean;
  /** Most commands committed in one transaction. */
  readonly maxBatch?: number;
  /** Called with each event right after the state folded it in: read models kept in step with the state. */
  readonly onEvolved?: (event: DomainEvent) => void;
  /** Called with the events of each commit that wrote events or effects, after the state has them; `wroteEffects`: it added outbox rows. */
  readonly onCommitted?: (events: readonly StoredEvent[], wroteEffects: boolean) => void;
  /** Rebuilds the state from the log after a failed commit left it ahead of the store. */
  readonly rebuild: () => Promise<void>;
}

/** The signature of core's `decide`. */
export type Decide = (state: OrchestrationState, command: Command, ctx: DecideContext) => Decision;

/**
 * What one dispatch did: its receipt and the events it wrote, so a caller
 * learns what the command touched without reading the state again. A repeated
 * commandId (or a rejection) wrote nothing: `events` is empty.
 */
export interface Dispatched {
  readonly receipt: CommandReceipt;
  readonly events: readonly StoredEvent[];
  /** The commandId already had a receipt: nothing was written by this call. */
  readonly duplicate: boolean;
}

interface Pending {
  readonly command: Command;
  readonly resolve: (outcome: Dispatched) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The one writer (DESIGN.md invariant 13). Commands are decided one at a time
 * in arrival order against the in-memory state, so every thread is
 * serialized; the commands that queued up while a commit was running are
 * committed together in one transaction (group commit).
 */
export class Dispatcher {
  private readonly queue: Pending[] = [];
  private draining = false;
  private readonly maxBatch: number;
  /** True while the state holds decided events whose commit has not returned yet. */
  private stateAhead = false;
  private readonly settledWaiters: (() => void)[] = [];
  /** The id allocator of every decision (its uuid source never changes). */
  private readonly allocate: Allocate;

  constructor(private readonly options: DispatcherOptions) {
    this.maxBatch = options.maxBatch ?? 512;
    this.allocate = makeAllocate(options.uuid);
  }

  dispatch(command: Command): Promise<Dispatched> {
    return new Promise<Dispatched>((resolve, reject) => {
      this.queue.push({ command, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        void this.drain();
      }
    });
  }

  /**
   * What the decider would answer `command` now, without recording anything
   * (a dry run): its rejection, or null when it would be accepted. The
   * decision is pure and its events are never folded in; the ids it mints
   * come from a throwaway allocator, so the real id source is untouched.
   */
  check(command: Command): Rejection | null {
    let minted = 0;
    const ctx: DecideContext = { ...this.context(), allocate: makeAllocate(() => `00000000-0000-4000-8000-${(minted += 1).toString(16).padStart(12, "0")}`) };
    const decision = decideSafely(command, () => (this.options.decide ?? decide)(this.options.state, command, ctx));
    return decision.kind === "rejected" ? decision.rejection : null;
  }

  /**
   * Run `callback` when the state holds exactly the committed log up to
   * `state.lastSequence`: at once when no commit is in flight, else right
   * after the running commit returned (or its failure was rolled back),
   * before any later command is decided. A snapshot read inside it and a
   * follow from its `lastSequence` neither miss nor repeat an event.
   */
  atSettledState(callback: () => void): void {
    if (this.stateAhead) this.settledWaiters.push(callback);
    else callback();
  }

  private settle(): void {
    this.stateAhead = false;
    for (const callback of this.settledWaiters.splice(0)) {
      try {
        callback();
      } catch (error) {
        console.error("loom: a settled-state reader failed", error);
      }
    }
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        // Commands arriving during a catch-up join this batch (with none needed, nothing yields).
        const head = this.options.store.knownHead?.() ?? 0;
        if (head > this.options.state.lastSequence) await this.catchUp(head);
        const batch = this.queue.splice(0, this.maxBatch);
        await this.runBatch(batch);
      }
    } finally {
      this.draining = false;
    }
  }

  /**
   * Decide and commit one batch under the log's write lock
   * (EventStore.commitDecided): first fold in what other writers committed
   * since this state's position, then decide each command against the
   * result, so a decision always sees the latest log even when several Loom
   * nodes share it. A command another writer already committed answers with
   * its stored receipt.
   */
  private async runBatch(batch: readonly Pending[]): Promise<void> {
    const { store, state } = this.options;
    const replies: { pending: Pending; outcome: Dispatched }[] = [];
    const owners: Pending[] = [];
    // Set once the decision ran: the state then holds what this batch decided, committed or not.
    let decided = false;
    let wroteEffects = false;
    try {
      const results = await store.commitDecided({
        after: state.lastSequence,
        commandIds: batch.map((pending) => pending.command.commandId),
        decide: (view) => {
          this.fold(view.foreign);
          decided = true;
          const entries = this.decideBatch(batch, view.known, replies, owners);
          wroteEffects = entries.some((entry) => entry.receipt.status === "accepted" && entry.outbox.length > 0);
          // The store numbers this batch's events from the head on, in order: the state is at the last of them.
          state.lastSequence = view.head + entries.reduce((count, entry) => count + (entry.receipt.status === "accepted" ? entry.events.length : 0), 0);
          return entries;
        },
      });
      const committed: StoredEvent[] = [];
      results.forEach((result, index) => {
        committed.push(...result.events);
        replies.push({ pending: owners[index]!, outcome: { receipt: result.receipt, events: result.events, duplicate: result.duplicate } });
      });
      this.settle();
      // A command may write only outbox effects (provider-session.detach): listeners still hear of it, so the outbox worker wakes.
      if (committed.length > 0 || wroteEffects) this.options.onCommitted?.(committed, wroteEffects);
    } catch (error) {
      // The state may hold events that never reached the log: start again from the log.
      if (decided) await this.options.rebuild().catch(() => undefined);
      this.settle();
      for (const p of owners) p.reject(error);
      for (const r of replies) r.pending.resolve(r.outcome);
      return;
    }
    for (const r of replies) r.pending.resolve(r.outcome);
  }

  /**
   * Before taking the log's lock: when the store has heard that other writers
   * committed past this state (EventStore.knownHead), read and fold those
   * events now, so the locked transaction reads and folds only what was
   * committed since. The state then holds committed events only, as between
   * batches. A failed read is left to the locked read, which covers
   * everything after the state's position anyway.
   */
  private async catchUp(head: number): Promise<void> {
    const { store, state } = this.options;
    try {
      this.fold(await store.readAll(state.lastSequence, head - state.lastSequence));
    } catch {
      // The locked read folds the same events.
    }
  }

  /** Fold committed events (ascending) the state does not hold yet. */
  private fold(events: readonly StoredEvent[]): void {
    const { state } = this.options;
    for (const stored of events) {
      if (stored.sequence <= state.lastSequence) continue;
      const domain = toDomainEvent(stored);
      evolve(state, domain);
      this.options.onEvolved?.(domain);
      state.lastSequence = stored.sequence;
    }
  }

  /**
   * Decide each command of the batch against the state, folding accepted
   * events in as it goes, and return the entries to commit. A command with a
   * stored receipt is answered from it; `owners[i]` waits for entry `i`.
   */
  private decideBatch(
    batch: readonly Pending[],
    known: ReadonlyMap<string, CommandReceipt>,
    replies: { pending: Pending; outcome: Dispatched }[],
    owners: Pending[],
  ): CommitEntry[] {
    const { state } = this.options;
    const entries: CommitEntry[] = [];
    const seenInBatch = new Set<string>();
    const ctx = this.context();
    for (const pending of batch) {
      const { command } = pending;
      const stored = known.get(command.commandId);
      if (stored !== undefined) {
        replies.push({ pending, outcome: { receipt: stored, events: [], duplicate: true } });
        continue;
      }
      if (seenInBatch.has(command.commandId)) {
        // The store answers a repeated commandId in one batch with the first receipt.
        entries.push(this.duplicateProbe(command));
        owners.push(pending);
        continue;
      }
      seenInBatch.add(command.commandId);
      const decision = decideSafely(command, () => (this.options.decide ?? decide)(state, command, ctx));
      if (decision.kind === "rejected") {
        entries.push({
          receipt: { status: "rejected", commandId: command.commandId, commandType: command.type, rejection: decision.rejection, rejectedAt: ctx.now },
          events: [],
          outbox: [],
        });
      } else {
        if (decision.events.length > 0) this.stateAhead = true;
        // Decided events are of the event table by their type: folded as they are, with no decoding.
        for (const event of decision.events) {
          evolve(state, event);
          this.options.onEvolved?.(event);
        }
        entries.push({
          receipt: { status: "accepted", commandId: command.commandId, commandType: command.type, acceptedAt: ctx.now },
          events: decision.events,
          outbox: decision.effects,
        });
      }
      owners.push(pending);
    }
    return entries;
  }

  /** An entry the store will recognise as a duplicate of an earlier one in the same batch. */
  private duplicateProbe(command: Command): CommitEntry {
    return {
      receipt: { status: "accepted", commandId: command.commandId, commandType: command.type, acceptedAt: this.context().now },
      events: [],
      outbox: [],
    };
  }

  private context(): DecideContext {
    return { now: new Date(this.options.clock()).toISOString(), allocate: this.allocate, providers: this.options.providers, limits: this.options.limits ?? DEFAULT_DELEGATION_LIMITS, turnCheckpoints: this.options.turnCheckpoints ?? false };
  }
}

/**
 * A decider bug must cost only its own command: it becomes a stored
 * `orchestration_error` rejection instead of failing every command that
 * shares the group commit.
 */
function decideSafely(command: Command, run: () => Decision): Decision {
  try {
    const decision = run() as Decision | undefined;
    if (decision?.kind !== "accepted" && decision?.kind !== "rejected") throw new Error("the decider returned no decision");
    return decision;
  } catch (error) {
    console.error(`loom: deciding ${command.type} (${command.commandId}) threw`, error);
    return { kind: "rejected", rejection: { code: "orchestration_error", message: `deciding ${command.type} failed unexpectedly` } };
  }
}
