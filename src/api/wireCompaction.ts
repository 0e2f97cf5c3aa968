import { type RecordWithBodies, dedupeRecordBodies } from "../contracts/wire/dedupedBodies.js";
import { type IdTabled, withIdTable } from "../contracts/wire/idTable.js";
import type { WireOptions } from "../contracts/wire/messages.js";

/**
 * Wire compaction of one record (an HTTP answer, a WebSocket response): body
 * dedupe first, on the whole record, then id interning into the record's own
 * table. Streams compact per update instead (wsConnection.ts).
 */
export function compactRecord(record: unknown, options: WireOptions): unknown {
  const deduped = options.dedupeBodies === true && hasItems(record) ? dedupeRecordBodies(record) : record;
  return options.compactIds === true ? (withIdTable(deduped) satisfies IdTabled<unknown>) : deduped;
}

function hasItems(record: unknown): record is RecordWithBodies {
  return typeof record === "object" && record !== null && Array.isArray((record as { items?: unknown }).items);
}

/** `?compactIds=1&dedupeBodies=1` as options. */
export function wireOptionsOf(url: URL): WireOptions {
  return { compactIds: url.searchParams.get("compactIds") === "1", dedupeBodies: url.searchParams.get("dedupeBodies") === "1" };
}
