import { describe, expect, it } from "vitest";
import { threadEvent } from "../../contracts/events.js";
import type { PullRequestStatus, PullRequestWatch } from "../../contracts/pullRequests.js";
import type { AppThread, PullRequestLink } from "../../contracts/thread.js";
import { RejectionCode } from "../rejections.js";
import { CREATED_AT, aThread, cmd, existing } from "../testing/fixtures.js";
import { TEST_NOW as NOW, given } from "../testing/scenario.js";

const A = "thread:a";
const PR1 = "https://github.com/acme/loom/pull/1";
const PR2 = "https://github.com/acme/loom/pull/2";
const LATER = new Date(Date.parse(NOW) + 60_000).toISOString();

const after = (thread: AppThread, fields: Partial<AppThread>): AppThread => ({ ...thread, ...fields, updatedAt: NOW });
const link = (url: string, fields: Partial<PullRequestLink> = {}): PullRequestLink => ({ url, number: null, title: null, linkedAt: CREATED_AT, unlinkedAt: null, ...fields });
const watch = (fields: Partial<PullRequestWatch> = {}): PullRequestWatch => ({ intervalMs: 60_000, startedAt: NOW, nextSyncAt: NOW, lastSyncAt: null, lastError: null, ...fields });
const status = (fields: Partial<PullRequestStatus> = {}): PullRequestStatus => ({ state: "open", reviewDecision: null, checks: "pending", syncedAt: NOW, ...fields });
const result = (url: string, fields: Partial<{ status: PullRequestStatus | null; title: string | null; number: number | null; error: string | null }> = {}) => ({
  url,
  status: status(),
  title: null,
  number: null,
  error: null,
  ...fields,
});

describe("thread.pull-request.watch", () => {
  it("starts a watch whose first sync is due now", () => {
    const thread = aThread({ id: A, pullRequests: [link(PR1)] });
    given(existing(thread))
      .when(cmd("thread.pull-request.watch", { threadId: A, intervalMs: 60_000 }))
      .then([threadEvent("thread.pull-request-link-updated", after(thread, { pullRequestWatch: watch() }))]);
  });

  it("refuses to watch a thread with no linked pull request", () => {
    given(existing(aThread({ id: A, pullRequests: [link(PR1, { unlinkedAt: CREATED_AT })] })))
      .when(cmd("thread.pull-request.watch", { threadId: A }))
      .thenRejects(RejectionCode.pullRequestNotLinked);
  });

  it("ends a running watch, and ending none changes nothing", () => {
    const thread = aThread({ id: A, pullRequests: [link(PR1)], pullRequestWatch: watch() });
    given(existing(thread))
      .when(cmd("thread.pull-request.watch", { threadId: A, enabled: false }))
      .then([threadEvent("thread.pull-request-link-updated", after(thread, { pullRequestWatch: null }))]);
    given(existing(aThread({ id: A, pullRequests: [link(PR1)] })))
      .when(cmd("thread.pull-request.watch", { threadId: A, enabled: false }))
      .then([]);
  });
});

describe("thread.pull-request.sync", () => {
  it("makes the running watch due now", () => {
    const thread = aThread({ id: A, pullRequests: [link(PR1)], pullRequestWatch: watch({ nextSyncAt: LATER }) });
    given(existing(thread))
      .when(cmd("thread.pull-request.sync", { threadId: A }))
      .then([threadEvent("thread.pull-request-link-updated", after(thread, { pullRequestWatch: watch() }))]);
  });

  it("without a watch, schedules a one-time sync", () => {
    const thread = aThread({ id: A, pullRequests: [link(PR1)] });
    given(existing(thread))
      .when(cmd("thread.pull-request.sync", { threadId: A }))
      .then([threadEvent("thread.pull-request-link-updated", after(thread, { pullRequestWatch: watch({ intervalMs: null }) }))]);
  });
});

describe("thread.pull-request-link.sync", () => {
  it("links new pull requests and unlinks the ones no longer listed", () => {
    const thread = aThread({ id: A, pullRequests: [link(PR1)] });
    given(existing(thread))
      .when(cmd("thread.pull-request-link.sync", { threadId: A, pullRequests: [{ url: PR2, number: 2 }] }))
      .then([
        threadEvent(
          "thread.pull-request-link-updated",
          after(thread, { pullRequests: [link(PR1, { unlinkedAt: NOW }), link(PR2, { number: 2, linkedAt: NOW })] }),
        ),
      ]);
  });

  it("the same list again changes nothing", () => {
    given(existing(aThread({ id: A, pullRequests: [link(PR1)] })))
      .when(cmd("thread.pull-request-link.sync", { threadId: A, pullRequests: [{ url: PR1 }] }))
      .then([]);
  });
});

describe("thread.pull-request-watch.sync", () => {
  it("records each pull request's status and sets the next due time", () => {
    const thread = aThread({ id: A, pullRequests: [link(PR1)], pullRequestWatch: watch() });
    const state = given(existing(thread))
      .when(cmd("thread.pull-request-watch.sync", { threadId: A, dueAt: NOW, results: [result(PR1, { title: "Fix", number: 1 })] }))
      .then([
        threadEvent(
          "thread.pull-request-synced",
          after(thread, { pullRequests: [link(PR1, { status: status(), title: "Fix", number: 1 })], pullRequestWatch: watch({ lastSyncAt: NOW, nextSyncAt: LATER }) }),
        ),
      ]);
    expect(state.threads.get(A)?.pullRequests[0]?.status?.state).toBe("open");
  });

  it("keeps the last status and reports the error when a pull request could not be read", () => {
    const thread = aThread({ id: A, pullRequests: [link(PR1)], pullRequestWatch: watch() });
    given(existing(thread))
      .when(cmd("thread.pull-request-watch.sync", { threadId: A, dueAt: NOW, results: [result(PR1, { status: null, error: "gh: not found" })] }))
      .then([
        threadEvent(
          "thread.pull-request-synced",
          after(thread, { pullRequestWatch: watch({ lastSyncAt: NOW, nextSyncAt: LATER, lastError: `${PR1}: gh: not found` }) }),
        ),
      ]);
  });

  it("ends the watch once every linked pull request is merged or closed, and after a one-time sync", () => {
    const thread = aThread({ id: A, pullRequests: [link(PR1)], pullRequestWatch: watch() });
    given(existing(thread))
      .when(cmd("thread.pull-request-watch.sync", { threadId: A, dueAt: NOW, results: [result(PR1, { status: status({ state: "merged" }) })] }))
      .then([threadEvent("thread.pull-request-synced", after(thread, { pullRequests: [link(PR1, { status: status({ state: "merged" }) })], pullRequestWatch: null }))]);
    const once = aThread({ id: A, pullRequests: [link(PR1)], pullRequestWatch: watch({ intervalMs: null }) });
    given(existing(once))
      .when(cmd("thread.pull-request-watch.sync", { threadId: A, dueAt: NOW, results: [result(PR1)] }))
      .then([threadEvent("thread.pull-request-synced", after(once, { pullRequests: [link(PR1, { status: status() })], pullRequestWatch: null }))]);
  });

  it("refuses a sync for a due time the watch no longer has", () => {
    given(existing(aThread({ id: A, pullRequests: [link(PR1)], pullRequestWatch: watch({ nextSyncAt: LATER }) })))
      .when(cmd("thread.pull-request-watch.sync", { threadId: A, dueAt: NOW, results: [] }))
      .thenRejects(RejectionCode.pullRequestSyncStale);
  });
});

describe("thread.stop and a watch", () => {
  it("Stop ends the watch", () => {
    const thread = aThread({ id: A, pullRequests: [link(PR1)], pullRequestWatch: watch() });
    const state = given(existing(thread))
      .when(cmd("thread.stop", { threadId: A }))
      .then([threadEvent("thread.pull-request-link-updated", after(thread, { pullRequestWatch: null }))]);
    expect(state.threads.get(A)?.pullRequestWatch).toBeNull();
  });
});
