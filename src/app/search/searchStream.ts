import type { SearchItemKind } from "../../store/search/searchIndex.js";
import type { SearchStreamUpdate } from "../../contracts/wire/projections.js";
import type { Caller } from "../caller.js";
import type { AppContext } from "../context.js";
import type { StreamHandle, StreamSink } from "../orchestration/subscriptions.js";
import { DEFAULT_SEARCH_LIMIT, searchThread } from "./threadSearch.js";

/** The stream stops once a page would start past this many hits (the search offset bound of t3_thread_search). */
export const SEARCH_STREAM_MAX_OFFSET = 1_000;

/**
 * orchestration.searchThreadStream: search one thread and stream its hits a
 * page at a time, best first, then complete. The first page is fetched before
 * this returns, so a bad query or an unknown thread fails the subscription
 * (invalid_request, thread_not_found) instead of completing it; later pages
 * follow one at a time and stop when the subscriber closes.
 */
export async function searchThreadStream(
  ctx: AppContext,
  caller: Caller,
  params: {
    readonly threadId: string;
    readonly query: string;
    readonly kinds?: readonly SearchItemKind[];
    readonly includeArchived?: boolean;
    readonly includeSubagents?: boolean;
    readonly pageSize?: number;
  },
  sink: StreamSink<SearchStreamUpdate>,
): Promise<StreamHandle> {
  const { pageSize, ...options } = params;
  const limit = pageSize ?? DEFAULT_SEARCH_LIMIT;
  let closed = false;
  const page = (offset: number) => searchThread(ctx, caller, { ...options, limit, offset });
  const first = await page(0);
  const deliver = async (): Promise<void> => {
    let current = first;
    for (;;) {
      if (closed) return;
      sink.next({ kind: "hits", offset: current.offset, hits: current.hits, hasMore: current.hasMore, complete: current.complete });
      const next = current.nextOffset;
      if (next === null || next > SEARCH_STREAM_MAX_OFFSET) break;
      current = await page(next);
    }
    if (!closed) sink.complete();
  };
  // Runs after the handle is returned, so the first page is never sent before the subscription is registered.
  queueMicrotask(() => {
    deliver().catch((error: unknown) => {
      if (!closed) sink.fail(error);
    });
  });
  return {
    close() {
      closed = true;
    },
  };
}
