import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MergeQueueEntry } from "../../contracts/entities/mergeQueue.js";
import type { MergeQueueOutput } from "../../contracts/tools/mergeQueueTools.js";
import type { MergeIntoParentOutput } from "../../contracts/workspaceQueries.js";
import { gitSync, tempDir } from "../../testkit/gitRepo.js";
import { script } from "../../testkit/loomHarness.js";
import { type RepoHarness, loomCli, ownerApi, startRepoHarness } from "../../testkit/workspaceHarness.js";

/**
 * The merge queue through the real server on a real repository: five worktree
 * children's merges asked for at once are merged one at a time in the order
 * they were queued, each with the project's check; a disjoint child merges, a
 * failing check and a conflict leave the parent untouched (the conflict goes
 * back to its child, whose follow-up run resolves it), a queued entry is
 * cancelled over MCP, and the queue is listed over MCP, HTTP and the CLI.
 */

let env: RepoHarness | null = null;
let gates: ReturnType<typeof tempDir> | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
  gates?.remove();
  gates = null;
});

interface Refusal {
  error: { code: string; message: string; details: { workspaceCode?: string; files?: string[]; entryId?: string } };
}

describe("the merge queue of a parent workspace", () => {
  it("merges queued children one at a time with the check, records why the others were refused, and cancels a queued one", async () => {
    gates = tempDir("merge-gates");
    const gate = join(gates.path, "go");
    const started = join(gates.path, "started");
    const done = join(gates.path, "done");
    // The first merge (the one that brings a.txt) holds its check until the test lets it go; every *.txt must start with "ok".
    const check = [
      `if [ -f a.txt ] && [ ! -f '${done}' ]; then touch '${started}'; while [ ! -f '${gate}' ]; do sleep 0.05; done; touch '${done}'; fi`,
      `for f in *.txt; do head -n1 "$f" | grep -qx ok || { echo "$f is not ok"; exit 1; }; done; echo checked`,
    ].join("; ");
    env = await startRepoHarness({ files: { "README.md": "hello\n", "base.txt": "ok\n" }, checkCommand: check });
    const { h, repo } = env;
    const git = "git -c user.name=Child -c user.email=child@localhost";
    const task = (path: string, content: string) => script({ write: { path, content } }, { say: "done" });
    const clashing = script(
      { write: { path: "a.txt", content: "ok\nfrom c\n" } },
      { next: [{ run: `${git} merge -q --no-edit $(git -C ${JSON.stringify(repo)} rev-parse HEAD); printf 'ok\\nfrom a\\nfrom c\\n' > a.txt && git add a.txt && ${git} commit -q --no-edit` }, { say: "resolved" }] },
      { say: "done" },
    );
    const parent = await h.launch({
      projectId: "repo",
      message: script(
        { call: "delegate_task", args: { task: task("a.txt", "ok\nfrom a\n"), isolation: "worktree", clientRequestId: "a" }, as: "a" },
        { call: "delegate_task", args: { task: task("b.txt", "broken\n"), isolation: "worktree", clientRequestId: "b" }, as: "b" },
        { call: "delegate_task", args: { task: clashing, isolation: "worktree", clientRequestId: "c" }, as: "c" },
        { call: "delegate_task", args: { task: task("d.txt", "ok\n"), isolation: "worktree", clientRequestId: "d" }, as: "d" },
        { call: "delegate_task", args: { task: task("e.txt", "ok\n"), isolation: "worktree", clientRequestId: "e" }, as: "e" },
        { say: "{{a.childThreadId}} {{b.childThreadId}} {{c.childThreadId}} {{d.childThreadId}} {{e.childThreadId}}" },
      ),
    });
    await h.waitForEnd(parent.runId!);
    const [a, b, c, d, e] = h.assistantTexts(parent.threadId).at(-1)!.split(" ") as [string, string, string, string, string];
    for (const id of [a, b, c, d, e]) expect((await h.waitForEnd(h.runs(id)[0]!.id)).status).toBe("completed");
    await h.until(() => h.runs(parent.threadId).every((run) => run.endedAt !== null), "the parent idle", 15_000);
    const head = gitSync(repo, "rev-parse", "HEAD");
    const entries = (): MergeQueueEntry[] => [...h.state.mergeQueueEntries.values()].filter((entry) => entry.parentThreadId === parent.threadId);
    const merge = <T>(id: string, body: Record<string, unknown> = {}) => ownerApi<T>(h, `/api/orchestration/threads/${encodeURIComponent(id)}/merge-into-parent`, { method: "POST", body });

    // Asked for one after another, each answered once its entry ends.
    const answers: Promise<{ status: number; body: unknown }>[] = [];
    for (const [index, id] of [a, b, c, d, e].entries()) {
      answers.push(merge(id, id === c ? { onRefused: "child" } : {}));
      await h.until(() => entries().length === index + 1, `entry ${index + 1} queued`);
    }
    await h.until(() => existsSync(started), "the first check running");
    expect(entries().map((entry) => entry.status)).toEqual(["merging", "queued", "queued", "queued", "queued"]);
    // A second request for a child already queued is refused, and writes nothing.
    const twice = await merge<Refusal>(d);
    expect(twice.status).toBe(400);
    expect(twice.body.error.message).toContain("already queued");
    expect(entries()).toHaveLength(5);

    const listed = await h.owner.ok<MergeQueueOutput>("t3_merge_queue", { threadId: parent.threadId });
    expect(listed).toMatchObject({ threadId: parent.threadId, open: 5 });
    expect(listed.entries.map((entry) => entry.childThreadId)).toEqual([a, b, c, d, e]);
    const eEntry = listed.entries[4]!.entryId;
    const cancelled = await h.owner.ok<MergeQueueOutput>("t3_merge_queue", { threadId: parent.threadId, action: "cancel", entryId: eEntry });
    expect(cancelled.entries.find((entry) => entry.entryId === eEntry)).toMatchObject({ status: "cancelled" });
    expect(await h.owner.call("t3_merge_queue", { threadId: parent.threadId, action: "cancel", entryId: listed.entries[0]!.entryId })).toMatchObject({ errorCode: "invalid_request" });
    const cli = await loomCli(["merges", parent.threadId, "--open", "--json", "--state-dir", join(h.dir, ".loom")]);
    expect(cli.status).toBe(0);
    expect((JSON.parse(cli.stdout) as MergeQueueOutput).entries.map((entry) => entry.status)).toEqual(["merging", "queued", "queued", "queued"]);
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(head);

    writeFileSync(gate, "");
    const [first, failing, returned, last, dropped] = (await Promise.all(answers)) as [
      { status: number; body: MergeIntoParentOutput },
      { status: number; body: Refusal },
      { status: number; body: MergeIntoParentOutput },
      { status: number; body: MergeIntoParentOutput },
      { status: number; body: Refusal },
    ];
    expect(first).toMatchObject({ status: 200, body: { outcome: "fast_forward", check: { exitCode: 0, output: "checked\n" } } });
    expect(failing.status).toBe(409);
    expect(failing.body.error).toMatchObject({ code: "workspace_conflict", details: { workspaceCode: "workspace_check_failed" } });
    expect(returned).toMatchObject({ status: 200, body: { outcome: "returned_to_child", commit: first.body.commit, returnedToChild: { workspaceCode: "workspace_merge_conflict", files: ["a.txt"] } } });
    expect(last).toMatchObject({ status: 200, body: { outcome: "merge_commit", check: { exitCode: 0 } } });
    expect(dropped.status).toBe(400);
    expect(dropped.body.error.message).toContain("cancelled");

    // One at a time, in order: each began after the one before it ended.
    const ended = entries();
    expect(ended.map((entry) => entry.status)).toEqual(["merged", "check_failed", "returned_to_child", "merged", "cancelled"]);
    const ran = ended.filter((entry) => entry.startedAt !== null);
    for (let i = 1; i < ran.length; i++) expect(ran[i]!.startedAt! >= ran[i - 1]!.endedAt!).toBe(true);
    expect(ended[1]).toMatchObject({ attempts: 1, failure: { workspaceCode: "workspace_check_failed", check: { exitCode: 1, output: "b.txt is not ok\n" } } });
    expect(ended[1]!.log.at(-1)).toContain("check failed");
    expect(existsSync(join(repo, "b.txt"))).toBe(false);
    expect(existsSync(join(repo, "e.txt"))).toBe(false);

    // The conflict went back to its child, whose run resolves it; merged again, the parent has all of it, its check green.
    expect((await h.waitForEnd(returned.body.returnedToChild!.runId!)).status).toBe("completed");
    const resolved = await merge<MergeIntoParentOutput>(c);
    expect(resolved).toMatchObject({ status: 200, body: { check: { exitCode: 0 } } });
    expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("ok\nfrom a\nfrom c\n");
    expect(readFileSync(join(repo, "d.txt"), "utf8")).toBe("ok\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");
    const all = await ownerApi<MergeQueueOutput>(h, "/api/workspaces/merge-queue");
    expect(all.body).toMatchObject({ threadId: null, open: 0 });
    expect(all.body.entries.map((entry) => entry.status)).toEqual(["merged", "check_failed", "returned_to_child", "merged", "cancelled", "merged"]);
  });
});
