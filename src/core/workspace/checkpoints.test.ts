import { describe, expect, it } from "vitest";
import type { CheckpointCapturedCommand } from "../../contracts/commands/runtimeCommands.js";
import type { Run } from "../../contracts/entities/runs.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, anItem, itemEvent, runCreated, testId } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given } from "../testing/scenario.js";
import { aCheckpoint, aScope, aWorkspace, captured, scopeCreated, workspaceEffects } from "../testing/workspaceFixtures.js";

const A = "thread:a";
const SCOPE = "checkpoint-scope:1";
const FILES = [{ path: "a.txt", previousPath: null, kind: "added" as const, additions: 3, deletions: 0, binary: false }];

function record(data: Partial<CheckpointCapturedCommand["data"]> & { checkpointId: string }): CheckpointCapturedCommand["data"] {
  return {
    threadId: A,
    scopeId: SCOPE,
    workspacePath: "/repo",
    ordinal: 0,
    runId: "run:1",
    trigger: "turn_end",
    status: "ready",
    ref: "refs/loom/checkpoints/checkpoint-scope%3A1/0",
    commit: "c0",
    files: FILES,
    reason: null,
    forRunId: null,
    ...data,
  };
}

describe("workspace-runtime.checkpoint-captured", () => {
  it("creates the scope with its first checkpoint, and a post-turn checkpoint joins the timeline", () => {
    const thread = aProviderThread(A);
    const run = aRun(thread, { id: "run:1", status: "completed" });
    const scope = { id: SCOPE, threadId: A, workspacePath: "/repo", createdAt: NOW, updatedAt: NOW };
    const checkpoint = aCheckpoint(scope, 0, {
      id: "checkpoint:1",
      runId: "run:1",
      trigger: "turn_end",
      commit: "c0",
      ref: "refs/loom/checkpoints/checkpoint-scope%3A1/0",
      files: FILES,
      createdAt: NOW,
      updatedAt: NOW,
    });
    const item = anItem(A, "run:1", 0, testId("turn-item", 1), { type: "checkpoint", checkpointId: "checkpoint:1", scopeId: SCOPE, appRunOrdinal: 1, status: "ready", files: FILES }, { createdAt: NOW });
    const state = given(existing(thread), runCreated(run))
      .when(cmd("workspace-runtime.checkpoint-captured", record({ checkpointId: "checkpoint:1" })))
      .then([scopeCreated(scope), captured(checkpoint), itemEvent(item)]);
    expect(state.scopeCheckpoints.get(SCOPE)).toEqual(["checkpoint:1"]);
  });

  it("records a non-git workspace as missing with its reason, and is recorded once", () => {
    const thread = aProviderThread(A);
    const run = aRun(thread, { id: "run:1" });
    const history = given(existing(thread), runCreated(run))
      .when(cmd("workspace-runtime.checkpoint-captured", record({ checkpointId: "checkpoint:1", trigger: "turn_start", status: "missing", commit: null, files: [], reason: "/x is not inside a git repository" })))
      .thenHistory();
    expect(fold(...history).checkpoints.get("checkpoint:1")).toMatchObject({ status: "missing", reason: "/x is not inside a git repository", commit: null });
    given(...history).when(cmd("workspace-runtime.checkpoint-captured", record({ checkpointId: "checkpoint:1" }))).thenRejects(RejectionCode.checkpointAlreadyRecorded);
  });

  it("lets a worktree child waiting for its parent's checkpoint go on to its worktree", () => {
    const parent = aProviderThread("thread:parent");
    const child = aProviderThread(A, "steerable", { workspace: aWorkspace({ baseCheckpointId: "checkpoint:base" }) });
    const waiting: Run = {
      ...aRun(child, { id: "run:child", status: "starting" }),
      preparation: { kind: "workspace", status: "preparing", step: "base", setupItemId: null, checkpointId: null, force: false, startedAt: NOW, endedAt: null },
    };
    const scenario = given(existing(parent), existing(child), runCreated(waiting)).when(
      cmd("workspace-runtime.checkpoint-captured", record({ threadId: parent.id, checkpointId: "checkpoint:base", runId: null, trigger: "child_branch", forRunId: "run:child" })),
    );
    expect(scenario.decision.kind === "accepted" && scenario.decision.effects).toEqual([workspaceEffects.prepare(A, "run:child")]);
    expect(fold(...scenario.thenHistory()).runs.get("run:child")?.preparation?.step).toBe("worktree");
  });

  it("fails the waiting child's preparation when the parent's workspace could not be captured", () => {
    const parent = aProviderThread("thread:parent");
    const child = aProviderThread(A, "steerable", { workspace: aWorkspace({ baseCheckpointId: "checkpoint:base" }) });
    const waiting: Run = {
      ...aRun(child, { id: "run:child", status: "starting" }),
      preparation: { kind: "workspace", status: "preparing", step: "base", setupItemId: null, checkpointId: null, force: false, startedAt: NOW, endedAt: null },
    };
    const history = given(existing(parent), existing(child), runCreated(waiting))
      .when(
        cmd(
          "workspace-runtime.checkpoint-captured",
          record({ threadId: parent.id, checkpointId: "checkpoint:base", runId: null, trigger: "child_branch", forRunId: "run:child", status: "error", commit: null, reason: "disk full" }),
        ),
      )
      .thenHistory();
    expect(fold(...history).runs.get("run:child")).toMatchObject({ status: "failed", endReason: "preparation_failed", failure: { code: "workspace_base_unavailable" } });
  });

  it("refuses a scope that belongs to another thread", () => {
    const thread = aProviderThread(A);
    const other = aProviderThread("thread:b");
    given(existing(thread), existing(other), scopeCreated(aScope(other, SCOPE)))
      .when(cmd("workspace-runtime.checkpoint-captured", record({ checkpointId: "checkpoint:1", runId: null, trigger: "turn_start" })))
      .thenRejects(RejectionCode.invalidWorkspace);
  });
});
