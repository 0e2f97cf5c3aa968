import type { SearchHitView, ThreadSearchInput, ThreadSearchOutput } from "../../contracts/tools/searchTools.js";
import type { SearchItemKind, SearchPage, SearchRequest } from "../../store/search/searchIndex.js";
import { SearchQueryError, parseSearchQuery, type SearchTerm } from "../../store/search/searchQuery.js";
import { type Caller, resolveCaller } from "../caller.js";
import type { AppContext } from "../context.js";
import { fail } from "../errors.js";
import { liveThreadOrFail } from "../threads/authorize.js";
import { threadLink } from "../threads/views.js";

/** What the app reads the search index through: the engine's SearchProjection. */
export interface ThreadSearchIndex {
  search(request: SearchRequest): Promise<SearchPage>;
  /** Resolve true once the index covers `sequence`, false after `timeoutMs`. */
  waitFor(sequence: number, timeoutMs: number): Promise<boolean>;
}

export const DEFAULT_SEARCH_LIMIT = 20;
/**
 * How long a search waits for the index to cover what was committed before
 * it (it is written on the next tick, so normally not at all). A new index
 * catching up with a long log answers with what it has and `complete: false`.
 */
const INDEX_WAIT_MS = 2_000;

/** Options shared by both scopes. */
export interface SearchOptions {
  readonly query: string;
  readonly kinds?: readonly SearchItemKind[];
  readonly includeArchived?: boolean;
  readonly includeSubagents?: boolean;
  readonly limit?: number;
  readonly offset?: number;
}

function terms(query: string): SearchTerm[] {
  try {
    return parseSearchQuery(query);
  } catch (error) {
    if (error instanceof SearchQueryError) fail("invalid_request", `invalid search query: ${error.message}`);
    throw error;
  }
}

async function run(ctx: AppContext, scope: { projectId: string | null; threadId: string | null }, options: SearchOptions): Promise<ThreadSearchOutput> {
  const parsed = terms(options.query);
  const limit = options.limit ?? DEFAULT_SEARCH_LIMIT;
  const offset = options.offset ?? 0;
  const complete = await ctx.search.waitFor(ctx.orchestrator.state.lastSequence, INDEX_WAIT_MS);
  const page = await ctx.search.search({
    terms: parsed,
    projectId: scope.projectId,
    threadId: scope.threadId,
    kinds: options.kinds === undefined ? null : [...new Set(options.kinds)],
    includeArchived: options.includeArchived ?? false,
    includeSubagents: options.includeSubagents ?? true,
    limit,
    offset,
  });
  const hits = page.hits.map(
    (hit): SearchHitView => ({
      threadId: hit.threadId,
      threadTitle: hit.threadTitle,
      link: threadLink(ctx.environmentId, hit.threadId),
      projectId: hit.projectId,
      runId: hit.runId,
      itemId: hit.itemId,
      position: hit.position,
      type: hit.itemType,
      kind: hit.kind,
      createdAt: hit.createdAt,
      snippet: hit.snippet,
    }),
  );
  return {
    query: options.query,
    projectId: scope.projectId,
    threadId: scope.threadId,
    hits,
    offset,
    limit,
    hasMore: page.hasMore,
    nextOffset: page.hasMore ? offset + hits.length : null,
    complete,
  };
}

/**
 * orchestration.searchThreads: search a project's threads. A thread caller
 * searches its own project unless `projectId` is given (spec 000, Policy);
 * an outside client without one searches every project.
 */
export async function searchThreads(ctx: AppContext, caller: Caller, input: SearchOptions & { readonly projectId?: string }): Promise<ThreadSearchOutput> {
  const acting = resolveCaller(ctx.orchestrator.state, caller, "t3_thread_search");
  const projectId = input.projectId ?? acting.thread?.projectId ?? null;
  return run(ctx, { projectId, threadId: null }, input);
}

/** orchestration.searchThread: search one thread, any thread in the environment. */
export async function searchThread(ctx: AppContext, caller: Caller, input: SearchOptions & { readonly threadId: string }): Promise<ThreadSearchOutput> {
  resolveCaller(ctx.orchestrator.state, caller, "t3_thread_search");
  const thread = liveThreadOrFail(ctx, input.threadId);
  return run(ctx, { projectId: null, threadId: thread.id }, input);
}

/** t3_thread_search: within one thread when threadId is given, else across a project. */
export function threadSearch(ctx: AppContext, caller: Caller, input: ThreadSearchInput): Promise<ThreadSearchOutput> {
  const { threadId, ...rest } = input;
  return threadId === undefined ? searchThreads(ctx, caller, rest) : searchThread(ctx, caller, { ...rest, threadId });
}
