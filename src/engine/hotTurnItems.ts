import type { TurnItem } from "../contracts/turnItems.js";
import { isTerminalRunStatus } from "../contracts/entities/runs.js";
import type { OrchestrationState } from "../core/state.js";
import type { TurnItemReader } from "../store/eventStore.js";

/**
 * Turn items kept in memory only for the threads that need them
 * (docs/architecture.md, "Turn items"). The state's `turnItems` and
 * `itemThreads` maps become these two caches over the store's turn items
 * read model: a read of a thread that is not in memory loads it from the
 * store (synchronously: memory and SQLite), so the decider, the fold and the
 * timeline see every thread's items as before, while finished threads'
 * items leave the heap once they fall out of the most recently used.
 */

/** Idle threads whose items stay in memory unless the orchestrator is told otherwise. */
export const DEFAULT_HOT_THREADS = 64;

/** Item id → thread id for the threads in memory; any other id is looked up in the store. */
export class HotItemThreads extends Map<string, string> {
  constructor(private readonly reader: TurnItemReader) {
    super();
  }

  override get(itemId: string): string | undefined {
    return super.get(itemId) ?? this.reader.threadOfItem(itemId) ?? undefined;
  }
}

/**
 * Thread id → its items (index = position) for the threads in memory, in
 * least-recently-used order; `get` of any other thread loads its items.
 */
export class HotTurnItems extends Map<string, TurnItem[]> {
  constructor(
    private readonly reader: TurnItemReader,
    private readonly itemThreads: HotItemThreads,
  ) {
    super();
  }

  override get(threadId: string): TurnItem[] | undefined {
    const hot = super.get(threadId);
    if (hot !== undefined) {
      // Most recently used last.
      super.delete(threadId);
      super.set(threadId, hot);
      return hot;
    }
    const loaded = this.reader.threadItems(threadId);
    if (loaded.length === 0) return undefined;
    super.set(threadId, loaded);
    for (const item of loaded) if (item !== undefined) this.itemThreads.set(item.id, threadId);
    return loaded;
  }

  /** Drop the thread's items from memory (the store keeps them). */
  evict(threadId: string): void {
    const items = super.get(threadId);
    if (items === undefined) return;
    super.delete(threadId);
    for (const item of items) if (item !== undefined && this.itemThreads.get(item.id) === threadId) this.itemThreads.delete(item.id);
  }

  /**
   * Keep at most `idle` threads' items in memory besides the live ones
   * (`live` says whether a thread still runs): evict the least recently used
   * idle threads beyond that.
   */
  trim(idle: number, live: (threadId: string) => boolean): void {
    if (this.size <= idle) return;
    const idleThreads: string[] = [];
    for (const threadId of this.keys()) if (!live(threadId)) idleThreads.push(threadId);
    // Least recently used first.
    for (let i = 0; i < idleThreads.length - idle; i++) this.evict(idleThreads[i]!);
  }
}

/** Whether the thread's latest run has not ended (queued, starting, running, waiting): its items stay in memory. */
export function threadIsLive(state: Readonly<OrchestrationState>, threadId: string): boolean {
  const runs = state.threadRuns.get(threadId);
  const latest = runs === undefined ? undefined : state.runs.get(runs[runs.length - 1]!);
  return latest !== undefined && !isTerminalRunStatus(latest.status);
}

/**
 * Turn the state's item maps into caches over `reader` (what the maps held
 * stays in memory, most recently used last). Without a reader (a backend
 * whose reads wait on the network) the state keeps every item in memory.
 */
export function attachTurnItems(state: OrchestrationState, reader: TurnItemReader | null): void {
  if (reader === null || state.turnItems instanceof HotTurnItems) return;
  const itemThreads = new HotItemThreads(reader);
  const turnItems = new HotTurnItems(reader, itemThreads);
  for (const [threadId, items] of state.turnItems) {
    turnItems.set(threadId, items);
    for (const item of items) if (item !== undefined) itemThreads.set(item.id, threadId);
  }
  const writable = state as { turnItems: Map<string, TurnItem[]>; itemThreads: Map<string, string> };
  writable.turnItems = turnItems;
  writable.itemThreads = itemThreads;
}

/** Keep at most `idle` idle threads' items in memory (no-op when the state keeps every item). */
export function trimTurnItems(state: Readonly<OrchestrationState>, idle: number): void {
  if (state.turnItems instanceof HotTurnItems) state.turnItems.trim(idle, (threadId) => threadIsLive(state, threadId));
}

/** The state's item maps as a snapshot holds them: empty when the store keeps the items, else as they are. */
export function itemsForSnapshot(state: Readonly<OrchestrationState>): Pick<OrchestrationState, "turnItems" | "itemThreads"> {
  if (state.turnItems instanceof HotTurnItems) return { turnItems: new Map(), itemThreads: new Map() };
  return { turnItems: state.turnItems, itemThreads: state.itemThreads };
}
