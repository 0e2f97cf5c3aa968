import { type BodyMemory, type RecordWithBodies, dedupeThreadUpdate, expandRecordBodies } from "../contracts/wire/dedupedBodies.js";
import { IdExpander, type IdValue } from "../contracts/wire/idTable.js";
import type { WireOptions } from "../contracts/wire/messages.js";
import type { ThreadStreamUpdate } from "../contracts/wire/projections.js";

/**
 * Undo wire compaction (docs/wire.md): the exact inverse of what the server
 * did, so expand(compact(x)) deep-equals x. Ids are expanded before bodies,
 * the reverse of the server's order.
 */

/** Expand one record (an HTTP answer or a WebSocket response) compacted with `options`. */
export function expandRecord<T>(body: unknown, options: WireOptions, ids?: readonly IdValue[]): T {
  let record: unknown = body;
  if (options.compactIds === true) {
    const tabled = ids === undefined ? (body as { ids: IdValue[]; record: unknown }) : { ids, record: body };
    record = new IdExpander().expand(tabled.record, tabled.ids);
  }
  if (options.dedupeBodies === true && typeof record === "object" && record !== null && Array.isArray((record as { items?: unknown }).items)) {
    record = expandRecordBodies(record as RecordWithBodies);
  }
  return record as T;
}

/**
 * The expansion state of one subscription: its growing id table and, for a
 * thread subscription with dedupeBodies, the connection's body memory (shared
 * by every such subscription of the connection, in message order).
 */
export class StreamExpander {
  private readonly ids: IdExpander | null;

  constructor(
    options: WireOptions,
    private readonly bodies: BodyMemory | null,
  ) {
    this.ids = options.compactIds === true ? new IdExpander() : null;
  }

  expand<U>(update: unknown, ids: readonly IdValue[] = []): U {
    const expanded = this.ids === null ? update : this.ids.expand(update, ids);
    return (this.bodies === null ? expanded : dedupeThreadUpdate(expanded as ThreadStreamUpdate, this.bodies, true)) as U;
  }
}
