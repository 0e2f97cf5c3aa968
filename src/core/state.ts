import type { AppThread } from "../contracts/thread.js";
import type { DomainEvent } from "../contracts/events.js";

/**
 * The state decide reads and evolve folds events into. It is the engine's
 * in-memory read model too: one fold serves decisions and projections.
 *
 * evolve updates the state in place and returns it: folding a million events
 * through copied maps would be quadratic. It performs no I/O and depends on
 * nothing but its inputs, so given/when/then tests fold fresh states.
 */
export interface OrchestrationState {
  readonly threads: Map<string, AppThread>;
  /** Sequence of the last event folded in. */
  lastSequence: number;
}

export function initialState(): OrchestrationState {
  return { threads: new Map(), lastSequence: 0 };
}

export function evolve(state: OrchestrationState, event: DomainEvent): OrchestrationState {
  switch (event.type) {
    case "thread.created":
    case "thread.archived":
    case "thread.unarchived":
    case "thread.deleted":
    case "thread.settled":
    case "thread.unsettled":
    case "thread.snoozed":
    case "thread.unsnoozed":
    case "thread.pinned":
    case "thread.auto-settle-set":
    case "thread.unpinned":
    case "thread.pin-reordered":
    case "thread.active-reordered":
    case "thread.visited":
    case "thread.marked-unread":
    case "thread.metadata-updated":
    case "thread.pull-request-link-updated":
    case "thread.runtime-mode-updated":
    case "thread.interaction-mode-updated":
    case "thread.model-selection-updated":
      state.threads.set(event.data.thread.id, event.data.thread);
      return state;
    case "unknown":
      return state;
    default: {
      const exhaustive: never = event;
      return exhaustive;
    }
  }
}
