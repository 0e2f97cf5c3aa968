import { describe, expect, it } from "vitest";
import type { MergeQueueEntry, MergeResolver } from "../../contracts/entities/mergeQueue.js";
import type { DomainEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, runUpdated } from "../testing/runFixtures.js";
import { TEST_NOW, fold, given } from "../testing/scenario.js";
import { aWorkspace } from "../testing/workspaceFixtures.js";
import { mergeQueueStream } from "./mergeQueue.js";

const PARENT = "thread:parent";
const parentThread = aProviderThread(PARENT, "steerable", { runtimeMode: "auto-accept-edits" });
const child = (id: string, overrides: Partial<AppThread> = {}) =>
  aProviderThread(id, "steerable", {
    lineage: { rootThreadId: PARENT, parentThreadId: PARENT, parentNodeId: null, relation: "subagent" },
    workspace: aWorkspace({ status: "ready" }),
    worktreePath: `/wt/${id}`,
    runtimeMode: "auto-accept-edits",
    ...overrides,
  });
// The parent is idle: its one run has ended.
const threads = [existing(parentThread), runUpdated(aRun(parentThread, { id: "run:parent", status: "completed" })), existing(child("thread:a")), existing(child("thread:b"))];
const RESOLVER: MergeResolver = { providerInstanceId: "steerable", model: null, runtimeMode: "auto-accept-edits", interactionMode: "default", instructions: null };

const enqueue = (entryId: string, childThreadId: string, resolver: MergeResolver | undefined = RESOLVER) =>
  cmd("merge-queue.enqueue", { parentThreadId: PARENT, entryId, childThreadId, onRefused: resolver === undefined ? "report" : "resolver", ...(resolver === undefined ? {} : { resolver }), commitChild: true, message: null });
const start = (entryId: string) => cmd("merge-queue.start", { parentThreadId: PARENT, entryId });
const resolve = (entryId: string, name = "r1") =>
  cmd("merge-queue.resolve", {
    parentThreadId: PARENT,
    entryId,
    baseCommit: "m1",
    parentCommit: "p1",
    childCommit: "c1",
    workspaceCode: "workspace_merge_conflict",
    files: ["a.txt"],
    check: null,
    taskId: `subagent:${name}`,
    resolverThreadId: `thread:${name}`,
    resolverRunId: `run:${name}`,
    resolverMessageId: `message:${name}`,
    title: "Resolve the merge of a",
    prompt: "Resolve it.",
    brief: "<merge_resolution>both sides</merge_resolution>",
  });
const resolved = (entryId: string) => cmd("merge-queue.resolved", { parentThreadId: PARENT, entryId });
const effect = (entryId: string) => ({ kind: "merge-queue.merge", streamId: mergeQueueStream(PARENT), payload: { parentThreadId: PARENT, entryId }, replaySafe: true });

function history(base: readonly DomainEvent[], ...commands: Parameters<ReturnType<typeof given>["when"]>[0][]): DomainEvent[] {
  let events: DomainEvent[] = [...base];
  for (const command of commands) events = given(...events).when(command).thenHistory();
  return events;
}
const entry = (events: readonly DomainEvent[], id: string): MergeQueueEntry => fold(...events).mergeQueueEntries.get(id)!;

describe("resolver tasks of the merge queue", () => {
  it("refuses onRefused resolver without a resolver, and a resolver without onRefused resolver", () => {
    given(...threads).when(cmd("merge-queue.enqueue", { parentThreadId: PARENT, entryId: "merge:a", childThreadId: "thread:a", onRefused: "resolver", commitChild: true, message: null })).thenRejects("merge_not_queueable");
    given(...threads).when(cmd("merge-queue.enqueue", { parentThreadId: PARENT, entryId: "merge:a", childThreadId: "thread:a", onRefused: "report", resolver: RESOLVER, commitChild: true, message: null })).thenRejects("merge_not_queueable");
  });

  it("delegates the resolver from the idle parent in a worktree at the merge in progress, and the queue waits for it", () => {
    const merging = history(threads, enqueue("merge:a", "thread:a"), enqueue("merge:b", "thread:b", undefined), start("merge:a"));
    const handed = given(...merging).when(resolve("merge:a"));
    expect(handed.decision).toMatchObject({ kind: "accepted" });
    const effects = handed.decision.kind === "accepted" ? handed.decision.effects : [];
    expect(effects.filter((e) => e.kind === "merge-queue.merge")).toEqual([]);
    // The entry behind it waits: the resolving entry is the head.
    given(...handed.thenHistory()).when(start("merge:b")).thenRejects("merge_entry_not_open");
    const after = handed.thenHistory();
    const state = fold(...after);
    expect(entry(after, "merge:a")).toMatchObject({ status: "resolving", resolution: { threadId: "thread:r1", taskId: "subagent:r1", status: "running", baseCommit: "m1", files: ["a.txt"] } });
    expect(entry(after, "merge:a").log.at(-1)).toBe(`${TEST_NOW} conflict in a.txt: handed to resolver thread thread:r1 on steerable`);
    expect(state.threads.get("thread:r1")).toMatchObject({
      lineage: { parentThreadId: PARENT },
      runtimeMode: "auto-accept-edits",
      workspace: { strategy: "worktree", baseRef: "m1", baseCheckpointId: null, repoPath: "/repo" },
    });
    expect(state.tasks.get("subagent:r1")).toMatchObject({ wakePolicy: "never", parentRunId: "run:parent", status: "running" });
    const transfers = (state.threadTransfers.get("thread:r1") ?? []).map((id) => state.transfers.get(id)!);
    expect(transfers.find((t) => t.kind === "manual")).toMatchObject({ text: "<merge_resolution>both sides</merge_resolution>", deliveredRunId: "run:r1" });
    // The same hand-off again (a replayed effect) is refused: the entry is no longer merging.
    given(...after).when(resolve("merge:a", "r2")).thenRejects("merge_entry_not_open");
  });

  it("holds the resolver to the parent's privilege ceiling", () => {
    const broader = [existing(parentThread), runUpdated(aRun(parentThread, { id: "run:parent", status: "completed" })), existing(child("thread:a"))];
    const merging = history(broader, enqueue("merge:a", "thread:a", { ...RESOLVER, runtimeMode: "full-access" }), start("merge:a"));
    given(...merging).when(resolve("merge:a")).thenRejects("runtime_mode_escalation_denied");
    expect(entry(merging, "merge:a").status).toBe("merging");
  });

  it("queues the entry again once the resolver completed, and ends it failed when the resolver did not, beginning the next", () => {
    const handed = history(threads, enqueue("merge:a", "thread:a"), enqueue("merge:b", "thread:b", undefined), start("merge:a"), resolve("merge:a"));
    given(...handed).when(resolved("merge:a")).thenRejects("merge_entry_not_open");
    const task = fold(...handed).tasks.get("subagent:r1")!;
    const subagent = fold(...handed).subagents.get("subagent:r1")!;
    const ended = (status: "completed" | "failed"): DomainEvent => ({ type: "subagent.updated", streamId: PARENT, data: { subagent: { ...subagent, status }, task: { ...task, status } } });

    const done = given(...handed, ended("completed")).when(resolved("merge:a"));
    expect(done.decision).toMatchObject({ kind: "accepted", effects: [effect("merge:a")] });
    const requeued = done.thenHistory();
    expect(entry(requeued, "merge:a")).toMatchObject({ status: "queued", resolution: { status: "resolved" } });
    expect(entry(history(requeued, start("merge:a")), "merge:a")).toMatchObject({ status: "merging", attempts: 2 });

    const failing = given(...handed, ended("failed")).when(resolved("merge:a"));
    expect(failing.decision).toMatchObject({ kind: "accepted", effects: [effect("merge:b")] });
    const failed = failing.thenHistory();
    expect(entry(failed, "merge:a")).toMatchObject({ status: "failed", resolution: { status: "failed" }, failure: { code: "workspace_conflict", files: ["a.txt"] } });
    expect(entry(failed, "merge:a").failure!.message).toContain("ended failed");
  });
});
