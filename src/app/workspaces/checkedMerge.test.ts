import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MergeIntoParentOutput, WorktreePruneOutput } from "../../contracts/workspaceQueries.js";
import { gitSync } from "../../testkit/gitRepo.js";
import { script } from "../../testkit/loomHarness.js";
import { type RepoHarness, ownerApi, startRepoHarness } from "../../testkit/workspaceHarness.js";

/**
 * Test-gated merges through the real server on a real repository: with the
 * project's checkCommand, merge-into-parent checks each child's merged state
 * in a scratch worktree; a disjoint child merges, a failing check and a
 * conflict leave the parent untouched and say why.
 */

let env: RepoHarness | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
});

/** Passes when every `*.txt` file's first line is "ok". */
const CHECK = `for f in *.txt; do head -n1 "$f" | grep -qx ok || { echo "$f is not ok"; exit 1; }; done; echo checked`;

interface Refusal {
  error: { code: string; details: { workspaceCode: string; files?: string[]; check?: { exitCode: number; output: string } } };
}

describe("merge-into-parent with the project's checkCommand", () => {
  it("merges children whose merged state passes, and refuses a failing check or a conflict without touching the parent", async () => {
    env = await startRepoHarness({ files: { "README.md": "hello\n", "base.txt": "ok\n" }, checkCommand: CHECK });
    const { h, repo } = env;
    const task = (path: string, content: string) => script({ write: { path, content } }, { say: "done" });
    const parent = await h.launch({
      projectId: "repo",
      message: script(
        { call: "delegate_task", args: { task: task("a.txt", "ok\nfrom a\n"), isolation: "worktree", clientRequestId: "a" }, as: "a" },
        { call: "delegate_task", args: { task: task("b.txt", "broken\n"), isolation: "worktree", clientRequestId: "b" }, as: "b" },
        { call: "delegate_task", args: { task: task("a.txt", "ok\nfrom c\n"), isolation: "worktree", clientRequestId: "c" }, as: "c" },
        { call: "delegate_task", args: { task: task("d.txt", "ok\n"), isolation: "worktree", clientRequestId: "d" }, as: "d" },
        { say: "{{a.childThreadId}} {{b.childThreadId}} {{c.childThreadId}} {{d.childThreadId}}" },
      ),
    });
    await h.waitForEnd(parent.runId!);
    const [a, b, c, d] = h.assistantTexts(parent.threadId).at(-1)!.split(" ") as [string, string, string, string];
    for (const id of [a, b, c, d]) expect((await h.waitForEnd(h.runs(id)[0]!.id)).status).toBe("completed");
    // The parent's follow-up runs (its children's results) end before its checkout is merged into.
    await h.until(() => h.runs(parent.threadId).every((run) => run.endedAt !== null), "the parent idle", 15_000);
    const merge = <T>(id: string) => ownerApi<T>(h, `/api/orchestration/threads/${encodeURIComponent(id)}/merge-into-parent`, { method: "POST", body: {} });

    const first = await merge<MergeIntoParentOutput>(a);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ outcome: "fast_forward", check: { command: CHECK, outcome: "succeeded", exitCode: 0, output: "checked\n" } });
    expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("ok\nfrom a\n");

    const head = gitSync(repo, "rev-parse", "HEAD");
    const failing = await merge<Refusal>(b);
    expect(failing.status).toBe(409);
    expect(failing.body.error).toMatchObject({ code: "workspace_conflict", details: { workspaceCode: "workspace_check_failed", check: { exitCode: 1, output: "b.txt is not ok\n" } } });
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(head);
    expect(existsSync(join(repo, "b.txt"))).toBe(false);

    const conflict = await merge<Refusal>(c);
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toMatchObject({ code: "workspace_conflict", details: { workspaceCode: "workspace_merge_conflict", files: ["a.txt"] } });
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(head);

    const last = await merge<MergeIntoParentOutput>(d);
    expect(last.body).toMatchObject({ outcome: "merge_commit", check: { exitCode: 0 } });
    expect(readFileSync(join(repo, "d.txt"), "utf8")).toBe("ok\n");
    expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("ok\nfrom a\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");
    // The parent's one scratch worktree stays, at the last merge checked.
    const scratch = gitSync(repo, "worktree", "list", "--porcelain").split("\n").filter((line) => line.startsWith("worktree ") && line.includes("/.merge/"));
    expect(scratch).toHaveLength(1);
    const scratchPath = scratch[0]!.slice("worktree ".length);
    expect(gitSync(scratchPath, "rev-parse", "HEAD")).toBe(last.body.commit);

    // Once the parent is deleted, prune removes its scratch worktree too.
    expect((await h.dispatch("thread.delete", { threadId: parent.threadId })).status).toBe(200);
    const pruned = await ownerApi<WorktreePruneOutput>(h, "/api/workspaces/worktrees/prune", { method: "POST", body: {} });
    expect(pruned.body.removed).toContainEqual({ threadId: parent.threadId, path: scratchPath, checkpointId: null });
    expect(existsSync(scratchPath)).toBe(false);
    expect(gitSync(repo, "worktree", "list", "--porcelain")).not.toContain("/.merge/");
  });

  it("hands a failed check and a conflict back to the child with onRefused child, whose follow-up run fixes it, and the next merge lands", async () => {
    env = await startRepoHarness({ files: { "README.md": "hello\n", "base.txt": "ok\n" }, checkCommand: CHECK });
    const { h, repo } = env;
    const git = "git -c user.name=Child -c user.email=child@localhost";
    // Each child's turn after its task (the brief of a refused merge is not a script) runs its `next` steps: the fix.
    const broken = script({ write: { path: "b.txt", content: "broken\n" } }, { next: [{ write: { path: "b.txt", content: "ok\nfixed\n" } }, { say: "fixed" }] }, { say: "done" });
    const clashing = script(
      { write: { path: "a.txt", content: "ok\nfrom c\n" } },
      { next: [{ run: `${git} merge -q --no-edit $(git -C ${JSON.stringify(repo)} rev-parse HEAD); printf 'ok\\nfrom a\\nfrom c\\n' > a.txt && git add a.txt && ${git} commit -q --no-edit` }, { say: "resolved" }] },
      { say: "done" },
    );
    const parent = await h.launch({
      projectId: "repo",
      message: script(
        { call: "delegate_task", args: { task: script({ write: { path: "a.txt", content: "ok\nfrom a\n" } }, { say: "done" }), isolation: "worktree", clientRequestId: "a" }, as: "a" },
        { call: "delegate_task", args: { task: broken, isolation: "worktree", clientRequestId: "b" }, as: "b" },
        { call: "delegate_task", args: { task: clashing, isolation: "worktree", clientRequestId: "c" }, as: "c" },
        { say: "{{a.childThreadId}} {{b.childThreadId}} {{c.childThreadId}}" },
      ),
    });
    await h.waitForEnd(parent.runId!);
    const [a, b, c] = h.assistantTexts(parent.threadId).at(-1)!.split(" ") as [string, string, string];
    for (const id of [a, b, c]) expect((await h.waitForEnd(h.runs(id)[0]!.id)).status).toBe("completed");
    await h.until(() => h.runs(parent.threadId).every((run) => run.endedAt !== null), "the parent idle", 15_000);
    const merge = <T>(id: string, body: Record<string, unknown> = {}) => ownerApi<T>(h, `/api/orchestration/threads/${encodeURIComponent(id)}/merge-into-parent`, { method: "POST", body });
    expect((await merge<MergeIntoParentOutput>(a)).body.outcome).toBe("fast_forward");
    const head = gitSync(repo, "rev-parse", "HEAD");

    for (const [id, code, said] of [
      [b, "workspace_check_failed", "b.txt is not ok"],
      [c, "workspace_merge_conflict", "a.txt"],
    ] as const) {
      const back = await merge<MergeIntoParentOutput>(id, { onRefused: "child" });
      expect(back.status).toBe(200);
      expect(back.body).toMatchObject({ outcome: "returned_to_child", commit: head, previousHead: head, returnedToChild: { workspaceCode: code } });
      expect(gitSync(repo, "rev-parse", "HEAD")).toBe(head);
      const runId = back.body.returnedToChild!.runId!;
      const brief = h.state.turnItems.get(id)!.find((item) => item?.type === "user_message" && item.runId === runId);
      expect(brief).toMatchObject({ text: expect.stringContaining(said) });
      expect(brief).toMatchObject({ text: expect.stringContaining(head) });
      expect((await h.waitForEnd(runId)).status).toBe("completed");
    }

    const fixed = await merge<MergeIntoParentOutput>(b);
    expect(fixed.body).toMatchObject({ outcome: "merge_commit", check: { exitCode: 0 } });
    const resolved = await merge<MergeIntoParentOutput>(c);
    expect(resolved.body).toMatchObject({ check: { exitCode: 0 } });
    expect(["fast_forward", "merge_commit"]).toContain(resolved.body.outcome);
    // The parent ends with all three children's work, its check green.
    expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("ok\nfrom a\nfrom c\n");
    expect(readFileSync(join(repo, "b.txt"), "utf8")).toBe("ok\nfixed\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");
  });
});
