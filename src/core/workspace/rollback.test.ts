import { describe, expect, it } from "vitest";
import { checkpointRollbackEvent } from "../../contracts/events.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, anItem, effects, itemEvent, runCreated, testId } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given } from "../testing/scenario.js";
import { aCheckpoint, aScope, captured, checkpointContext, scopeCreated, workspaceEffects } from "../testing/workspaceFixtures.js";

const A = "thread:a";
const thread = aProviderThread(A);
const scope = aScope(thread);
/** Run 1's turn: before (ordinal 0) and after (ordinal 1). */
const before = aCheckpoint(scope, 0, { id: "checkpoint:0", runId: "run:1", trigger: "turn_start" });
const afterTurn = aCheckpoint(scope, 1, { id: "checkpoint:1", runId: "run:1", trigger: "turn_end" });
const history = [existing(thread), runCreated(aRun(thread, { id: "run:1", status: "completed" })), scopeCreated(scope), captured(before), captured(afterTurn)];

describe("checkpoint.rollback", () => {
  it("on an idle thread: records the request and starts a rollback_recovery run whose preparation restores the checkpoint", () => {
    const scenario = given(...history).when(cmd("checkpoint.rollback", { threadId: A, checkpointId: "checkpoint:0", recoveryRunId: "run:2" }), checkpointContext());
    expect(scenario.decision.kind === "accepted" && scenario.decision.effects).toEqual([workspaceEffects.restore(A, "run:2", "checkpoint:0")]);
    expect(scenario.decision.kind === "accepted" && scenario.decision.events[0]).toEqual(
      checkpointRollbackEvent({ threadId: A, checkpointId: "checkpoint:0", scopeId: scope.id, ordinalWithinScope: 0, interruptedRunId: null, recoveryRunId: "run:2", force: false, requestedAt: NOW }),
    );
    expect(fold(...scenario.thenHistory()).runs.get("run:2")).toMatchObject({
      kind: "rollback_recovery",
      ordinal: 2,
      status: "starting",
      messageId: testId("message", 1),
      preparation: { kind: "rollback", status: "preparing", step: "restore", checkpointId: "checkpoint:0" },
    });
  });

  it("while a turn runs: interrupts it first; the restore follows the turn's end and its post-turn checkpoint", () => {
    const ctx = checkpointContext();
    const running = aRun(thread, { id: "run:3", ordinal: 2 });
    const requested = given(...history, runCreated(running)).when(cmd("checkpoint.rollback", { threadId: A, checkpointId: "checkpoint:0", recoveryRunId: "run:4" }), ctx);
    expect(requested.decision.kind === "accepted" && requested.decision.effects).toEqual([effects.interruptTurn(A, "run:3")]);
    const queued = requested.thenHistory();
    expect(fold(...queued).runs.get("run:4")).toMatchObject({ status: "queued", queueRank: 0 });
    const ended = given(...queued).when(cmd("provider-runtime.turn-completed", { threadId: A, runId: "run:3", status: "interrupted", error: null }), ctx);
    expect(ended.decision.kind === "accepted" && ended.decision.effects).toEqual([
      // (id 3 went to the interrupt request's result item)
      workspaceEffects.capture(A, "run:3", "turn_end", testId("checkpoint", 4)),
      workspaceEffects.restore(A, "run:4", "checkpoint:0"),
    ]);
  });

  it("on release: later checkpoints go stale, the agent is told what was restored, then the turn begins", () => {
    const ctx = checkpointContext();
    const started = given(...history).when(cmd("checkpoint.rollback", { threadId: A, checkpointId: "checkpoint:0", recoveryRunId: "run:2" }), ctx).thenHistory();
    const restored = [{ path: "a.txt", previousPath: null, kind: "deleted" as const, additions: 0, deletions: 3, binary: false }];
    const release = given(...started).when(cmd("prepared-run.release", { threadId: A, runId: "run:2", restoredFiles: restored, overwritten: [] }), ctx);
    expect(release.decision.kind === "accepted" && release.decision.effects).toEqual([workspaceEffects.capture(A, "run:2", "turn_start", testId("checkpoint", 3)), effects.startTurn(A, "run:2")]);
    const state = fold(...release.thenHistory());
    expect(state.checkpoints.get("checkpoint:1")?.status).toBe("stale");
    expect(state.checkpoints.get("checkpoint:0")?.status).toBe("ready");
    const message = state.turnItems.get(A)!.find((item) => item.type === "user_message");
    expect(message).toMatchObject({ runId: "run:2", messageId: testId("message", 1), createdBy: "system" });
    expect(message?.type === "user_message" && message.text).toContain("rolled back to checkpoint #0");
    expect(message?.type === "user_message" && message.text).toContain("- a.txt: removed");
  });

  it("on release: a superseded checkpoint's timeline item goes stale too, the restored one's stays ready", () => {
    const ctx = checkpointContext();
    const body = (checkpoint: typeof before) => ({ type: "checkpoint" as const, checkpointId: checkpoint.id, scopeId: scope.id, appRunOrdinal: 1, status: "ready" as const, files: [] });
    const items = [itemEvent(anItem(A, "run:1", 0, "item:before", body(before))), itemEvent(anItem(A, "run:1", 1, "item:after", body(afterTurn)))];
    const started = given(...history, ...items).when(cmd("checkpoint.rollback", { threadId: A, checkpointId: "checkpoint:0", recoveryRunId: "run:2" }), ctx).thenHistory();
    const release = given(...started).when(cmd("prepared-run.release", { threadId: A, runId: "run:2", restoredFiles: [], overwritten: [] }), ctx);
    const timeline = fold(...release.thenHistory()).turnItems.get(A)!;
    expect(timeline.find((item) => item.id === "item:after")).toMatchObject({ status: "stale", position: 1 });
    expect(timeline.find((item) => item.id === "item:before")).toMatchObject({ status: "ready" });
  });

  it("checkpoint.rollback.fail: the recovery run fails naming the files in conflict, and its provider never starts", () => {
    const ctx = checkpointContext();
    const started = given(...history).when(cmd("checkpoint.rollback", { threadId: A, checkpointId: "checkpoint:0", recoveryRunId: "run:2" }), ctx).thenHistory();
    const failed = given(...started).when(
      cmd("checkpoint.rollback.fail", { threadId: A, runId: "run:2", checkpointId: "checkpoint:0", code: "workspace_rollback_conflict", message: "uncaptured changes", files: ["a.txt"] }),
      ctx,
    );
    expect(failed.decision.kind === "accepted" && failed.decision.effects).toEqual([]);
    const state = fold(...failed.thenHistory());
    expect(state.runs.get("run:2")).toMatchObject({ status: "failed", endReason: "rollback_failed", failure: { code: "workspace_rollback_conflict" } });
    expect(state.runs.get("run:2")?.failure?.message).toContain("a.txt");
    expect(state.checkpoints.get("checkpoint:1")?.status).toBe("ready");
  });

  it("refuses an unknown checkpoint, one that holds nothing, and a second rollback while one is pending", () => {
    given(...history).when(cmd("checkpoint.rollback", { threadId: A, checkpointId: "checkpoint:nope" })).thenRejects(RejectionCode.checkpointNotFound);
    const missing = aCheckpoint(scope, 2, { id: "checkpoint:2", status: "missing", commit: null, reason: "not a repository" });
    given(...history, captured(missing)).when(cmd("checkpoint.rollback", { threadId: A, checkpointId: "checkpoint:2" })).thenRejects(RejectionCode.checkpointNotReady);
    const pending = given(...history).when(cmd("checkpoint.rollback", { threadId: A, checkpointId: "checkpoint:0", recoveryRunId: "run:2" })).thenHistory();
    given(...pending).when(cmd("checkpoint.rollback", { threadId: A, checkpointId: "checkpoint:1" })).thenRejects(RejectionCode.rollbackInProgress);
  });
});
