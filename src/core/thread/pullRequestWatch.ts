import type {
  ThreadPullRequestLinkSyncCommand,
  ThreadPullRequestSyncCommand,
  ThreadPullRequestWatchCommand,
  ThreadPullRequestWatchSyncCommand,
} from "../../contracts/commands/pullRequestCommands.js";
import { threadEvent } from "../../contracts/events.js";
import { PULL_REQUEST_WATCH_LIMITS, type PullRequestWatch } from "../../contracts/pullRequests.js";
import type { AppThread, PullRequestLink } from "../../contracts/thread.js";
import { type DecideContext, type Decision, accept, reject } from "../decision.js";
import { RejectionCode } from "../rejections.js";
import type { OrchestrationState } from "../state.js";
import { changed, liveThread } from "./guards.js";

// Pull request watches (docs/pull-requests.md). The decider never reads a
// host: the watcher reads the linked pull requests when a sync is due and
// sends what it read as thread.pull-request-watch.sync.

function activeLinks(thread: AppThread): PullRequestLink[] {
  return thread.pullRequests.filter((link) => link.unlinkedAt === null);
}

function addMs(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

/** thread.pull-request.watch: start (sync now, then every intervalMs) or end the watch. Ending a watch that is not running changes nothing. */
export function decideThreadPullRequestWatch(state: OrchestrationState, command: ThreadPullRequestWatchCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (command.data.enabled === false) {
    if ((thread.pullRequestWatch ?? null) === null) return accept([]);
    return accept([threadEvent("thread.pull-request-link-updated", changed(thread, ctx, { pullRequestWatch: null }))]);
  }
  if (activeLinks(thread).length === 0) {
    return reject(RejectionCode.pullRequestNotLinked, `thread ${thread.id} has no linked pull request to watch; link one first`);
  }
  const watch: PullRequestWatch = {
    intervalMs: command.data.intervalMs ?? PULL_REQUEST_WATCH_LIMITS.defaultIntervalMs,
    startedAt: ctx.now,
    nextSyncAt: ctx.now,
    lastSyncAt: thread.pullRequestWatch?.lastSyncAt ?? null,
    lastError: null,
  };
  return accept([threadEvent("thread.pull-request-link-updated", changed(thread, ctx, { pullRequestWatch: watch }))]);
}

/** thread.pull-request.sync: the running watch syncs now; without one, a one-time sync is scheduled for now. */
export function decideThreadPullRequestSync(state: OrchestrationState, command: ThreadPullRequestSyncCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  if (activeLinks(thread).length === 0) {
    return reject(RejectionCode.pullRequestNotLinked, `thread ${thread.id} has no linked pull request to sync`);
  }
  const current = thread.pullRequestWatch ?? null;
  const watch: PullRequestWatch =
    current === null ? { intervalMs: null, startedAt: ctx.now, nextSyncAt: ctx.now, lastSyncAt: null, lastError: null } : { ...current, nextSyncAt: ctx.now };
  return accept([threadEvent("thread.pull-request-link-updated", changed(thread, ctx, { pullRequestWatch: watch }))]);
}

/** thread.pull-request-link.sync: make the active links exactly the listed pull requests (a relinked one is revived in place). */
export function decideThreadPullRequestLinkSync(state: OrchestrationState, command: ThreadPullRequestLinkSyncCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const listed = new Map(command.data.pullRequests.map((pr) => [pr.url, pr]));
  let changedAny = false;
  const pullRequests: PullRequestLink[] = thread.pullRequests.map((link) => {
    const wanted = listed.get(link.url);
    listed.delete(link.url);
    if (wanted === undefined) {
      if (link.unlinkedAt !== null) return link;
      changedAny = true;
      return { ...link, unlinkedAt: ctx.now };
    }
    if (link.unlinkedAt === null) return link;
    changedAny = true;
    return { ...link, number: wanted.number ?? link.number, title: wanted.title ?? link.title, linkedAt: ctx.now, unlinkedAt: null };
  });
  for (const pr of listed.values()) {
    changedAny = true;
    pullRequests.push({ url: pr.url, number: pr.number ?? null, title: pr.title ?? null, linkedAt: ctx.now, unlinkedAt: null });
  }
  if (!changedAny) return accept([]);
  const stillLinked = pullRequests.some((link) => link.unlinkedAt === null);
  const fields: Partial<AppThread> = stillLinked ? { pullRequests } : { pullRequests, pullRequestWatch: null };
  return accept([threadEvent("thread.pull-request-link-updated", changed(thread, ctx, fields))]);
}

/**
 * thread.pull-request-watch.sync (internal): record what one due sync read and
 * set the next due time. The watch ends after a one-time sync, and when every
 * linked pull request is merged or closed (nothing left to watch).
 */
export function decideThreadPullRequestWatchSync(state: OrchestrationState, command: ThreadPullRequestWatchSyncCommand, ctx: DecideContext): Decision {
  const found = liveThread(state, command.data.threadId);
  if (found.kind === "rejected") return found;
  const thread = found.thread;
  const watch = thread.pullRequestWatch ?? null;
  if (watch === null || watch.nextSyncAt !== command.data.dueAt) {
    return reject(RejectionCode.pullRequestSyncStale, `thread ${thread.id} has no pull request sync due at ${command.data.dueAt}`);
  }
  const results = new Map(command.data.results.map((result) => [result.url, result]));
  const pullRequests = thread.pullRequests.map((link) => {
    const result = results.get(link.url);
    if (result === undefined || link.unlinkedAt !== null || result.status === null) return link;
    return { ...link, status: result.status, title: result.title ?? link.title, number: result.number ?? link.number };
  });
  const errors = command.data.results.filter((result) => result.error !== null).map((result) => `${result.url}: ${result.error}`);
  const open = pullRequests.some((link) => link.unlinkedAt === null && (link.status?.state ?? "open") === "open");
  const next: PullRequestWatch | null =
    watch.intervalMs === null || !open
      ? null
      : { ...watch, lastSyncAt: ctx.now, lastError: errors.length === 0 ? null : errors.join("; "), nextSyncAt: addMs(ctx.now, watch.intervalMs) };
  return accept([threadEvent("thread.pull-request-synced", changed(thread, ctx, { pullRequests, pullRequestWatch: next }))]);
}
