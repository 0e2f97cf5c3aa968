import { z } from "zod";
import { IdSchema, commandSchema as command } from "./commandSchema.js";
import { PULL_REQUEST_WATCH_LIMITS, PullRequestSyncResultSchema } from "../pullRequests.js";

// Pull request watches (docs/pull-requests.md). Linking and unlinking are in threadCommands.ts.

/** Start (`enabled`, the default) or end a thread's watch; starting needs a linked pull request and syncs at once. */
export const ThreadPullRequestWatchCommandSchema = command(
  "thread.pull-request.watch",
  z
    .object({
      threadId: IdSchema,
      enabled: z.boolean().optional(),
      intervalMs: z.number().int().min(PULL_REQUEST_WATCH_LIMITS.minIntervalMs).max(PULL_REQUEST_WATCH_LIMITS.maxIntervalMs).optional(),
    })
    .strict(),
);
export type ThreadPullRequestWatchCommand = z.infer<typeof ThreadPullRequestWatchCommandSchema>;

/** Read the linked pull requests now: the running watch's next sync becomes due, or a one-time sync is scheduled. */
export const ThreadPullRequestSyncCommandSchema = command("thread.pull-request.sync", z.object({ threadId: IdSchema }).strict());
export type ThreadPullRequestSyncCommand = z.infer<typeof ThreadPullRequestSyncCommandSchema>;

/**
 * The pull requests a client found for the thread (for example for its
 * branch): the ones not linked yet are linked, linked ones not in the list
 * are unlinked. An empty list unlinks every one.
 */
export const ThreadPullRequestLinkSyncCommandSchema = command(
  "thread.pull-request-link.sync",
  z
    .object({
      threadId: IdSchema,
      pullRequests: z
        .array(z.object({ url: z.string().url(), number: z.number().int().positive().optional(), title: z.string().max(500).optional() }).strict())
        .max(50),
    })
    .strict(),
);
export type ThreadPullRequestLinkSyncCommand = z.infer<typeof ThreadPullRequestLinkSyncCommandSchema>;

/**
 * thread.pull-request-watch.sync (internal): what the watcher read for one due
 * sync. `dueAt` must be the watch's current `nextSyncAt`, and the command id is
 * derived from (thread, dueAt), so a retry or a second node writes nothing.
 */
export const ThreadPullRequestWatchSyncCommandSchema = command(
  "thread.pull-request-watch.sync",
  z
    .object({
      threadId: IdSchema,
      dueAt: z.string().min(1),
      results: z.array(PullRequestSyncResultSchema).max(50),
    })
    .strict(),
);
export type ThreadPullRequestWatchSyncCommand = z.infer<typeof ThreadPullRequestWatchSyncCommandSchema>;
