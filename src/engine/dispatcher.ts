import type { Command } from "../contracts/commands.js";
import type { CommandReceipt, StoredEvent } from "../contracts/envelopes.js";
import { toDomainEvent } from "../contracts/events.js";
import { decide } from "../core/decider.js";
import { DEFAULT_DELEGATION_LIMITS, type DecideContext, type Decision, type DelegationLimits, type ProviderFacts } from "../core/decision.js";
import { makeAllocate, type UuidSource } from "../core/ids.js";
import { evolve, type OrchestrationState } from "../core/state.js";
import type { CommitEntry, EventStore } from "../store/eventStore.js";

export interface DispatcherOptions {
  readonly store: EventStore;
  readonly state: OrchestrationState;
  /** Epoch milliseconds. */
  readonly clock: () => number;
  readonly uuid: UuidSource;
  /** Provider facts for send-mode selection; configuration, read at decision time. */
  readonly providers: (providerInstanceId: string) => ProviderFacts | null;
  readonly limits?: DelegationLimits;
  /** Capture a checkpoint before and after every turn that may write (DecideContext.turnCheckpoints). */
  readonly turnCheckpoints?: boolean;
  /** Most commands committed in one transaction. */
  readonly maxBatch?: number;
  /** Called with the events of each commit that wrote events or effects, after the state has them. */
  readonly onCommitted?: (events: readonly StoredEvent[]) => void;
  /** Rebuilds the state from the log after a failed commit left it ahead of the store. */
  readonly rebuild: () => Promise<void>;
}

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

  constructor(private readonly options: DispatcherOptions) {
    this.maxBatch = options.maxBatch ?? 512;
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

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        await this.runBatch(batch);
      }
    } finally {
      this.draining = false;
    }
  }

  private async runBatch(batch: readonly Pending[]): Promise<void> {
    const { store, state } = this.options;
    let stored: (CommandReceipt | null)[];
    try {
      stored = await Promise.all(batch.map((p) => store.lookupReceipt(p.command.commandId)));
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    const entries: CommitEntry[] = [];
    const owners: Pending[] = [];
    const replies: { pending: Pending; outcome: Dispatched }[] = [];
    const seenInBatch = new Set<string>();
    const ctx = this.context();
    let evolved = false;
    try {
      batch.forEach((pending, index) => {
        const known = stored[index];
        if (known) {
          replies.push({ pending, outcome: { receipt: known, events: [], duplicate: true } });
          return;
        }
        const { command } = pending;
        if (seenInBatch.has(command.commandId)) {
          // The store answers a repeated commandId in one batch with the first receipt.
          entries.push(this.duplicateProbe(command));
          owners.push(pending);
          return;
        }
        seenInBatch.add(command.commandId);
        const decision = decideSafely(command, () => decide(state, command, ctx));
        if (decision.kind === "rejected") {
          entries.push({
            receipt: { status: "rejected", commandId: command.commandId, commandType: command.type, rejection: decision.rejection, rejectedAt: ctx.now },
            events: [],
            outbox: [],
          });
        } else {
          for (const event of decision.events) evolve(state, toDomainEvent(event));
          evolved ||= decision.events.length > 0;
          entries.push({
            receipt: { status: "accepted", commandId: command.commandId, commandType: command.type, acceptedAt: ctx.now },
            events: decision.events,
            outbox: decision.effects,
          });
        }
        owners.push(pending);
      });
      const results = entries.length > 0 ? await store.commit(entries) : [];
      const committed: StoredEvent[] = [];
      results.forEach((result, index) => {
        committed.push(...result.events);
        replies.push({ pending: owners[index]!, outcome: { receipt: result.receipt, events: result.events, duplicate: result.duplicate } });
      });
      if (committed.length > 0) state.lastSequence = committed[committed.length - 1]!.sequence;
      // A command may write only outbox effects (provider-session.detach): listeners still hear of it, so the outbox worker wakes.
      const wroteEffects = entries.some((entry) => entry.receipt.status === "accepted" && entry.outbox.length > 0);
      if (committed.length > 0 || wroteEffects) this.options.onCommitted?.(committed);
    } catch (error) {
      // The state may hold events that never reached the log: start again from the log.
      if (evolved) await this.options.rebuild().catch(() => undefined);
      for (const p of owners) p.reject(error);
      for (const r of replies) r.pending.resolve(r.outcome);
      return;
    }
    for (const r of replies) r.pending.resolve(r.outcome);
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
    return { now: new Date(this.options.clock()).toISOString(), allocate: makeAllocate(this.options.uuid), providers: this.options.providers, limits: this.options.limits ?? DEFAULT_DELEGATION_LIMITS, turnCheckpoints: this.options.turnCheckpoints ?? false };
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
