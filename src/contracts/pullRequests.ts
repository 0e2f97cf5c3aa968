import { z } from "zod";

/**
 * A linked pull request's state as last read from its host (docs/pull-requests.md):
 * open, merged or closed; the review decision; the combined check status.
 */
export const PullRequestStatusSchema = z.object({
  state: z.enum(["open", "merged", "closed"]),
  reviewDecision: z.enum(["approved", "changes_requested", "review_required"]).nullable(),
  checks: z.enum(["passing", "failing", "pending", "none"]),
  syncedAt: z.string().min(1),
});
export type PullRequestStatus = z.infer<typeof PullRequestStatusSchema>;

/** Shortest and longest interval between two syncs of a watch. */
export const PULL_REQUEST_WATCH_LIMITS = { minIntervalMs: 1_000, maxIntervalMs: 24 * 60 * 60_000, defaultIntervalMs: 5 * 60_000 } as const;

/**
 * A thread's pull request watch: its linked pull requests are read every
 * `intervalMs` (null: once, for a `thread.pull-request.sync`). It ends when the
 * thread is stopped, when no pull request is linked any more, or on request.
 */
export const PullRequestWatchSchema = z.object({
  intervalMs: z.number().int().positive().nullable(),
  startedAt: z.string().min(1),
  /** The due time of the next sync; the sync command must name it, so two nodes never sync one due time twice. */
  nextSyncAt: z.string().min(1),
  lastSyncAt: z.string().min(1).nullable(),
  /** Why the last sync could not read one of the pull requests (no gh on PATH, not authenticated, ...). */
  lastError: z.string().nullable(),
});
export type PullRequestWatch = z.infer<typeof PullRequestWatchSchema>;

/** One pull request's outcome in a sync: its status, or why it could not be read. */
export const PullRequestSyncResultSchema = z
  .object({
    url: z.string().min(1),
    status: PullRequestStatusSchema.nullable(),
    title: z.string().max(500).nullable(),
    number: z.number().int().positive().nullable(),
    error: z.string().max(2_000).nullable(),
  })
  .strict();
export type PullRequestSyncResult = z.infer<typeof PullRequestSyncResultSchema>;
