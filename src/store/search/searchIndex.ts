import type { SearchTerm } from "./searchQuery.js";

/**
 * The full-text index behind t3_thread_search: one interface, a SQLite FTS5
 * backend (sqliteSearchIndex.ts) and a PostgreSQL tsvector backend
 * (postgresSearchIndex.ts), one contract suite (testSuiteSearchIndex.ts).
 *
 * It is a projection of the event log (docs/search.md): the engine's
 * SearchProjection follows the log and applies turn items and thread records
 * here, recording the last sequence it covers in the same transaction, so an
 * index survives restarts and can always be dropped and rebuilt from the log.
 */

/** What a document is: the four kinds of timeline items the index holds. */
export const SearchItemKind = {
  message: "message",
  toolCall: "tool_call",
  command: "command",
  fileChange: "file_change",
} as const;
export type SearchItemKind = (typeof SearchItemKind)[keyof typeof SearchItemKind];
export const SEARCH_ITEM_KINDS: readonly SearchItemKind[] = Object.values(SearchItemKind);

/** One indexed timeline item. A later version of the same item replaces it. */
export interface SearchDocument {
  readonly itemId: string;
  readonly threadId: string;
  readonly runId: string | null;
  readonly position: number;
  /** The turn item type (user_message, dynamic_tool, ...). */
  readonly itemType: string;
  readonly kind: SearchItemKind;
  readonly createdAt: string;
  /** The searchable text, already bounded. */
  readonly text: string;
}

/** What search filters on per thread. A deleted thread's documents are dropped. */
export interface SearchThread {
  readonly threadId: string;
  readonly projectId: string;
  readonly title: string;
  readonly relation: string;
  readonly archived: boolean;
  readonly deleted: boolean;
}

/** One batch of changes, in log order: threads first, then documents. */
export interface SearchChanges {
  readonly threads: readonly SearchThread[];
  readonly documents: readonly SearchDocument[];
}

export interface SearchRequest {
  /** Every term must match (AND); see searchQuery.ts. */
  readonly terms: readonly SearchTerm[];
  /** Only threads of this project (null: every project). */
  readonly projectId: string | null;
  /** Only this thread (null: every thread in scope). */
  readonly threadId: string | null;
  /** Only these kinds (null: all). */
  readonly kinds: readonly SearchItemKind[] | null;
  readonly includeArchived: boolean;
  readonly includeSubagents: boolean;
  readonly limit: number;
  readonly offset: number;
}

export interface SearchHit {
  readonly itemId: string;
  readonly threadId: string;
  readonly threadTitle: string;
  readonly projectId: string;
  readonly runId: string | null;
  readonly position: number;
  readonly itemType: string;
  readonly kind: SearchItemKind;
  readonly createdAt: string;
  /** A few words around the match, matches marked **like this**. */
  readonly snippet: string;
}

/** Best match first (the backend's relevance rank, then newest). */
export interface SearchPage {
  readonly hits: readonly SearchHit[];
  readonly hasMore: boolean;
}

export interface SearchCheckpoint {
  /** The last log sequence the index covers (0: empty). */
  readonly position: number;
  /** The document mapping version the index was built with; null for a new index. */
  readonly version: string | null;
}

/** Markers around matched words in a snippet. */
export const SNIPPET_OPEN = "**";
export const SNIPPET_CLOSE = "**";

export interface SearchIndex {
  /** "sqlite" or "postgres", for messages and benchmarks. */
  readonly backend: string;
  checkpoint(): Promise<SearchCheckpoint>;
  /** Apply a batch and record `through` as the position, in one transaction. */
  apply(changes: SearchChanges, through: number): Promise<void>;
  /** Empty the index; position 0 and this mapping version (a rebuild follows). */
  reset(version: string): Promise<void>;
  search(request: SearchRequest): Promise<SearchPage>;
  close(): Promise<void>;
}
