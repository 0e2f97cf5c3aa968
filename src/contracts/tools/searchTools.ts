import { z } from "zod";

/**
 * t3_thread_search (spec 004 §3.5), also behind the WebSocket methods
 * orchestration.searchThreads (across a project) and
 * orchestration.searchThread (within one thread).
 */
export const SEARCH_KINDS = ["message", "tool_call", "command", "file_change"] as const;

export const ThreadSearchInput = z
  .object({
    query: z
      .string()
      .min(1)
      .max(500)
      .describe('Words that must all appear (any order); "double quotes" for an exact phrase; a trailing * for a prefix. Case, accents and punctuation are ignored'),
    threadId: z.string().min(1).max(512).optional().describe("Search only this thread (any thread in the environment)"),
    projectId: z.string().min(1).max(512).optional().describe("Project to search; default: the calling thread's project (every project for an outside client)"),
    kinds: z
      .array(z.enum(SEARCH_KINDS))
      .min(1)
      .max(SEARCH_KINDS.length)
      .optional()
      .describe("Only these kinds of items: message (user, assistant, notices, plans), tool_call, command, file_change. Default: all"),
    includeArchived: z.boolean().optional().describe("Include archived threads (default false)"),
    includeSubagents: z.boolean().optional().describe("Include delegated child threads (default true)"),
    limit: z.number().int().min(1).max(50).optional().describe("Page size, default 20"),
    offset: z.number().int().min(0).max(1_000).optional().describe("Pass nextOffset for the next page (at most 1000)"),
  })
  .strict()
  .refine((input) => input.threadId === undefined || input.projectId === undefined, { message: "pass threadId or projectId, not both" });
export type ThreadSearchInput = z.infer<typeof ThreadSearchInput>;

export const SearchHitSchema = z.object({
  threadId: z.string(),
  threadTitle: z.string(),
  link: z.string(),
  projectId: z.string(),
  runId: z.string().nullable(),
  itemId: z.string(),
  position: z.number().int(),
  type: z.string(),
  kind: z.enum(SEARCH_KINDS),
  createdAt: z.string(),
  snippet: z.string(),
});
export type SearchHitView = z.infer<typeof SearchHitSchema>;

export const ThreadSearchOutput = z.object({
  query: z.string(),
  projectId: z.string().nullable(),
  threadId: z.string().nullable(),
  hits: z.array(SearchHitSchema),
  offset: z.number().int(),
  limit: z.number().int(),
  hasMore: z.boolean(),
  nextOffset: z.number().int().nullable(),
  /** False while the index is still catching up with the log (a new or rebuilt index): recent items may be missing. */
  complete: z.boolean(),
});
export type ThreadSearchOutput = z.infer<typeof ThreadSearchOutput>;
