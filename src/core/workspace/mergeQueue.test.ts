import { describe, expect, it } from "vitest";
import type { MergeQueueEntry } from "../../contracts/entities/mergeQueue.js";
import type { DomainEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import type { MergeIntoParentOutput } from "../../contracts/workspaceQueries.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, runUpdated } from "../testing/runFixtures.js";
import { TEST_NOW, fold, given } from "../testing/scenario.js";
import { aWorkspace } from "../testing/workspaceFixtures.js";
import { mergeQueueOf, mergeQueueStream } from "./mergeQueue.js";

const PARENT = "thread:parent";
const child = (id: string, overrides: Partial<AppThread> = {}) =>
  aProviderThread(id, "steerable", {
    lineage: { rootThreadId: PARENT, parentThreadId: PARENT, parentNodeId: null, relation: "subagent" },
    workspace: aWorkspace({ status: "ready" }),
    worktreePath: `/wt/${id}`,
    ...overrides,
  });
const threads = [existing(aProviderThread(PARENT)), existing(child("thread:a")), existing(child("thread:b")), existing(child("thread:c"))];

const enqueue = (entryId: string, childThreadId: string) =>
  cmd("merge-queue.enqueue", { parentThreadId: PARENT, entryId, childThreadId, onRefused: "report", commitChild: true, message: null });
const start = (entryId: string) => cmd("merge-queue.start", { parentThreadId: PARENT, entryId });
const effect = (entryId: string) => ({ kind: "merge-queue.merge", streamId: mergeQueueStream(PARENT), payload: { parentThreadId: PARENT, entryId }, replaySafe: true });
const merged: MergeIntoParentOutput = {
  threadId: "thread:a",
  parentThreadId: PARENT,
  outcome: "fast_forward",
  commit: "c2",
  previousHead: "c1",
  childCommit: "c2",
  childBranch: "loom/a",
  childChangesCommit: null,
  files: [],
  check: null,
};

/** The history after each command in turn, every one accepted. */
function history(...commands: Parameters<ReturnType<typeof given>["when"]>[0][]): DomainEvent[] {
  let events: DomainEvent[] = [...threads];
  for (const command of commands) events = given(...events).when(command).thenHistory();
  return events;
}

const entry = (events: readonly DomainEvent[], id: string): MergeQueueEntry => fold(...events).mergeQueueEntries.get(id)!;

describe("the merge queue of a parent workspace", () => {
  it("queues a worktree child's branch with its merge effect when the queue is idle, and only the entry when one is ahead", () => {
    const first = given(...threads).when(enqueue("merge:a", "thread:a"));
    expect(first.decision).toMatchObject({ kind: "accepted", effects: [effect("merge:a")] });
    const state = given(...history(enqueue("merge:a", "thread:a"))).when(enqueue("merge:b", "thread:b"));
    expect(state.decision).toMatchObject({ kind: "accepted", effects: [] });
    const after = fold(...history(enqueue("merge:a", "thread:a"), enqueue("merge:b", "thread:b")));
    expect(mergeQueueOf(after, PARENT).map((e) => [e.entryId, e.status])).toEqual([
      ["merge:a", "queued"],
      ["merge:b", "queued"],
    ]);
    expect(after.mergeQueueEntries.get("merge:a")).toMatchObject({ attempts: 0, enqueuedAt: TEST_NOW, log: [`${TEST_NOW} queued`] });
  });

  it("refuses a child queued twice, a thread that is not the parent's worktree child, and an unknown parent", () => {
    given(...history(enqueue("merge:a", "thread:a"))).when(enqueue("merge:a2", "thread:a")).thenRejects("merge_already_queued");
    given(...threads, existing(child("thread:shared", { workspace: null, worktreePath: null }))).when(enqueue("merge:s", "thread:shared")).thenRejects("merge_not_queueable");
    given(...threads, existing(child("thread:other", { lineage: { rootThreadId: "thread:x", parentThreadId: "thread:x", parentNodeId: null, relation: "subagent" } })))
      .when(enqueue("merge:o", "thread:other"))
      .thenRejects("merge_not_queueable");
    given(...threads).when(cmd("merge-queue.enqueue", { parentThreadId: "thread:nope", entryId: "merge:n", childThreadId: "thread:a", onRefused: "report", commitChild: true, message: null })).thenRejects("thread_not_found");
    // The same entry again (a retried request) changes nothing.
    expect(given(...history(enqueue("merge:a", "thread:a"))).when(enqueue("merge:a", "thread:a")).decision).toMatchObject({ kind: "accepted", events: [], effects: [] });
  });

  it("begins only the head, ends it with its result and begins the next one", () => {
    const queued = history(enqueue("merge:a", "thread:a"), enqueue("merge:b", "thread:b"));
    given(...queued).when(start("merge:b")).thenRejects("merge_entry_not_open");
    const merging = history(enqueue("merge:a", "thread:a"), enqueue("merge:b", "thread:b"), start("merge:a"));
    expect(entry(merging, "merge:a")).toMatchObject({ status: "merging", attempts: 1, startedAt: TEST_NOW });
    const finish = cmd("merge-queue.finish", { parentThreadId: PARENT, entryId: "merge:a", status: "merged", result: merged, failure: null });
    const ended = given(...merging).when(finish);
    expect(ended.decision).toMatchObject({ kind: "accepted", effects: [effect("merge:b")] });
    const after = [...merging, ...ended.thenHistory().slice(merging.length)];
    expect(entry(after, "merge:a")).toMatchObject({ status: "merged", result: merged, endedAt: TEST_NOW });
    expect(entry(after, "merge:a").log.at(-1)).toBe(`${TEST_NOW} merged (fast_forward, parent at c2)`);
    // Ended once: a second finish is refused.
    given(...after).when(finish).thenRejects("merge_entry_not_open");
  });

  it("records a conflict and a failed check with their files and output", () => {
    const merging = history(enqueue("merge:a", "thread:a"), start("merge:a"));
    const conflict = history(enqueue("merge:a", "thread:a"), start("merge:a"), cmd("merge-queue.finish", { parentThreadId: PARENT, entryId: "merge:a", status: "conflict", result: null, failure: { code: "workspace_conflict", message: "conflicts", workspaceCode: "workspace_merge_conflict", files: ["a.txt"], check: null } }));
    expect(entry(conflict, "merge:a")).toMatchObject({ status: "conflict", failure: { files: ["a.txt"] } });
    expect(entry(conflict, "merge:a").log.at(-1)).toBe(`${TEST_NOW} conflict in a.txt`);
    const check = { command: "npm test", outcome: "failed" as const, exitCode: 1, durationMs: 5, output: "1 failing\n" };
    const failed = given(...merging).when(cmd("merge-queue.finish", { parentThreadId: PARENT, entryId: "merge:a", status: "check_failed", result: null, failure: { code: "workspace_conflict", message: "check failed", workspaceCode: "workspace_check_failed", files: [], check } })).thenHistory();
    expect(entry(failed, "merge:a")).toMatchObject({ status: "check_failed", failure: { check } });
    expect(entry(failed, "merge:a").log.at(-1)).toBe(`${TEST_NOW} check failed: \`npm test\` exited with 1`);
  });

  it("begins a merging entry again after an attempt cut short, counting the attempt, never a second entry", () => {
    const merging = history(enqueue("merge:a", "thread:a"), enqueue("merge:b", "thread:b"), start("merge:a"));
    const again = given(...merging).when(start("merge:a"));
    expect(again.decision).toMatchObject({ kind: "accepted", effects: [] });
    const after = again.thenHistory();
    expect(entry(after, "merge:a")).toMatchObject({ status: "merging", attempts: 2 });
    expect(entry(after, "merge:a").log.at(-1)).toContain("merging again (attempt 2)");
    // The next one waits while the head merges.
    given(...after).when(start("merge:b")).thenRejects("merge_entry_not_open");
  });

  it("holds an entry queued from a run still going until both threads are idle, and again when a run began before it started", () => {
    const busyChild = [...threads, runUpdated(aRun(child("thread:a"), { id: "run:a", status: "running" }))];
    const waitFor = cmd("merge-queue.enqueue", { parentThreadId: PARENT, entryId: "merge:a", childThreadId: "thread:a", onRefused: "report", commitChild: true, message: null, waitForIdle: true });
    const waiting = given(...busyChild).when(waitFor);
    expect(waiting.decision).toMatchObject({ kind: "accepted", effects: [] });
    expect(entry(waiting.thenHistory(), "merge:a")).toMatchObject({ status: "waiting_for_idle", waitForIdle: true });
    const ready = cmd("merge-queue.ready", { parentThreadId: PARENT, entryId: "merge:a" });
    given(...waiting.thenHistory()).when(ready).thenRejects("merge_entry_not_open");
    const idle = [...waiting.thenHistory(), runUpdated(aRun(child("thread:a"), { id: "run:a", status: "completed" }))];
    const joined = given(...idle).when(ready);
    expect(joined.decision).toMatchObject({ kind: "accepted", effects: [effect("merge:a")] });
    expect(entry(joined.thenHistory(), "merge:a")).toMatchObject({ status: "queued" });
    // A run began on the parent before the merge started: the entry waits again, nothing is begun.
    const busyAgain = [...joined.thenHistory(), runUpdated(aRun(aProviderThread(PARENT), { id: "run:p", status: "running" }))];
    const held = given(...busyAgain).when(start("merge:a")).thenHistory();
    expect(entry(held, "merge:a")).toMatchObject({ status: "waiting_for_idle", attempts: 0 });
    // It can be cancelled while it waits.
    expect(entry(given(...held).when(cmd("merge-queue.cancel", { parentThreadId: PARENT, entryId: "merge:a" })).thenHistory(), "merge:a")).toMatchObject({ status: "cancelled" });
  });

  it("cancels a queued entry, beginning the next one when it was the head, and refuses to cancel a merging one", () => {
    const queued = history(enqueue("merge:a", "thread:a"), enqueue("merge:b", "thread:b"), enqueue("merge:c", "thread:c"));
    const head = given(...queued).when(cmd("merge-queue.cancel", { parentThreadId: PARENT, entryId: "merge:a" }));
    expect(head.decision).toMatchObject({ kind: "accepted", effects: [effect("merge:b")] });
    expect(entry(head.thenHistory(), "merge:a")).toMatchObject({ status: "cancelled", endedAt: TEST_NOW });
    const middle = given(...queued).when(cmd("merge-queue.cancel", { parentThreadId: PARENT, entryId: "merge:b" }));
    expect(middle.decision).toMatchObject({ kind: "accepted", effects: [] });
    const merging = history(enqueue("merge:a", "thread:a"), start("merge:a"));
    given(...merging).when(cmd("merge-queue.cancel", { parentThreadId: PARENT, entryId: "merge:a" })).thenRejects("merge_entry_not_open");
    given(...merging).when(cmd("merge-queue.cancel", { parentThreadId: PARENT, entryId: "merge:nope" })).thenRejects("merge_entry_not_found");
    // A cancelled entry's effect that runs anyway cannot begin it.
    given(...head.thenHistory()).when(start("merge:a")).thenRejects("merge_entry_not_open");
  });
});
