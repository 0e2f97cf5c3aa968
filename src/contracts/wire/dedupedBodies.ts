import type { Subagent } from "../entities/subagents.js";
import type { TurnItem } from "../turnItems.js";
import { setField } from "./idTable.js";
import type { ThreadStreamUpdate, WireEvent } from "./projections.js";

/**
 * Body dedupe (spec 004 §3.3 `dedupeBodies`). Large bodies of turn items are
 * left out when the client already holds the same body under the same key,
 * and the item says so with a flag:
 *
 * | body | items | key | flag |
 * |---|---|---|---|
 * | message text | user_message, assistant_message | its messageId | `textOmitted` |
 * | checkpoint file list | checkpoint | its scopeId (the scope's latest list) | `filesOmitted` |
 * | subagent prompt | subagent | its subagentId | `promptOmitted` |
 * | subagent result | subagent | its subagentId | `resultOmitted` |
 *
 * What the client holds is what it was sent before, walked in one fixed
 * order: a record's `subagents` entities first (they feed the memory and are
 * never cut), then its turn items in array order. A snapshot remembers every
 * key for its own length; a live connection remembers the last
 * LIVE_DEDUPE_MEMORY keys (least recently used goes first), and both sides
 * apply the same operations in the same order, so expansion is exact.
 * Records handed to the deduper never carry the flags themselves.
 */

export const LIVE_DEDUPE_MEMORY = 32;

type BodySlot = "text" | "files" | "prompt" | "result";
const FLAG: { readonly [S in BodySlot]: "textOmitted" | "filesOmitted" | "promptOmitted" | "resultOmitted" } = {
  text: "textOmitted",
  files: "filesOmitted",
  prompt: "promptOmitted",
  result: "resultOmitted",
};

/** The keyed bodies an item may omit, in a fixed order. */
function slotsOf(item: TurnItem): { slot: BodySlot; key: string }[] {
  switch (item.type) {
    case "user_message":
    case "assistant_message":
      return [{ slot: "text", key: `message:${item.messageId}` }];
    case "checkpoint":
      return [{ slot: "files", key: `files:${item.scopeId}` }];
    case "subagent":
      return [
        { slot: "prompt", key: `prompt:${item.subagentId}` },
        { slot: "result", key: `result:${item.subagentId}` },
      ];
    default:
      return [];
  }
}

/** What one side remembers: key → the body's JSON form. */
export interface BodyMemory {
  get(key: string): string | undefined;
  /** Remember (or refresh) a key; a bounded memory forgets its least recently used key. */
  set(key: string, body: string): void;
}

/** A memory of the last `capacity` keys, least recently used first out; a read refreshes a key. */
export class LruBodyMemory implements BodyMemory {
  private readonly entries = new Map<string, string>();
  constructor(private readonly capacity: number = LIVE_DEDUPE_MEMORY) {}

  get(key: string): string | undefined {
    const body = this.entries.get(key);
    if (body !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, body);
    }
    return body;
  }

  set(key: string, body: string): void {
    this.entries.delete(key);
    this.entries.set(key, body);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}

/** A memory that forgets nothing: one snapshot's own walk. */
export function unboundedMemory(): BodyMemory {
  return new Map<string, string>();
}

function bodyOf(record: Record<string, unknown>, slot: BodySlot): string {
  return JSON.stringify(record[slot] ?? null);
}

/** Feed a subagent entity's prompt and result to the memory (entities are never cut). */
function rememberSubagent(subagent: Pick<Subagent, "id" | "prompt" | "result">, memory: BodyMemory): void {
  memory.set(`prompt:${subagent.id}`, JSON.stringify(subagent.prompt));
  memory.set(`result:${subagent.id}`, JSON.stringify(subagent.result));
}

/** The item with each body the memory already holds left out and flagged; the memory learns the rest. */
export function dedupeItem(item: TurnItem, memory: BodyMemory): TurnItem {
  let out: Record<string, unknown> | null = null;
  for (const { slot, key } of slotsOf(item)) {
    const body = bodyOf(item, slot);
    if (memory.get(key) === body) {
      out ??= { ...item };
      delete out[slot];
      setField(out, FLAG[slot], true);
    } else {
      memory.set(key, body);
    }
  }
  return (out ?? item) as TurnItem;
}

/** The item with its omitted bodies put back from the memory; the memory learns the bodies it carries. */
export function expandItem(item: TurnItem, memory: BodyMemory): TurnItem {
  let out: Record<string, unknown> | null = null;
  for (const { slot, key } of slotsOf(item)) {
    const flag = FLAG[slot];
    if ((item as Record<string, unknown>)[flag] === true) {
      const body = memory.get(key);
      if (body === undefined) throw new Error(`${flag} on item ${item.id}, but no ${slot} body is known for ${key}`);
      out ??= { ...item };
      delete out[flag];
      setField(out, slot, JSON.parse(body) as unknown);
    } else {
      memory.set(key, bodyOf(item, slot));
    }
  }
  return (out ?? item) as TurnItem;
}

/** A record with turn items and, optionally, the subagent entities they name. */
export interface RecordWithBodies {
  readonly items: readonly TurnItem[];
  readonly subagents?: readonly Subagent[];
}

/** Walk a record in the dedupe order: subagents, then items. */
function walk<R extends RecordWithBodies>(record: R, memory: BodyMemory, onItem: (item: TurnItem, memory: BodyMemory) => TurnItem): R {
  for (const subagent of record.subagents ?? []) rememberSubagent(subagent, memory);
  return { ...record, items: record.items.map((item) => onItem(item, memory)) };
}

export function dedupeRecordBodies<R extends RecordWithBodies>(record: R, memory: BodyMemory = unboundedMemory()): R {
  return walk(record, memory, dedupeItem);
}

export function expandRecordBodies<R extends RecordWithBodies>(record: R, memory: BodyMemory = unboundedMemory()): R {
  return walk(record, memory, expandItem);
}

/**
 * A committed event as streams carry it: a turn item event may omit bodies,
 * a subagent event feeds the memory. Other events pass through.
 */
export function dedupeEventBodies(event: { readonly type: string; readonly data: unknown }, memory: BodyMemory, expand: boolean): unknown {
  if (event.type === "turn-item.updated") {
    const data = event.data as { item: TurnItem };
    return { ...event, data: { ...data, item: expand ? expandItem(data.item, memory) : dedupeItem(data.item, memory) } };
  }
  if (event.type === "subagent.updated") rememberSubagent((event.data as { subagent: Subagent }).subagent, memory);
  return event;
}

/** Dedupe (or, with `expand`, restore) one subscribeThread update against the connection's memory. */
export function dedupeThreadUpdate(update: ThreadStreamUpdate, memory: BodyMemory, expand: boolean): ThreadStreamUpdate {
  switch (update.kind) {
    case "snapshot":
      return { kind: "snapshot", snapshot: expand ? expandRecordBodies(update.snapshot, memory) : dedupeRecordBodies(update.snapshot, memory) };
    case "event":
      return { kind: "event", event: dedupeEventBodies(update.event, memory, expand) as WireEvent };
    case "resumed":
    case "delta":
    case "output":
      return update;
    default: {
      const unexpected: never = update;
      return unexpected;
    }
  }
}
