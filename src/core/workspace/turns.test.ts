import { describe, expect, it } from "vitest";
import type { Run } from "../../contracts/entities/runs.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, aUserMessage, effects, itemEvents, runCreated, runUpdated, testId } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given } from "../testing/scenario.js";
import { aWorkspace, checkpointContext, workspaceEffects } from "../testing/workspaceFixtures.js";
import { RUNTIME_MODE_WRITES } from "./turns.js";

const A = "thread:a";

describe("a turn with checkpoints on", () => {
  it("captures the workspace before the provider starts: the capture effect comes first in the same decision", () => {
    const thread = aProviderThread(A);
    const ctx = checkpointContext();
    const run = aRun(thread, { id: testId("run", 1), status: "queued", messageId: testId("message", 2), createdAt: NOW, updatedAt: NOW });
    given(existing(thread))
      .when(cmd("message.dispatch", { threadId: A, text: "go" }), ctx)
      .then(
        [runCreated(run), ...itemEvents(aUserMessage(A, run.id, 0, testId("turn-item", 3), run.messageId!, "go", { createdAt: NOW })), runUpdated({ ...run, status: "starting" })],
        [workspaceEffects.capture(A, run.id, "turn_start", testId("checkpoint", 4)), effects.startTurn(A, run.id)],
      );
  });

  it("captures after the turn, before the next queued run's own capture and start", () => {
    const thread = aProviderThread(A);
    const running = aRun(thread, { id: "run:1" });
    const queued = aRun(thread, { id: "run:2", ordinal: 2, status: "queued", queueRank: 0 });
    const decision = given(existing(thread), runCreated(running), runCreated(queued)).when(
      cmd("provider-runtime.turn-completed", { threadId: A, runId: "run:1", status: "completed", error: null }),
      checkpointContext(),
    ).decision;
    expect(decision.kind === "accepted" && decision.effects).toEqual([
      workspaceEffects.capture(A, "run:1", "turn_end", testId("checkpoint", 1)),
      workspaceEffects.capture(A, "run:2", "turn_start", testId("checkpoint", 2)),
      effects.startTurn(A, "run:2"),
    ]);
  });

  it("takes no post-turn checkpoint of a run cancelled in the queue", () => {
    const thread = aProviderThread(A);
    const queued = aRun(thread, { id: "run:2", status: "queued", queueRank: 0 });
    const decision = given(existing(thread), runCreated(queued)).when(cmd("queued-run.cancel", { threadId: A, runId: "run:2" }), checkpointContext()).decision;
    expect(decision.kind === "accepted" && decision.effects).toEqual([]);
  });

  it("treats every runtime mode Loom has as one that may write", () => {
    expect(Object.values(RUNTIME_MODE_WRITES).every(Boolean)).toBe(true);
  });
});

describe("a worktree thread's first run", () => {
  it("is a prepared run: it prepares the worktree and does not start its provider", () => {
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace() });
    const decision = given(existing(thread)).when(cmd("message.dispatch", { threadId: A, text: "go" }), checkpointContext()).decision;
    expect(decision.kind === "accepted" && decision.effects).toEqual([workspaceEffects.prepare(A, testId("run", 1))]);
    const state = given(existing(thread)).when(cmd("message.dispatch", { threadId: A, text: "go" }), checkpointContext()).thenIncludes(
      runUpdated({
        ...aRun(thread, { id: testId("run", 1), status: "starting", messageId: testId("message", 2), createdAt: NOW, updatedAt: NOW }),
        preparation: { kind: "workspace", status: "preparing", step: "worktree", setupItemId: null, checkpointId: null, force: false, startedAt: NOW, endedAt: null },
      }),
    );
    expect(state.runs.get(testId("run", 1))?.status).toBe("starting");
  });

  it("a worktree child waits for its parent's checkpoint, asked for on the parent's effect chain", () => {
    const parent = aProviderThread("thread:parent");
    const parentRun = aRun(parent, { id: "run:parent" });
    const child = aProviderThread(A, "steerable", {
      workspace: aWorkspace({ baseCheckpointId: "checkpoint:base" }),
      lineage: { rootThreadId: parent.id, parentThreadId: parent.id, parentNodeId: null, relation: "subagent" },
    });
    const decision = given(existing(parent), runCreated(parentRun), existing(child)).when(cmd("message.dispatch", { threadId: A, text: "go" }), checkpointContext()).decision;
    expect(decision.kind === "accepted" && decision.effects).toEqual([workspaceEffects.capture(parent.id, "run:parent", "child_branch", "checkpoint:base", testId("run", 1))]);
  });

  it("ends its preparation as failed when the run is interrupted while preparing, with no post-turn checkpoint", () => {
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace() });
    const preparing: Run = {
      ...aRun(thread, { id: "run:1", status: "starting" }),
      preparation: { kind: "workspace", status: "preparing", step: "setup", setupItemId: null, checkpointId: null, force: false, startedAt: NOW, endedAt: null },
    };
    const scenario = given(existing(thread), runCreated(preparing)).when(
      cmd("provider-runtime.turn-completed", { threadId: A, runId: "run:1", status: "interrupted", error: null }),
      checkpointContext(),
    );
    expect(scenario.decision.kind === "accepted" && scenario.decision.effects).toEqual([]);
    const history = scenario.thenHistory();
    expect(fold(...history).runs.get("run:1")).toMatchObject({ status: "interrupted", preparation: { status: "failed", endedAt: NOW } });
    const ended = given(...history).when(cmd("prepared-run.release", { threadId: A, runId: "run:1" })).thenRejects(RejectionCode.preparationNotActive);
    expect(ended.message).toContain("not preparing");
  });
});
