import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ThreadMergeBackOutput } from "../../contracts/tools/lineageTools.js";
import type { MergeQueueOutput } from "../../contracts/tools/mergeQueueTools.js";
import { gitSync } from "../../testkit/gitRepo.js";
import { script } from "../../testkit/loomHarness.js";
import { type RepoHarness, startRepoHarness } from "../../testkit/workspaceHarness.js";

/**
 * t3_thread_merge_back from a worktree child's own run queues its branch in
 * its parent's merge queue: the entry waits while either thread has a run
 * going or queued (the child's own run, the parent's follow-up for the
 * child's result), then joins the queue and merges with the project's check.
 */

let env: RepoHarness | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
});

const CHECK = `for f in *.txt; do head -n1 "$f" | grep -qx ok || { echo "$f is not ok"; exit 1; }; done; echo checked`;

describe("t3_thread_merge_back of a worktree child", () => {
  it("queues the child's branch, waiting until both threads are idle, and merges it with the check", async () => {
    env = await startRepoHarness({ files: { "README.md": "hello\n", "base.txt": "ok\n" }, checkCommand: CHECK });
    const { h, repo } = env;
    const child = script(
      { write: { path: "c.txt", content: "ok\nfrom c\n" } },
      { call: "t3_thread_merge_back", args: { summary: "wrote c.txt" } },
      { say: "merged back" },
    );
    const parent = await h.launch({
      projectId: "repo",
      message: script({ call: "delegate_task", args: { task: child, isolation: "worktree", clientRequestId: "c" }, as: "c" }, { say: "{{c.childThreadId}}" }),
    });
    await h.waitForEnd(parent.runId!);
    const childId = h.assistantTexts(parent.threadId, parent.runId!).at(-1)!;
    const childRun = await h.waitForEnd(h.runs(childId)[0]!.id);
    expect(childRun.status).toBe("completed");
    const call = h.items(childId).find((item) => item.type === "dynamic_tool" && item.toolName === "t3_thread_merge_back");
    const answer = JSON.parse((call as { result: { content: { text: string }[] } }).result.content[0]!.text) as ThreadMergeBackOutput;
    // Called from the child's run still going: the entry waits; the tool's own answer is as before.
    expect(answer).toMatchObject({ threadId: childId, sourceThreadId: parent.threadId, transfer: { kind: "merge_back" }, mergeQueueEntry: { status: "waiting_for_idle" } });
    const entryId = answer.mergeQueueEntry!.entryId;

    const entry = await h.until(() => {
      const found = h.state.mergeQueueEntries.get(entryId);
      return found?.status === "merged" ? found : undefined;
    }, "the merged-back branch merged", 30_000);
    expect(entry).toMatchObject({ childThreadId: childId, parentThreadId: parent.threadId, result: { check: { exitCode: 0 } } });
    const lines = entry.log.map((line) => line.slice(line.indexOf(" ") + 1));
    expect(lines[0]).toBe("waiting for both threads to be idle");
    expect(lines).toContain("queued: both threads are idle");
    expect(lines.at(-1)).toContain("merged (");
    // It began only once every run of both threads had ended.
    const lastEnd = [...h.runs(parent.threadId), ...h.runs(childId)].map((run) => run.endedAt!).sort().at(-1)!;
    expect(entry.startedAt! >= lastEnd).toBe(true);
    expect(readFileSync(join(repo, "c.txt"), "utf8")).toBe("ok\nfrom c\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");

    // Visible in the queue; a second merge back while it is open answers the same entry.
    const listed = await h.owner.ok<MergeQueueOutput>("t3_merge_queue", { threadId: parent.threadId });
    expect(listed.entries.map((e) => [e.entryId, e.status])).toEqual([[entryId, "merged"]]);
  });
});
