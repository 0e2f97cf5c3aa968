import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { script } from "../../testkit/loomHarness.js";
import { type RepoHarness, checkpointsOf, startRepoHarness, waitForCheckpoint } from "../../testkit/workspaceHarness.js";

/**
 * checkpoint.rollback on a real repository through the real server: the
 * running turn is interrupted and captured first, the files are restored to
 * the checkpoint, later checkpoints become stale, and a rollback_recovery run
 * tells the agent what was rolled back. Uncaptured changes in the way fail
 * the rollback (checkpoint.rollback.fail, with the files) and change nothing.
 */

let env: RepoHarness | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
});

describe("checkpoint.rollback", () => {
  it("rolls back a turn while the next turn runs: interrupts it, keeps its work as a checkpoint, restores the files and tells the agent", async () => {
    env = await startRepoHarness({ files: { "README.md": "hello\n" } });
    const { h, repo } = env;
    const launched = await h.launch({ projectId: "repo", message: script({ write: { path: "a.txt", content: "one\n" } }) });
    const end1 = await waitForCheckpoint(h, launched.threadId, launched.runId!, "turn_end");
    expect(end1.files.map((f) => f.path)).toEqual(["a.txt"]);

    const second = await h.owner.ok<{ runId: string }>("t3_thread_send", {
      threadId: launched.threadId,
      message: script({ write: { path: "a.txt", content: "two\n" } }, { write: { path: "b.txt", content: "new\n" } }, { sleep: 30_000 }, { say: "never" }),
    });
    await h.until(() => existsSync(join(repo, "b.txt")) && h.run(second.runId).status === "running", "the second turn to have written b.txt");

    const requested = await h.dispatch("checkpoint.rollback", { threadId: launched.threadId, checkpointId: end1.id, recoveryRunId: "run:recovery" });
    expect(requested.status).toBe(200);
    const interrupted = await h.waitForEnd(second.runId);
    expect(interrupted.status).toBe("interrupted");
    const recovery = await h.waitForEnd("run:recovery");
    expect(recovery).toMatchObject({ status: "completed", kind: "rollback_recovery", preparation: { kind: "rollback", status: "ready", checkpointId: end1.id } });

    // The interrupted turn's work was captured before the restore, so it can be looked at (or restored) later.
    const end2 = await waitForCheckpoint(h, launched.threadId, second.runId, "turn_end");
    expect(end2.files.map((f) => [f.path, f.kind])).toEqual([
      ["a.txt", "modified"],
      ["b.txt", "added"],
    ]);
    expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("one\n");
    expect(existsSync(join(repo, "b.txt"))).toBe(false);
    expect(h.assistantTexts(launched.threadId)).not.toContain("never");

    // Checkpoints after the target are superseded; the target and those before it stay ready.
    const after = checkpointsOf(h, launched.threadId).filter((c) => c.runId !== "run:recovery");
    for (const checkpoint of after) expect(checkpoint.status).toBe(checkpoint.ordinalWithinScope > end1.ordinalWithinScope ? "stale" : "ready");

    // The recovery turn's message tells the agent what was rolled back (the scripted agent echoes it).
    const message = h.items(launched.threadId).find((item) => item.type === "user_message" && item.runId === "run:recovery");
    expect(message).toMatchObject({ type: "user_message", createdBy: "system" });
    const text = (message as { text: string }).text;
    expect(text).toContain(`rolled back to checkpoint #${end1.ordinalWithinScope}`);
    expect(text).toContain("- a.txt: restored");
    expect(text).toContain("- b.txt: removed");
    expect(h.assistantTexts(launched.threadId, "run:recovery").join("\n")).toContain("rolled back");

    // A stale checkpoint cannot be restored any more.
    const stale = await h.dispatch("checkpoint.rollback", { threadId: launched.threadId, checkpointId: end2.id });
    expect(stale).toMatchObject({ status: 409, body: { rejection: { code: "checkpoint_not_ready" } } });
  });

  it("fails with the files in conflict when uncaptured changes are in the way, changing nothing; force overwrites them", async () => {
    env = await startRepoHarness({ files: { "README.md": "hello\n" } });
    const { h, repo } = env;
    const launched = await h.launch({ projectId: "repo", message: script({ write: { path: "a.txt", content: "one\n" } }) });
    const end1 = await waitForCheckpoint(h, launched.threadId, launched.runId!, "turn_end");
    const second = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: launched.threadId, message: script({ write: { path: "b.txt", content: "agent\n" } }) });
    await waitForCheckpoint(h, launched.threadId, second.runId, "turn_end");
    // The user edits the agent's file by hand: no checkpoint holds that edit.
    writeFileSync(join(repo, "b.txt"), "edited by hand\n");

    await h.dispatch("checkpoint.rollback", { threadId: launched.threadId, checkpointId: end1.id, recoveryRunId: "run:refused" });
    const refused = await h.waitForEnd("run:refused");
    expect(refused).toMatchObject({ status: "failed", endReason: "rollback_failed", failure: { code: "workspace_rollback_conflict" } });
    expect(refused.failure?.message).toContain("files in conflict: b.txt");
    expect(h.state.runAttempts.get("run:refused") ?? []).toEqual([]);
    expect(readFileSync(join(repo, "b.txt"), "utf8")).toBe("edited by hand\n");
    expect(checkpointsOf(h, launched.threadId).every((c) => c.status === "ready")).toBe(true);

    await h.dispatch("checkpoint.rollback", { threadId: launched.threadId, checkpointId: end1.id, force: true, recoveryRunId: "run:forced" });
    expect((await h.waitForEnd("run:forced")).status).toBe("completed");
    expect(existsSync(join(repo, "b.txt"))).toBe(false);
    const told = h.items(launched.threadId).find((item) => item.type === "user_message" && item.runId === "run:forced") as { text: string };
    expect(told.text).toContain("Uncaptured changes overwritten: b.txt.");
  });
});
