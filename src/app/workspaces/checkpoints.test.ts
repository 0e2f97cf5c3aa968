import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ThreadDiffOutput } from "../../contracts/workspaceQueries.js";
import { DIFF_TRUNCATION_MARKER } from "../../workspaces/diffs.js";
import { gitSync } from "../../testkit/gitRepo.js";
import { script } from "../../testkit/loomHarness.js";
import { type RepoHarness, checkpointsOf, loomCli, ownerApi, startRepoHarness, waitForCheckpoint } from "../../testkit/workspaceHarness.js";

/**
 * Per-turn checkpoints and diffs on a real git repository through the real
 * server: the scripted agent writes files, Loom captures before and after
 * each turn on its own refs and private index, and the diffs come back over
 * the HTTP API and `loom threads diff`.
 */

let env: RepoHarness | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
});

describe("checkpoints per turn", () => {
  it("captures before and after every turn with the turn's file stats, never touching the user's index or HEAD", async () => {
    env = await startRepoHarness({ files: { "README.md": "hello\n", "old.txt": "x\ny\n" } });
    const { h, repo } = env;
    const head = gitSync(repo, "rev-parse", "HEAD");
    const launched = await h.launch({ projectId: "repo", message: script({ write: { path: "a.txt", content: "1\n2\n3\n" } }, { write: { path: "README.md", content: "hello\nworld\n" } }) });
    await h.waitForEnd(launched.runId!);
    const end1 = await waitForCheckpoint(h, launched.threadId, launched.runId!, "turn_end");
    const start1 = checkpointsOf(h, launched.threadId).find((c) => c.runId === launched.runId && c.trigger === "turn_start")!;
    expect(start1).toMatchObject({ ordinalWithinScope: 0, status: "ready", files: [] });
    expect(end1).toMatchObject({ ordinalWithinScope: 1, status: "ready", appRunOrdinal: 1 });
    expect(end1.files).toEqual([
      { path: "README.md", previousPath: null, kind: "modified", additions: 1, deletions: 0, binary: false },
      { path: "a.txt", previousPath: null, kind: "added", additions: 3, deletions: 0, binary: false },
    ]);
    // The checkpoint item in the timeline carries the same files.
    const item = h.items(launched.threadId).find((i) => i.type === "checkpoint");
    expect(item).toMatchObject({ runId: launched.runId, checkpointId: end1.id, status: "ready", files: end1.files });
    // A real commit on Loom's ref; the user's HEAD, index and status as if Loom were not there.
    expect(gitSync(repo, "rev-parse", end1.ref)).toBe(end1.commit);
    expect(gitSync(repo, "show", `${end1.ref}:a.txt`)).toBe("1\n2\n3");
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(head);
    expect(gitSync(repo, "diff", "--cached", "--name-only")).toBe("");
    expect(gitSync(repo, "status", "--porcelain")).toBe(" M README.md\n?? a.txt");

    const sent = await h.owner.ok<{ runId: string }>("t3_thread_send", { threadId: launched.threadId, message: script({ run: "rm old.txt" }, { write: { path: "a.txt", content: "1\n2\n" } }) });
    await h.waitForEnd(sent.runId);
    const end2 = await waitForCheckpoint(h, launched.threadId, sent.runId, "turn_end");
    expect(end2.ordinalWithinScope).toBe(3);
    expect(end2.files).toEqual([
      { path: "a.txt", previousPath: null, kind: "modified", additions: 0, deletions: 1, binary: false },
      { path: "old.txt", previousPath: null, kind: "deleted", additions: 0, deletions: 2, binary: false },
    ]);
  });

  it("answers turn and full-thread diffs, bounded with a truncation marker, over HTTP and `loom threads diff`", async () => {
    env = await startRepoHarness({ files: { "README.md": "hello\n" } });
    const { h } = env;
    const launched = await h.launch({ projectId: "repo", message: script({ write: { path: "first.txt", content: "one\n" } }) });
    await waitForCheckpoint(h, launched.threadId, launched.runId!, "turn_end");
    const second = await h.owner.ok<{ runId: string }>("t3_thread_send", {
      threadId: launched.threadId,
      message: script({ write: { path: "second.txt", content: "two\n" } }, { write: { path: "README.md", content: "hello\nagain\n" } }),
    });
    await waitForCheckpoint(h, launched.threadId, second.runId, "turn_end");

    const base = `/api/orchestration/threads/${encodeURIComponent(launched.threadId)}`;
    const turn = await ownerApi<ThreadDiffOutput>(h, `${base}/turn-diff?runId=${encodeURIComponent(launched.runId!)}`);
    expect(turn.status).toBe(200);
    expect(turn.body.files.map((f) => f.path)).toEqual(["first.txt"]);
    expect(turn.body.patch).toContain("+++ b/first.txt\n@@ -0,0 +1 @@\n+one\n");
    const latest = await ownerApi<ThreadDiffOutput>(h, `${base}/turn-diff`);
    expect(latest.body).toMatchObject({ runId: second.runId, truncated: false });
    expect(latest.body.files.map((f) => f.path)).toEqual(["README.md", "second.txt"]);

    const full = await ownerApi<ThreadDiffOutput>(h, `${base}/full-diff`);
    expect(full.body.toCommit).toBeNull();
    expect(full.body.files.map((f) => [f.path, f.kind])).toEqual([
      ["README.md", "modified"],
      ["first.txt", "added"],
      ["second.txt", "added"],
    ]);
    const cut = await ownerApi<ThreadDiffOutput>(h, `${base}/full-diff?maxBytes=200`);
    expect(cut.body.truncated).toBe(true);
    expect(cut.body.patch).toContain(DIFF_TRUNCATION_MARKER);
    expect(cut.body.omittedFiles.length).toBeGreaterThan(0);
    expect(cut.body.files).toHaveLength(3);

    const bad = await ownerApi<{ error: { code: string } }>(h, `${base}/turn-diff?maxBytes=0`);
    expect(bad).toMatchObject({ status: 400, body: { error: { code: "invalid_request" } } });
    const unknownRun = await ownerApi<{ error: { code: string } }>(h, `${base}/turn-diff?runId=run:nope`);
    expect(unknownRun).toMatchObject({ status: 404, body: { error: { code: "run_not_found" } } });

    // The CLI finds the in-process server through its server.json and prints stats, then the patch.
    const stateDir = join(h.dir, ".loom");
    const cli = await loomCli(["threads", "diff", launched.threadId, "--full", "--state-dir", stateDir]);
    expect(cli.stderr).toBe("");
    expect(cli.status).toBe(0);
    expect(cli.stdout).toContain("A first.txt   +1 -0");
    expect(cli.stdout).toContain("3 files changed, 3 insertions(+), 0 deletions(-)");
    expect(cli.stdout).toContain("diff --git a/second.txt b/second.txt");
    const json = await loomCli(["threads", "diff", launched.threadId, "--run", launched.runId!, "--json", "--state-dir", stateDir]);
    expect((JSON.parse(json.stdout) as ThreadDiffOutput).files.map((f) => f.path)).toEqual(["first.txt"]);
    const usage = await loomCli(["threads", "diff", launched.threadId, "--run", "x", "--full", "--state-dir", stateDir]);
    expect(usage.status).toBe(2);
  });

  it("gives a thread in a non-git folder checkpoints with status missing and a reason, and runs it normally", async () => {
    env = await startRepoHarness({ plain: true });
    const { h, repo } = env;
    const launched = await h.launch({ projectId: "repo", message: script({ write: { path: "note.txt", content: "hi\n" } }, { say: "done" }) });
    const ended = await h.waitForEnd(launched.runId!);
    expect(ended.status).toBe("completed");
    const end = await waitForCheckpoint(h, launched.threadId, launched.runId!, "turn_end");
    expect(end).toMatchObject({ status: "missing", commit: null, files: [] });
    expect(end.reason).toContain("is not inside a git repository");
    expect(existsSync(join(repo, "note.txt"))).toBe(true);
    const diff = await ownerApi<{ error: { code: string; message: string } }>(h, `/api/orchestration/threads/${encodeURIComponent(launched.threadId)}/turn-diff`);
    expect(diff.status).toBe(409);
    expect(diff.body.error.code).toBe("workspace_unavailable");
    const rollback = await h.dispatch("checkpoint.rollback", { threadId: launched.threadId, checkpointId: end.id });
    expect(rollback).toMatchObject({ status: 409, body: { rejection: { code: "checkpoint_not_ready" } } });
  });
});
