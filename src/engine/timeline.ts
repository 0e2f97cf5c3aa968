import type { TurnItem, TurnItemOf, TurnItemType } from "../contracts/turnItems.js";
import type { OrchestrationState } from "../core/state.js";

/** Which items of a thread's timeline to read, and in which order. */
export interface TimelineQuery {
  /** Only items of these types (all types when omitted). */
  readonly types?: readonly TurnItemType[];
  /** Only items with a position greater than this. */
  readonly after?: number;
  /** Only items with a position less than this. */
  readonly before?: number;
  /** Oldest first (default) or newest first. */
  readonly order?: "asc" | "desc";
  /** At most this many items. */
  readonly limit?: number;
}

/**
 * Read access to threads' timelines (turn items). Every reader outside core
 * goes through this interface rather than the folded state's maps, so where
 * items live (the heap today, a store table later) is the timeline's
 * business alone.
 */
export interface Timeline {
  /** The thread's items matching `query`, ordered by position. */
  items(threadId: string, query?: TimelineQuery): TurnItem[];
  /** Whether any item matching `query` exists (cheaper than items().length > 0). */
  has(threadId: string, query: TimelineQuery): boolean;
  /** The item with this id, if the thread has it. */
  item(threadId: string, itemId: string): TurnItem | undefined;
  /** How many positions the thread's timeline has used (its next item's position). */
  size(threadId: string): number;
  /** The user message with this message id, if the thread has it. */
  userMessage(threadId: string, messageId: string): TurnItemOf<"user_message"> | undefined;
  /** The run's latest assistant text: its result. */
  latestAssistantText(threadId: string, runId: string): string | null;
  /**
   * What a run's turn starts with: the user message that started it, else the
   * notification it carries (a notice's follow-up run has no user message).
   */
  runInput(threadId: string, runId: string, messageId: string | null): string;
}

/** The timeline over the in-memory folded state. */
export function stateTimeline(state: OrchestrationState): Timeline {
  const all = (threadId: string): readonly (TurnItem | undefined)[] => state.turnItems.get(threadId) ?? [];
  const matches = (item: TurnItem | undefined, query: TimelineQuery): item is TurnItem =>
    item !== undefined &&
    (query.types === undefined || query.types.includes(item.type)) &&
    (query.after === undefined || item.position > query.after) &&
    (query.before === undefined || item.position < query.before);
  return {
    items(threadId, query = {}) {
      const items = all(threadId);
      const out: TurnItem[] = [];
      const limit = query.limit ?? Number.POSITIVE_INFINITY;
      if (query.order === "desc") {
        for (let i = items.length - 1; i >= 0 && out.length < limit; i--) if (matches(items[i], query)) out.push(items[i]!);
      } else {
        for (let i = 0; i < items.length && out.length < limit; i++) if (matches(items[i], query)) out.push(items[i]!);
      }
      return out;
    },
    has(threadId, query) {
      return all(threadId).some((item) => matches(item, query));
    },
    item(threadId, itemId) {
      if (state.itemThreads.get(itemId) !== threadId) return undefined;
      const items = all(threadId);
      for (let i = items.length - 1; i >= 0; i--) if (items[i]?.id === itemId) return items[i];
      return undefined;
    },
    size(threadId) {
      return all(threadId).length;
    },
    userMessage(threadId, messageId) {
      for (const item of all(threadId)) if (item?.type === "user_message" && item.messageId === messageId) return item;
      return undefined;
    },
    runInput(threadId, runId, messageId) {
      if (messageId !== null) {
        for (const item of all(threadId)) if (item?.type === "user_message" && item.messageId === messageId) return item.text;
        return "";
      }
      for (const item of all(threadId)) if (item?.type === "notification" && item.runId === runId) return item.text;
      return "";
    },
    latestAssistantText(threadId, runId) {
      const items = all(threadId);
      for (let i = items.length - 1; i >= 0; i--) {
        const item = items[i];
        if (item?.runId === runId && item.type === "assistant_message") return item.text;
      }
      return null;
    },
  };
}
