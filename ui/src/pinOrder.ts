import type { ThreadShell } from "../../src/contracts/wire/projections.js";

/**
 * The pinned threads' order and its moves, for `thread.pin.reorder`, whose
 * `threadIds` must name every pinned thread once, in the new order.
 */

/** Every pinned thread's id, by pin rank. */
export function pinnedOrder(threads: Iterable<ThreadShell>): string[] {
  return [...threads]
    .filter((row) => row.pinnedRank !== null)
    .sort((a, b) => a.pinnedRank! - b.pinnedRank!)
    .map((row) => row.id);
}

/** `order` with `id` moved just before (or, with `after`, just after) `target`; null when nothing changes. */
export function movePinned(order: readonly string[], id: string, target: string, after: boolean): string[] | null {
  if (id === target || !order.includes(id) || !order.includes(target)) return null;
  const rest = order.filter((other) => other !== id);
  const at = rest.indexOf(target) + (after ? 1 : 0);
  const next = [...rest.slice(0, at), id, ...rest.slice(at)];
  return next.every((other, i) => other === order[i]) ? null : next;
}

/** `order` with `id` one place up (-1) or down (+1); null at either end. */
export function stepPinned(order: readonly string[], id: string, step: -1 | 1): string[] | null {
  const at = order.indexOf(id);
  const to = at + step;
  if (at === -1 || to < 0 || to >= order.length) return null;
  const next = [...order];
  [next[at], next[to]] = [next[to]!, next[at]!];
  return next;
}
