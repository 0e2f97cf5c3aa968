import { describe, expect, it } from "vitest";
import type { CheckpointFile } from "../../contracts/entities/checkpoints.js";
import type { AppThread } from "../../contracts/thread.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, runCreated } from "../testing/runFixtures.js";
import { fold, given } from "../testing/scenario.js";
import { aCheckpoint, aScope, aWorkspace, captured, scopeCreated } from "../testing/workspaceFixtures.js";

const PARENT = "thread:parent";
const ONE = "thread:one";
const TWO = "thread:two";

const file = (path: string): CheckpointFile => ({ path, previousPath: null, kind: "modified", additions: 1, deletions: 1, binary: false });
const child = (id: string, overrides: Partial<AppThread> = {}) =>
  aProviderThread(id, "steerable", {
    title: id === ONE ? "One" : "Two",
    lineage: { rootThreadId: PARENT, parentThreadId: PARENT, parentNodeId: null, relation: "subagent" },
    workspace: aWorkspace({ status: "ready", portBlock: id === ONE ? 0 : 1 }),
    worktreePath: `/wt/${id}`,
    ...overrides,
  });

/** Thread TWO has already changed shared.txt and b.txt; thread ONE's turn-end checkpoint reports `files`. */
function scenario(files: CheckpointFile[], two: AppThread = child(TWO), one: AppThread = child(ONE)) {
  const parent = aProviderThread(PARENT);
  const twoScope = aScope(two, "checkpoint-scope:two");
  const earlier = aCheckpoint(twoScope, 0, { id: "checkpoint:two", trigger: "turn_end", files: [file("shared.txt"), file("b.txt")] });
  const run = aRun(one, { id: "run:one", status: "completed" });
  return given(existing(parent), existing(one), existing(two), scopeCreated(twoScope), captured(earlier), runCreated(run)).when(
    cmd("workspace-runtime.checkpoint-captured", {
      threadId: ONE,
      checkpointId: "checkpoint:one",
      scopeId: "checkpoint-scope:one",
      workspacePath: "/wt/one",
      ordinal: 0,
      runId: "run:one",
      trigger: "turn_end",
      status: "ready",
      ref: "refs/loom/checkpoints/one/0",
      commit: "c1",
      files,
      reason: null,
      forRunId: null,
    }),
  );
}

const notices = (state: ReturnType<typeof fold>, threadId: string) => (state.turnItems.get(threadId) ?? []).filter((item) => item?.type === "notification");

describe("overlap awareness between worktree siblings", () => {
  it("records the pair on both siblings and tells both and their parent which files they share", () => {
    const state = fold(...scenario([file("shared.txt"), file("a.txt")]).thenHistory());
    expect(state.threads.get(ONE)?.workspace?.overlaps).toEqual([{ threadId: TWO, files: ["shared.txt"] }]);
    expect(state.threads.get(TWO)?.workspace?.overlaps).toEqual([{ threadId: ONE, files: ["shared.txt"] }]);
    for (const id of [ONE, TWO, PARENT]) {
      const told = notices(state, id);
      expect(told).toHaveLength(1);
      expect(told[0]).toMatchObject({ text: expect.stringContaining("shared.txt") });
      expect(told[0]).not.toMatchObject({ text: expect.stringContaining("a.txt") });
    }
  });

  it("says nothing for disjoint files, a deleted sibling, or an overlap already told", () => {
    expect(fold(...scenario([file("a.txt")]).thenHistory()).threads.get(ONE)?.workspace?.overlaps).toBeUndefined();
    const deleted = fold(...scenario([file("shared.txt")], child(TWO, { deletedAt: "2026-01-01T00:00:00.000Z" })).thenHistory());
    expect(deleted.threads.get(ONE)?.workspace?.overlaps).toBeUndefined();
    expect(notices(deleted, PARENT)).toHaveLength(0);
    const knowing = (id: string, other: string) => child(id, { workspace: aWorkspace({ status: "ready", portBlock: 0, overlaps: [{ threadId: other, files: ["shared.txt"] }] }) });
    const again = fold(...scenario([file("shared.txt")], knowing(TWO, ONE), knowing(ONE, TWO)).thenHistory());
    expect(notices(again, PARENT)).toHaveLength(0);
    // A file more is told again, with every shared file.
    const grown = fold(...scenario([file("shared.txt"), file("b.txt")], knowing(TWO, ONE), knowing(ONE, TWO)).thenHistory());
    expect(grown.threads.get(ONE)?.workspace?.overlaps).toEqual([{ threadId: TWO, files: ["b.txt", "shared.txt"] }]);
    expect(notices(grown, PARENT)).toHaveLength(1);
  });

  it("tells an overlap as a running turn's file change is recorded, once per pair and file set, not once per item", () => {
    const parent = aProviderThread(PARENT);
    const one = child(ONE);
    const two = child(TWO);
    const twoScope = aScope(two, "checkpoint-scope:two");
    const earlier = aCheckpoint(twoScope, 0, { id: "checkpoint:two", trigger: "turn_end", files: [file("shared.txt")] });
    const edit = (n: number, path: string) =>
      cmd("provider-runtime.item-completed", { threadId: ONE, runId: "run:one", driver: "scripted", nativeItemId: `item-${n}`, item: { kind: "file_change", changes: [{ path, kind: "update", additions: 1, deletions: 0 }] } });
    const base = [existing(parent), existing(one), existing(two), scopeCreated(twoScope), captured(earlier), runCreated(aRun(one, { id: "run:one", status: "running" }))];
    // The agent reports the path absolute, in its own worktree.
    const first = given(...base).when(edit(1, "/wt/thread:one/shared.txt")).thenHistory();
    const state = fold(...first);
    expect(state.threads.get(ONE)?.workspace?.overlaps).toEqual([{ threadId: TWO, files: ["shared.txt"] }]);
    expect(state.threads.get(TWO)?.workspace?.overlaps).toEqual([{ threadId: ONE, files: ["shared.txt"] }]);
    for (const id of [ONE, TWO, PARENT]) expect(notices(state, id)).toHaveLength(1);
    // The same file edited again, then a file of its own: nothing more to tell.
    const later = fold(...given(...given(...first).when(edit(2, "shared.txt")).thenHistory()).when(edit(3, "mine.txt")).thenHistory());
    for (const id of [ONE, TWO, PARENT]) expect(notices(later, id)).toHaveLength(1);
    // The sibling's file change on a file the first changed mid-turn is weighed from its side.
    const backwards = given(...base).when(edit(1, "other.txt")).thenHistory();
    const fromTwo = fold(
      ...given(...backwards, runCreated(aRun(two, { id: "run:two", status: "running" })))
        .when(cmd("provider-runtime.item-completed", { threadId: TWO, runId: "run:two", driver: "scripted", nativeItemId: "item-9", item: { kind: "file_change", changes: [{ path: "other.txt", kind: "update", additions: 1, deletions: 0 }] } }))
        .thenHistory(),
    );
    expect(fromTwo.threads.get(TWO)?.workspace?.overlaps).toEqual([{ threadId: ONE, files: ["other.txt"] }]);
    expect(fromTwo.threads.get(ONE)?.workspace?.overlaps).toEqual([{ threadId: TWO, files: ["other.txt"] }]);
    expect(notices(fromTwo, PARENT)).toHaveLength(1);
  });
});
