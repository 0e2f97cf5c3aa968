import { toDomainEvent } from "../contracts/events.js";
import { evolve, initialState, type OrchestrationState } from "../core/state.js";
import type { EventStore, TurnItemReader } from "../store/eventStore.js";
import { HotTurnItems, attachTurnItems, DEFAULT_HOT_THREADS, trimTurnItems } from "./hotTurnItems.js";
import { STATE_SNAPSHOT_VERSION, decodeState } from "./stateSnapshot.js";
import { ThreadIndex } from "./threadIndex.js";

/**
 * Page size for replaying the log into the state. Small enough that a page's
 * rows and parsed events die young: pages of 10,000 events of about 1 KB
 * outgrew the young generation, were promoted and left to major collections,
 * and garbage collection took about half of a replay's time (page 1,000 made
 * replay about 1.6 times as fast; bench/coreBench.ts).
 */
const REPLAY_PAGE = 1_000;

/** How many events apart the state's turn items are trimmed during a full fold. */
const TRIM_EVERY = 10_000;

/** The state and the thread lists kept in step with it. */
export interface Folded {
  readonly state: OrchestrationState;
  readonly index: ThreadIndex;
}

/** How start-up got its state: from a snapshot plus the log's tail, or from the whole log (and why). */
export interface RestoreReport {
  /** The snapshot's log position, or null when the whole log was replayed. */
  readonly snapshotSequence: number | null;
  /** Events folded from the log after the snapshot (all of them without one). */
  readonly replayed: number;
  /** Why a stored snapshot was not used; null when there was none of this version or it was used. */
  readonly discarded: string | null;
}

/** How many idle threads' turn items to keep in memory (DEFAULT_HOT_THREADS unless given). */
export interface RestoreOptions {
  readonly hotThreads?: number;
}

/**
 * Fold the log's events after `state.lastSequence` into the state and its
 * index. Returns how many events that covered. When the state's turn items
 * are a cache over the store's read model with nothing in memory yet (start-up:
 * a snapshot holds no items), the `turn-item.updated` events are skipped
 * unread: the read model was written with them, and they change nothing else
 * in the state. Otherwise every event is folded, and every TRIM_EVERY events and at the end the
 * state's turn items are trimmed to the most recently used threads.
 */
export async function foldTail(store: EventStore, folded: Folded, options: RestoreOptions = {}): Promise<number> {
  const { state, index } = folded;
  const reader = store.turnItems;
  if (reader !== null && state.turnItems instanceof HotTurnItems && state.turnItems.size === 0) return foldBesideItems(reader, folded);
  let count = 0;
  for (;;) {
    const page = await store.readAll(state.lastSequence, REPLAY_PAGE);
    if (page.length === 0) {
      trimTurnItems(state, options.hotThreads ?? DEFAULT_HOT_THREADS);
      return count;
    }
    for (const stored of page) {
      const event = toDomainEvent(stored);
      evolve(state, event);
      index.apply(event);
    }
    const before = count;
    count += page.length;
    state.lastSequence = page[page.length - 1]!.sequence;
    if (Math.floor(count / TRIM_EVERY) !== Math.floor(before / TRIM_EVERY)) trimTurnItems(state, options.hotThreads ?? DEFAULT_HOT_THREADS);
  }
}

/** foldTail without the turn item events, which leave the state's (empty) item cache as it is; synchronous, as the reader is. */
function foldBesideItems(reader: TurnItemReader, folded: Folded): number {
  const { state, index } = folded;
  let count = 0;
  for (;;) {
    const page = reader.readBesideItems(state.lastSequence, REPLAY_PAGE);
    if (page.covered === 0) return count;
    for (const stored of page.events) {
      const event = toDomainEvent(stored);
      evolve(state, event);
      index.apply(event);
    }
    count += page.covered;
    state.lastSequence = page.through;
  }
}

/** Fold the whole log into a fresh state and its thread lists. */
export async function replayAll(store: EventStore, options: RestoreOptions = {}): Promise<Folded> {
  const folded = { state: initialState(), index: new ThreadIndex() };
  attachTurnItems(folded.state, store.turnItems);
  await foldTail(store, folded, options);
  return folded;
}

/**
 * Start from the store's snapshot of this code's state version, if any, and
 * fold only the events after it; without a usable snapshot (none, another
 * version, bytes that do not decode to this state) replay the whole log.
 * Snapshots of another version are never loaded: loadSnapshot asks for this one.
 */
export async function restore(store: EventStore, options: RestoreOptions = {}): Promise<Folded & { readonly report: RestoreReport }> {
  const snapshot = await store.loadSnapshot(STATE_SNAPSHOT_VERSION);
  let discarded: string | null = null;
  if (snapshot !== null) {
    let state: OrchestrationState | null = null;
    try {
      state = decodeState(snapshot.body);
      if (state.lastSequence !== snapshot.sequence) throw new Error(`it holds position ${state.lastSequence}, its row says ${snapshot.sequence}`);
    } catch (error) {
      state = null;
      discarded = error instanceof Error ? error.message : String(error);
    }
    if (state !== null) {
      attachTurnItems(state, store.turnItems);
      const folded = { state, index: ThreadIndex.of(state.threads.values()) };
      const replayed = await foldTail(store, folded, options);
      return { ...folded, report: { snapshotSequence: snapshot.sequence, replayed, discarded: null } };
    }
  }
  const folded = await replayAll(store, options);
  return { ...folded, report: { snapshotSequence: null, replayed: folded.state.lastSequence, discarded } };
}
