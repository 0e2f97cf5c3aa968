import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { WorktreeListOutput, WorktreePruneOutput, WorktreeThreadIdsOutput } from "../../contracts/workspaceQueries.js";
import { commitFiles, gitSync } from "../../testkit/gitRepo.js";
import { script } from "../../testkit/loomHarness.js";
import { type RepoHarness, checkpointsOf, loomCli, ownerApi, startRepoHarness } from "../../testkit/workspaceHarness.js";

/**
 * Threads with worktrees of their own, on a real git repository through the
 * real server: t3_thread_launch `worktree` (base ref, origin), delegate_task
 * isolation worktree (children in parallel on the same path), cleanup when a
 * thread is deleted, `worktrees` list and prune, getWorktreeThreadIds.
 */

let env: RepoHarness | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
});

interface Launched {
  threadId: string;
  runId: string;
  worktreePath: string | null;
  branch?: string | null;
  workspaceStrategy: string;
}

describe("t3_thread_launch workspaceStrategy worktree", () => {
  it("adds a worktree on a new branch from the project's HEAD, binds the thread to it, and the agent writes there", async () => {
    env = await startRepoHarness();
    const { h, repo } = env;
    const launched = await h.owner.ok<Launched>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", message: script({ write: { path: "made.txt", content: "in the worktree\n" } }) });
    expect(launched.workspaceStrategy).toBe("worktree");
    expect(launched.worktreePath).not.toBeNull();
    // The branch reads the title (here the default one) and a short handle of the id.
    expect(launched.branch).toMatch(/^loom\/new-thread-[0-9a-f]{8}$/);
    expect(launched.worktreePath!.startsWith(join(h.dir, ".loom", "worktrees", "repo"))).toBe(true);
    const ended = await h.waitForEnd(launched.runId);
    expect(ended.status).toBe("completed");
    expect(readFileSync(join(launched.worktreePath!, "made.txt"), "utf8")).toBe("in the worktree\n");
    expect(existsSync(join(repo, "made.txt"))).toBe(false);
    expect(gitSync(launched.worktreePath!, "rev-parse", "HEAD")).toBe(gitSync(repo, "rev-parse", "HEAD"));
    expect(h.state.threads.get(launched.threadId)).toMatchObject({ worktreePath: launched.worktreePath, branch: launched.branch, workspace: { status: "ready" } });
    const read = await h.owner.ok<{ thread: { worktreePath: string; branch: string } }>("t3_thread_read", { threadId: launched.threadId });
    expect(read.thread).toMatchObject({ worktreePath: launched.worktreePath, branch: launched.branch });
  });

  it("starts from baseRef, or from origin/<baseRef> with startFromOrigin, and refuses a baseRef that names nothing before creating anything", async () => {
    env = await startRepoHarness();
    const { h, repo } = env;
    const main = gitSync(repo, "rev-parse", "HEAD");
    gitSync(repo, "checkout", "-q", "-b", "feature");
    const feature = commitFiles(repo, { "feature.txt": "feature\n" }, "feature work");
    gitSync(repo, "checkout", "-q", "main");
    const fromFeature = await h.owner.ok<Launched>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", baseRef: "feature", message: "hi" });
    expect(gitSync(fromFeature.worktreePath!, "rev-parse", "HEAD")).toBe(feature);

    gitSync(repo, "update-ref", "refs/remotes/origin/main", feature);
    const fromOrigin = await h.owner.ok<Launched>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", baseRef: "main", startFromOrigin: true, message: "hi" });
    expect(gitSync(fromOrigin.worktreePath!, "rev-parse", "HEAD")).toBe(feature);
    const local = await h.owner.ok<Launched>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", baseRef: "main", message: "hi" });
    expect(gitSync(local.worktreePath!, "rev-parse", "HEAD")).toBe(main);

    const threads = h.state.threads.size;
    const bad = await h.owner.call("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", baseRef: "no-such-branch", message: "hi" });
    expect(bad).toMatchObject({ isError: true, errorCode: "invalid_request" });
    expect(h.state.threads.size).toBe(threads);
    const mixed = await h.owner.call("t3_thread_launch", { projectId: "repo", baseRef: "main", message: "hi" });
    expect(mixed).toMatchObject({ isError: true, errorCode: "invalid_request" });
  });
});

describe("delegate_task isolation worktree", () => {
  it("lets parallel children write the same path in worktrees of their own, each branched from the parent's uncommitted state", async () => {
    env = await startRepoHarness();
    const { h, repo } = env;
    const child = (n: number) => script({ write: { path: "shared.txt", content: `from child ${n}\n` } }, { sleep: 100 }, { say: `child ${n} wrote` });
    const parent = await h.launch({
      projectId: "repo",
      message: script(
        { write: { path: "parent-note.txt", content: "uncommitted parent work\n" } },
        { call: "delegate_task", args: { task: child(1), isolation: "worktree", clientRequestId: "c1" }, as: "one" },
        { call: "delegate_task", args: { task: child(2), isolation: "worktree", clientRequestId: "c2" }, as: "two" },
        { say: "{{one.childThreadId}} {{two.childThreadId}}" },
      ),
    });
    await h.waitForEnd(parent.runId!);
    const [first, second] = h.assistantTexts(parent.threadId).at(-1)!.split(" ");
    const children = [first!, second!].map((id) => h.state.threads.get(id)!);
    for (const thread of children) {
      const run = h.runs(thread.id)[0]!;
      expect((await h.waitForEnd(run.id)).status).toBe("completed");
    }
    const paths = children.map((thread) => h.state.threads.get(thread.id)!.worktreePath!);
    expect(new Set(paths).size).toBe(2);
    expect(paths.map((path) => readFileSync(join(path, "shared.txt"), "utf8"))).toEqual(["from child 1\n", "from child 2\n"]);
    for (const path of paths) expect(readFileSync(join(path, "parent-note.txt"), "utf8")).toBe("uncommitted parent work\n");
    expect(existsSync(join(repo, "shared.txt"))).toBe(false);
    // The branch point is a checkpoint of the parent, taken on the parent's own scope.
    const branchPoints = checkpointsOf(h, parent.threadId).filter((c) => c.trigger === "child_branch");
    expect(branchPoints).toHaveLength(2);
    expect(branchPoints.every((c) => c.status === "ready")).toBe(true);

    const sharing = await ownerApi<WorktreeThreadIdsOutput>(h, `/api/orchestration/worktree-thread-ids?worktreePath=${encodeURIComponent(repo)}`);
    expect(sharing.body.threadIds).toEqual([parent.threadId]);
    const own = await ownerApi<WorktreeThreadIdsOutput>(h, `/api/orchestration/worktree-thread-ids?worktreePath=${encodeURIComponent(paths[0]!)}`);
    expect(own.body.threadIds).toEqual([children[0]!.id]);
  });

  it("refuses isolation worktree when the parent's workspace is not a git repository", async () => {
    env = await startRepoHarness({ plain: true });
    const { h } = env;
    const parent = await h.launch({ projectId: "repo", message: script({ call: "delegate_task", args: { task: "hi", isolation: "worktree" }, as: "task" }, { say: "{{task.error.code}}" }) });
    await h.waitForEnd(parent.runId!);
    expect(h.assistantTexts(parent.threadId)).toEqual(["workspace_unavailable"]);
    expect([...h.state.threads.values()].filter((thread) => thread.lineage.parentThreadId === parent.threadId)).toEqual([]);
  });
});

describe("worktree lifecycle", () => {
  it("removes a deleted thread's worktree after keeping its last state, uncommitted work included, as a checkpoint ref", async () => {
    env = await startRepoHarness();
    const { h, repo } = env;
    const launched = await h.owner.ok<Launched>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", message: script({ write: { path: "draft.txt", content: "unsaved\n" } }) });
    await h.waitForEnd(launched.runId);
    const path = launched.worktreePath!;
    expect((await h.dispatch("thread.delete", { threadId: launched.threadId })).status).toBe(200);
    await h.until(() => !existsSync(path), "the deleted thread's worktree to be removed");
    const last = checkpointsOf(h, launched.threadId).find((c) => c.trigger === "thread_deleted")!;
    expect(last.status).toBe("ready");
    expect(gitSync(repo, "show", `${last.ref}:draft.txt`)).toBe("unsaved");
    expect(gitSync(repo, "worktree", "list")).not.toContain(path);
    const listed = await ownerApi<WorktreeListOutput>(h, "/api/workspaces/worktrees");
    expect(listed.body.worktrees).toEqual([]);
  });

  it("keeps a worktree while another live thread works in it; prune removes it once no live thread does, and forgets a vanished one", async () => {
    env = await startRepoHarness();
    const { h } = env;
    const owner = await h.owner.ok<Launched>("t3_thread_launch", {
      projectId: "repo",
      workspaceStrategy: "worktree",
      message: script({ call: "create_threads", args: { threads: [{ title: "sharer" }] }, as: "made" }, { say: "{{made.threads.0.threadId}}" }),
    });
    await h.waitForEnd(owner.runId);
    const sharer = h.assistantTexts(owner.threadId).at(-1)!;
    expect(h.state.threads.get(sharer)?.worktreePath).toBe(owner.worktreePath);
    expect((await ownerApi<WorktreeThreadIdsOutput>(h, `/api/orchestration/worktree-thread-ids?worktreePath=${encodeURIComponent(owner.worktreePath!)}`)).body.threadIds.sort()).toEqual([owner.threadId, sharer].sort());

    await h.dispatch("thread.delete", { threadId: owner.threadId });
    const listed = await ownerApi<WorktreeListOutput>(h, "/api/workspaces/worktrees");
    const kept = listed.body.worktrees.find((w) => w.threadId === owner.threadId)!;
    expect(kept).toMatchObject({ state: "deleted", path: owner.worktreePath });
    const early = await ownerApi<WorktreePruneOutput>(h, "/api/workspaces/worktrees/prune", { method: "POST" });
    expect(early.body.kept).toEqual([{ threadId: owner.threadId, path: kept.path, reason: `live threads still work in it: ${sharer}` }]);
    expect(existsSync(kept.path)).toBe(true);

    await h.dispatch("thread.delete", { threadId: sharer });
    const pruned = await ownerApi<WorktreePruneOutput>(h, "/api/workspaces/worktrees/prune", { method: "POST" });
    expect(pruned.body.removed).toEqual([{ threadId: owner.threadId, path: kept.path, checkpointId: expect.any(String) as string }]);
    expect(existsSync(kept.path)).toBe(false);

    const vanishing = await h.owner.ok<Launched>("t3_thread_launch", { projectId: "repo", workspaceStrategy: "worktree", message: "hi" });
    await h.waitForEnd(vanishing.runId);
    rmSync(vanishing.worktreePath!, { recursive: true, force: true });
    const missing = await ownerApi<WorktreeListOutput>(h, "/api/workspaces/worktrees");
    expect(missing.body.worktrees.map((w) => w.state)).toEqual(["missing"]);
    // The CLI over the same routes.
    const stateDir = join(h.dir, ".loom");
    const listed2 = await loomCli(["worktrees", "list", "--state-dir", stateDir]);
    expect(listed2).toMatchObject({ status: 0, stderr: "" });
    expect(listed2.stdout).toMatch(new RegExp(`^missing +repo +loom/\\S+ +${vanishing.threadId} +${vanishing.worktreePath}$`, "m"));
    const forgot = await loomCli(["worktrees", "prune", "--json", "--state-dir", stateDir]);
    expect(forgot.status).toBe(0);
    expect((JSON.parse(forgot.stdout) as WorktreePruneOutput).forgotten).toEqual([{ path: vanishing.worktreePath, threadId: vanishing.threadId }]);
    expect((await loomCli(["worktrees", "prune", "--state-dir", stateDir])).stdout).toBe("nothing to prune\n");
    expect((await loomCli(["worktrees", "nope", "--state-dir", stateDir])).status).toBe(2);
  });
});

describe("merging a worktree child into its parent (owner-only HTTP)", () => {
  async function isolatedChild(h: RepoHarness["h"], task: string, key: string): Promise<string> {
    const parent = await h.launch({
      projectId: "repo",
      message: script({ call: "delegate_task", args: { task, isolation: "worktree", mode: "wait", clientRequestId: key }, as: "child" }, { say: "{{child.childThreadId}}" }),
    });
    await h.waitForEnd(parent.runId!);
    // mode wait: the parent's run took the child's result, so no follow-up run wakes the parent.
    const childId = h.assistantTexts(parent.threadId).at(-1)!;
    expect(h.runs(childId)[0]!.status).toBe("completed");
    return childId;
  }

  it("commits the child's work on its branch and fast-forwards the parent's checkout; a conflict is reported with its files and changes nothing", async () => {
    env = await startRepoHarness();
    const { h, repo } = env;
    const childId = await isolatedChild(h, script({ write: { path: "child.txt", content: "from the child\n" } }), "m1");
    const path = `/api/orchestration/threads/${encodeURIComponent(childId)}/merge-into-parent`;

    const stranger = await fetch(`${h.server.url}${path}`, { method: "POST", headers: { authorization: "Bearer not-the-owner" } });
    expect(stranger.status).toBe(401);

    const before = gitSync(repo, "rev-parse", "HEAD");
    const merged = await ownerApi<{ outcome: string; commit: string; previousHead: string; childChangesCommit: string | null; files: { path: string }[] }>(h, path, { method: "POST", body: {} });
    expect(merged.status).toBe(200);
    expect(merged.body).toMatchObject({ outcome: "fast_forward", previousHead: before });
    expect(merged.body.childChangesCommit).not.toBeNull();
    expect(merged.body.files.map((f) => f.path)).toEqual(["child.txt"]);
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(merged.body.commit);
    expect(readFileSync(join(repo, "child.txt"), "utf8")).toBe("from the child\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");

    const second = await isolatedChild(h, script({ write: { path: "clash.txt", content: "child version\n" } }), "m2");
    writeFileSync(join(repo, "clash.txt"), "parent version, uncommitted\n");
    const head = gitSync(repo, "rev-parse", "HEAD");
    const clash = await ownerApi<{ error: { code: string; details: { files: string[]; workspaceCode: string } } }>(h, `/api/orchestration/threads/${encodeURIComponent(second)}/merge-into-parent`, { method: "POST", body: {} });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toMatchObject({ code: "workspace_conflict", details: { workspaceCode: "workspace_local_changes_in_the_way", files: ["clash.txt"] } });
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(head);
    expect(readFileSync(join(repo, "clash.txt"), "utf8")).toBe("parent version, uncommitted\n");

    const notAChild = await ownerApi<{ error: { code: string } }>(h, `/api/orchestration/threads/${encodeURIComponent(h.state.threads.get(second)!.lineage.parentThreadId!)}/merge-into-parent`, { method: "POST", body: {} });
    expect(notAChild).toMatchObject({ status: 409, body: { error: { code: "workspace_unavailable" } } });
  });
});
