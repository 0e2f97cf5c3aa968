import type { TurnItem } from "../contracts/turnItems.js";

/**
 * The turn items' read model every backend keeps beside the log
 * (docs/architecture.md, "Turn items"): the latest version of each item,
 * written in the transaction of the `turn-item.updated` event that carries
 * it, keyed by thread and position as the fold keys them.
 */

/** The event type whose data (`{ item }`) the read model keeps. */
export const TURN_ITEM_EVENT = "turn-item.updated";

/** Where an item event's item goes; null for any other event or data without a thread and position. */
export interface TurnItemKey {
  readonly threadId: string;
  readonly position: number;
  readonly itemId: string;
}

export function turnItemKey(type: string, data: unknown): TurnItemKey | null {
  if (type !== TURN_ITEM_EVENT || typeof data !== "object" || data === null) return null;
  const item = (data as { item?: unknown }).item;
  if (typeof item !== "object" || item === null) return null;
  const { threadId, position, id } = item as { threadId?: unknown; position?: unknown; id?: unknown };
  if (typeof threadId !== "string" || typeof id !== "string" || !Number.isSafeInteger(position) || (position as number) < 0) return null;
  return { threadId, position: position as number, itemId: id };
}

/** Items by position into an array whose index is the position (holes where a position has none). */
export function byPosition(items: Iterable<TurnItem>): TurnItem[] {
  const out: TurnItem[] = [];
  for (const item of items) out[item.position] = item;
  return out;
}
