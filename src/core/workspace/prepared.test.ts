import { describe, expect, it } from "vitest";
import type { Run, RunPreparation } from "../../contracts/entities/runs.js";
import { threadEvent } from "../../contracts/events.js";
import type { AppThread } from "../../contracts/thread.js";
import { RejectionCode } from "../rejections.js";
import { cmd, existing } from "../testing/fixtures.js";
import { aProviderThread, aRun, after, anItem, effects, itemEvent, runCreated, runUpdated, testId } from "../testing/runFixtures.js";
import { TEST_NOW as NOW, fold, given, testContext } from "../testing/scenario.js";
import { aWorkspace, checkpointContext, workspaceEffects } from "../testing/workspaceFixtures.js";

const A = "thread:a";
const R = "run:1";

function preparing(step: RunPreparation["step"], overrides: Partial<RunPreparation> = {}): RunPreparation {
  return { kind: "workspace", status: "preparing", step, setupItemId: null, checkpointId: null, force: false, startedAt: NOW, endedAt: null, ...overrides };
}

function aPreparingRun(thread: AppThread, preparation: RunPreparation, fields: Partial<Run> = {}): Run {
  return { ...aRun(thread, { id: R, status: "starting", messageId: "message:1", ...fields }), preparation };
}

const setup = (output: string, extra: { exitCode?: number | null; durationMs?: number } = {}) => ({ command: "npm ci", cwd: "/wt/a", output, outputTruncated: false, ...extra });

describe("prepared-run.progress", () => {
  it("records the worktree on the thread and moves the preparation to its setup", () => {
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace() });
    const run = aPreparingRun(thread, preparing("worktree"));
    given(existing(thread), runCreated(run))
      .when(cmd("prepared-run.progress", { threadId: A, runId: R, step: "worktree", worktree: { path: "/wt/a", branch: "loom/thread-a", baseCommit: "abc" } }))
      .then([
        threadEvent("thread.metadata-updated", after(thread, { worktreePath: "/wt/a", branch: "loom/thread-a", workspace: aWorkspace({ portBlock: 0 }) })),
        runUpdated(after(run, { preparation: preparing("setup") })),
      ]);
  });

  it("gives each live worktree the lowest port block no other live thread holds, and a deleted thread's block is free again", () => {
    const holder = (id: string, portBlock: number, deleted = false) =>
      aProviderThread(id, "steerable", { workspace: aWorkspace({ status: "ready", portBlock }), worktreePath: `/wt/${id}`, deletedAt: deleted ? NOW : null });
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace() });
    const run = aPreparingRun(thread, preparing("worktree"));
    const report = cmd("prepared-run.progress", { threadId: A, runId: R, step: "worktree", worktree: { path: "/wt/a", branch: "loom/thread-a", baseCommit: "abc" } });
    const blockAfter = (...others: AppThread[]) =>
      fold(...given(...others.map((other) => existing(other)), existing(thread), runCreated(run)).when(report).thenHistory()).threads.get(A)?.workspace?.portBlock;
    expect(blockAfter()).toBe(0);
    expect(blockAfter(holder("thread:b", 0), holder("thread:c", 2))).toBe(1);
    expect(blockAfter(holder("thread:b", 0), holder("thread:c", 1))).toBe(2);
    expect(blockAfter(holder("thread:b", 0, true), holder("thread:c", 1))).toBe(0);
  });

  it("keeps the block a replayed worktree report already took", () => {
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace({ portBlock: 3 }), worktreePath: "/wt/a" });
    const run = aPreparingRun(thread, preparing("worktree"));
    const history = given(existing(thread), runCreated(run))
      .when(cmd("prepared-run.progress", { threadId: A, runId: R, step: "worktree", worktree: { path: "/wt/a", branch: "loom/thread-a", baseCommit: "abc" } }))
      .thenHistory();
    expect(fold(...history).threads.get(A)?.workspace?.portBlock).toBe(3);
  });

  it("shows setup output as one command item, updated in place", () => {
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace(), worktreePath: "/wt/a" });
    const run = aPreparingRun(thread, preparing("setup"));
    const item = testId("turn-item", 1);
    const history = given(existing(thread), runCreated(run))
      .when(cmd("prepared-run.progress", { threadId: A, runId: R, step: "setup", setup: setup("installing\n") }))
      .thenHistory();
    const body = { type: "command_execution" as const, command: "npm ci", cwd: "/wt/a", status: "in_progress" as const, exitCode: null, durationMs: null, outputTruncated: false, outputStreamId: null };
    given(...history)
      .when(cmd("prepared-run.progress", { threadId: A, runId: R, step: "setup", setup: setup("installing\ndone\n") }))
      .then([itemEvent(anItem(A, R, 0, item, { ...body, outputPreview: "installing\ndone\n" }, { createdAt: NOW, updatedAt: NOW }))]);
    expect(fold(...history).runs.get(R)?.preparation?.setupItemId).toBe(item);
  });

  it("refuses a report for a run that is not preparing", () => {
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace() });
    const run = aRun(thread, { id: R, status: "running" });
    given(existing(thread), runCreated(run))
      .when(cmd("prepared-run.progress", { threadId: A, runId: R, step: "setup", setup: setup("x") }))
      .thenRejects(RejectionCode.preparationNotActive);
  });
});

describe("prepared-run.release", () => {
  it("marks the worktree ready, completes the setup item, then begins the turn with its pre-turn checkpoint", () => {
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace(), worktreePath: "/wt/a", branch: "loom/thread-a" });
    const run = aPreparingRun(thread, preparing("setup"));
    const ctx = checkpointContext();
    const item = testId("turn-item", 1);
    const released = after(run, { preparation: preparing("setup", { setupItemId: item, status: "ready", endedAt: NOW }) });
    given(existing(thread), runCreated(run))
      .when(cmd("prepared-run.release", { threadId: A, runId: R, setup: setup("ok\n", { exitCode: 0, durationMs: 12 }) }), ctx)
      .then(
        [
          itemEvent(
            anItem(
              A,
              R,
              0,
              item,
              { type: "command_execution", command: "npm ci", cwd: "/wt/a", status: "completed", exitCode: 0, durationMs: 12, outputPreview: "ok\n", outputTruncated: false, outputStreamId: null },
              { createdAt: NOW, updatedAt: NOW },
            ),
          ),
          runUpdated(after(run, { preparation: preparing("setup", { setupItemId: item }) })),
          threadEvent("thread.metadata-updated", after(thread, { workspace: aWorkspace({ status: "ready" }) })),
          runUpdated(released),
        ],
        [workspaceEffects.capture(A, R, "turn_start", testId("checkpoint", 2)), effects.startTurn(A, R)],
      );
  });

  it("refuses to release a worktree preparation before the worktree is recorded", () => {
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace() });
    given(existing(thread), runCreated(aPreparingRun(thread, preparing("worktree"))))
      .when(cmd("prepared-run.release", { threadId: A, runId: R }))
      .thenRejects(RejectionCode.invalidWorkspace);
  });
});

describe("prepared-run.fail and prepared-run.retry", () => {
  it("fails the run before its provider ever starts, and a retry prepares a new run with the same message", () => {
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace(), worktreePath: "/wt/a" });
    const run = aPreparingRun(thread, preparing("setup"));
    const ctx = testContext();
    const failed = given(existing(thread), runCreated(run)).when(
      cmd("prepared-run.fail", { threadId: A, runId: R, code: "setup_failed", message: "the setup command exited with 3", setup: setup("boom\n", { exitCode: 3, durationMs: 5 }) }),
      ctx,
    );
    expect(failed.decision.kind === "accepted" && failed.decision.effects).toEqual([]);
    const history = failed.thenHistory();
    const state = fold(...history);
    expect(state.runs.get(R)).toMatchObject({
      status: "failed",
      endReason: "preparation_failed",
      failure: { code: "setup_failed", message: "the setup command exited with 3" },
      preparation: { status: "failed" },
    });
    const items = state.turnItems.get(A)!;
    expect(items.map((item) => item.type)).toEqual(["command_execution", "error"]);
    expect(items[0]).toMatchObject({ status: "failed", exitCode: 3, outputPreview: "boom\n" });

    const retried = given(...history).when(cmd("prepared-run.retry", { threadId: A, runId: R, newRunId: "run:2" }), ctx);
    expect(retried.decision.kind === "accepted" && retried.decision.effects).toEqual([workspaceEffects.prepare(A, "run:2")]);
    const again = fold(...retried.thenHistory()).runs.get("run:2");
    expect(again).toMatchObject({ kind: "user_turn", messageId: "message:1", status: "starting", preparation: { kind: "workspace", status: "preparing" } });
  });

  it("closes a running setup's command item as failed, with its last output, when the run ends in its preparation", () => {
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace(), worktreePath: "/wt/a" });
    const run = aPreparingRun(thread, preparing("setup"));
    const ctx = testContext();
    const history = given(existing(thread), runCreated(run))
      .when(cmd("prepared-run.progress", { threadId: A, runId: R, step: "setup", setup: setup("installing\n") }), ctx)
      .thenHistory();
    const lost = given(...history)
      .when(cmd("provider-runtime.run-lost", { threadId: A, runId: R, status: "interrupted", reason: "server_restarted", message: "Loom restarted" }), ctx)
      .thenHistory();
    const state = fold(...lost);
    expect(state.runs.get(R)).toMatchObject({ status: "interrupted", preparation: { status: "failed", step: "setup" } });
    expect(state.turnItems.get(A)!.find((item) => item?.type === "command_execution")).toMatchObject({ status: "failed", outputPreview: "installing\n" });
  });

  it("ends a preparing run when its thread is deleted, and cleans the worktree up after it", () => {
    const thread = aProviderThread(A, "steerable", { workspace: aWorkspace(), worktreePath: "/wt/a" });
    const run = aPreparingRun(thread, preparing("setup"));
    const queued = aRun(thread, { id: "run:queued", status: "queued", queueRank: 0 });
    const deleted = given(existing(thread), runCreated(run), runCreated(queued)).when(cmd("thread.delete", { threadId: A }), testContext());
    expect(deleted.decision.kind === "accepted" && deleted.decision.effects).toEqual([workspaceEffects.cleanup(A)]);
    const state = fold(...deleted.thenHistory());
    expect(state.threads.get(A)?.deletedAt).toBe(NOW);
    expect(state.runs.get(R)).toMatchObject({ status: "interrupted", endReason: "thread_deleted", preparation: { status: "failed" } });
    // A deleted thread starts no more work.
    expect(state.runs.get("run:queued")?.status).toBe("queued");
  });

  it("refuses to retry a run that did not end in its preparation", () => {
    const thread = aProviderThread(A);
    given(existing(thread), runCreated(aRun(thread, { id: R, status: "completed", endReason: "completed" })))
      .when(cmd("prepared-run.retry", { threadId: A, runId: R }))
      .thenRejects(RejectionCode.runNotRetryable);
  });
});
