import type { PullRequestSyncResult } from "../../contracts/pullRequests.js";
import { joinId } from "../../core/ids.js";
import type { AppContext } from "../context.js";
import { execute } from "../context.js";
import { followChanges } from "../orchestration/changeFeed.js";
import type { StreamHandle } from "../orchestration/subscriptions.js";

/** A thread whose linked pull requests are watched (docs/pull-requests.md). */
export interface PullRequestWatch {
  readonly threadId: string;
  /** When its next sync is due, ISO-8601. */
  readonly nextSyncAt: string;
  /** Its pull requests that are still linked. */
  readonly urls: readonly string[];
}

/** The events that change a watch: links, recorded syncs, a deleted thread. */
const WATCH_EVENTS: ReadonlySet<string> = new Set(["thread.pull-request-link-updated", "thread.pull-request-synced", "thread.deleted"]);

/** Every thread with a watch, deleted ones aside. */
export function pullRequestWatches(ctx: AppContext): PullRequestWatch[] {
  const watches: PullRequestWatch[] = [];
  for (const thread of ctx.orchestrator.state.threads.values()) {
    const watch = thread.pullRequestWatch ?? null;
    if (thread.deletedAt !== null || watch === null) continue;
    watches.push({ threadId: thread.id, nextSyncAt: watch.nextSyncAt, urls: thread.pullRequests.filter((link) => link.unlinkedAt === null).map((link) => link.url) });
  }
  return watches;
}

/** `onChange` hears every later change to a watch, on any node sharing the log. Resolves once the feed is live. */
export function followPullRequestWatches(ctx: AppContext, onChange: () => void): Promise<StreamHandle> {
  return followChanges(ctx, WATCH_EVENTS, () => onChange());
}

/**
 * Record what a due sync read. Its command id is derived from (thread, due
 * time), so a retry or a second node never records one due time twice; a
 * refusal is the AppError of the failure table (pull_request_sync_stale when
 * it was done already).
 */
export async function recordPullRequestSync(ctx: AppContext, sync: { readonly threadId: string; readonly dueAt: string; readonly results: readonly PullRequestSyncResult[] }): Promise<void> {
  await execute(ctx, {
    type: "thread.pull-request-watch.sync",
    commandId: joinId("pull-request-sync", sync.threadId, sync.dueAt),
    data: { threadId: sync.threadId, dueAt: sync.dueAt, results: [...sync.results] },
  });
}
