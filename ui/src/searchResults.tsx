import { useEffect, useState } from "react";
import type { LoomWsClient } from "../../src/client/loomWsClient.js";
import type { SearchHitView } from "../../src/contracts/tools/searchTools.js";
import type { ThreadShell } from "../../src/contracts/wire/projections.js";
import { errorText } from "./api.js";

/** Shortest query sent to the search index, and how long typing must pause first. */
const MIN_QUERY = 2;
const DEBOUNCE_MS = 250;
/** Hits shown at most. */
const LIMIT = 20;
/** The search index marks matched words with `**` on both sides. */
const MARK = "**";

type Found = { readonly kind: "idle" } | { readonly kind: "searching" } | { readonly kind: "failed"; readonly error: string } | { readonly kind: "ready"; readonly hits: readonly SearchHitView[]; readonly complete: boolean; readonly hasMore: boolean };

/** A snippet with its matched words highlighted. */
function Snippet({ text }: { readonly text: string }) {
  const parts = text.split(MARK);
  return <span className="snippet">{parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : <span key={i}>{part}</span>))}</span>;
}

/**
 * Full-text search of the timelines: every thread's (orchestration.searchThreads)
 * or, with `threadId`, that one thread's alone (orchestration.searchThread):
 * messages, tool calls, commands and file changes, best matches first, each hit
 * opening its thread at the matched item. Runs once typing pauses.
 */
export function SearchResults(props: {
  readonly client: LoomWsClient;
  readonly query: string;
  readonly includeArchived: boolean;
  /** Search this thread only. */
  readonly threadId?: string;
  readonly jump: (hit: SearchHitView) => void;
  readonly onHits?: (hits: readonly SearchHitView[]) => void;
  /** The thread list, to say where each hit's thread sits: its project, and its parent's title. */
  readonly threads?: ReadonlyMap<string, ThreadShell>;
}) {
  const { client, query, includeArchived, threadId, onHits } = props;
  const [found, setFound] = useState<Found>({ kind: "idle" });
  useEffect(() => {
    const q = query.trim();
    if (q.length < MIN_QUERY) {
      setFound({ kind: "idle" });
      onHits?.([]);
      return;
    }
    let current = true;
    setFound({ kind: "searching" });
    const timer = setTimeout(() => {
      const search =
        threadId === undefined
          ? client.request("orchestration.searchThreads", { query: q, includeArchived, includeSubagents: true, limit: LIMIT })
          : client.request("orchestration.searchThread", { threadId, query: q, includeArchived: true, limit: LIMIT });
      search.then(
        (out) => {
          if (!current) return;
          setFound({ kind: "ready", hits: out.hits, complete: out.complete, hasMore: out.hasMore });
          onHits?.(out.hits);
        },
        (error: unknown) => current && setFound({ kind: "failed", error: errorText(error) }),
      );
    }, DEBOUNCE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [client, query, includeArchived, threadId, onHits]);

  if (found.kind === "idle") return null;
  return (
    <section className={`search-results${threadId === undefined ? "" : " thread-search-results"}`} aria-label={threadId === undefined ? "Search results" : "Search results in this thread"}>
      <h3>{threadId === undefined ? "In the timelines" : "In this thread"}</h3>
      {found.kind === "searching" ? <div className="muted pad">Searching…</div> : null}
      {found.kind === "failed" ? <div className="error-text pad">{found.error}</div> : null}
      {found.kind === "ready" ? (
        found.hits.length === 0 ? (
          <div className="muted pad">No matches.</div>
        ) : (
          <ul>
            {found.hits.map((hit) => (
              <li key={hit.itemId}>
                <a href={`/t/${encodeURIComponent(hit.threadId)}`} className="search-hit" onClick={(e) => { e.preventDefault(); props.jump(hit); }}>
                  <span className="search-hit-head">
                    {threadId === undefined ? <span className="search-hit-title">{hit.threadTitle || hit.threadId}</span> : null} <span className="pill">{hit.kind.replaceAll("_", " ")}</span>
                  </span>
                  {threadId === undefined ? <span className="muted small search-hit-where">{whereOf(hit, props.threads)}</span> : null}
                  <Snippet text={hit.snippet} />
                </a>
              </li>
            ))}
          </ul>
        )
      ) : null}
      {found.kind === "ready" && found.hasMore ? <div className="muted pad">Showing the best {LIMIT}; refine the query for more.</div> : null}
      {found.kind === "ready" && !found.complete ? <div className="muted pad">The index is still catching up: recent items may be missing.</div> : null}
    </section>
  );
}

/** Where a hit's thread sits, so hits of threads with one title can be told apart: "in demo", "in demo · under Parent". */
function whereOf(hit: SearchHitView, threads: ReadonlyMap<string, ThreadShell> | undefined): string {
  const parentId = threads?.get(hit.threadId)?.parentThreadId ?? null;
  const parent = parentId === null ? undefined : threads?.get(parentId);
  return parent === undefined ? `in ${hit.projectId}` : `in ${hit.projectId} · under ${parent.title || parent.id}`;
}
