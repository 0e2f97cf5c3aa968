import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MergeQueueOutput } from "../../contracts/tools/mergeQueueTools.js";
import type { ThreadListOutput } from "../../contracts/tools/threadTools.js";
import type { MergeIntoParentOutput } from "../../contracts/workspaceQueries.js";
import { gitSync, initRepo, tempDir } from "../../testkit/gitRepo.js";
import { script } from "../../testkit/loomHarness.js";
import { waitForExit } from "../../testkit/loomProcess.js";
import type { LoomMcpClient } from "../../testkit/mcpClient.js";
import { pollUntil } from "../../testkit/poll.js";
import { type ServedLoom, ServeRig } from "../../testkit/serveRig.js";

/**
 * kill -9 the built `loom serve` (SQLite) while a merge's resolver works on
 * it, and restart on the same state dir: the entry still waits on its
 * resolver, whose run is resumed, and once the resolver ends the entry merges
 * its branch, checked.
 */

let folder: ReturnType<typeof tempDir>;
let repo: string;
let gate: string;
let rig: ServeRig;

beforeEach(() => {
  folder = tempDir("resolver-restart");
  repo = join(folder.path, "repo");
  initRepo(repo, { "README.md": "hello\n", "base.txt": "ok\n" });
  gate = join(folder.path, "go");
  const checkCommand = `for f in *.txt; do head -n1 "$f" | grep -qx ok || { echo "$f is not ok"; exit 1; }; done; echo checked`;
  writeFileSync(join(folder.path, "config.json"), JSON.stringify({ projects: [{ id: "repo", root: repo, checkCommand }] }));
  rig = new ServeRig(join(folder.path, "state"), "resolver-restart-test");
});
afterEach(async () => {
  await rig.close();
  folder.remove();
});

function serve(): Promise<ServedLoom> {
  return rig.start({ args: ["--config", join(folder.path, "config.json")] });
}

const queueOf = (client: LoomMcpClient, threadId: string) => client.ok<MergeQueueOutput>("t3_merge_queue", { threadId });

async function mergeIntoParent(served: ServedLoom, threadId: string, body: Record<string, unknown>): Promise<MergeIntoParentOutput> {
  const res = await fetch(`${served.serve.url}/api/orchestration/threads/${encodeURIComponent(threadId)}/merge-into-parent`, {
    method: "POST",
    headers: { authorization: `Bearer ${served.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as MergeIntoParentOutput;
}

describe("a restart while a resolver works on a merge", () => {
  it("keeps the entry waiting on its resolver, and merges the resolver's branch once it ends", async () => {
    const first = await serve();
    const task = (content: string) => script({ write: { path: "a.txt", content } }, { say: "done" });
    const parent = await first.client.ok<{ threadId: string }>("t3_thread_launch", {
      projectId: "repo",
      title: "Queue parent",
      message: script(
        { call: "delegate_task", args: { task: task("ok\nfrom a\n"), title: "Child a", isolation: "worktree", clientRequestId: "a" } },
        { call: "delegate_task", args: { task: task("ok\nfrom c\n"), title: "Child c", isolation: "worktree", clientRequestId: "c" } },
        { say: "delegated" },
      ),
    });
    const listed = await pollUntil(
      () => first.client.ok<ThreadListOutput>("t3_thread_list", { includeSubagents: true, limit: 25 }),
      (list) => list.threads.filter((thread) => thread.parentThreadId === parent.threadId && thread.status === "completed").length === 2,
      "both worktree children done",
      60_000,
    );
    await pollUntil(
      () => first.client.ok<{ runs: { status: string }[] }>("t3_thread_read", { threadId: parent.threadId, view: "activity" }),
      (read) => read.runs.length >= 3 && read.runs.every((run) => run.status === "completed"),
      "the parent idle",
      60_000,
    );
    const [a, c] = ["Child a", "Child c"].map((title) => listed.threads.find((thread) => thread.parentThreadId === parent.threadId && thread.title === title)!.threadId) as [string, string];
    expect((await mergeIntoParent(first, a, {})).outcome).toBe("fast_forward");
    const head = gitSync(repo, "rev-parse", "HEAD");

    // The resolver waits for the gate, then writes both sides: it is cut off by the kill, and runs again once resumed.
    const resolve = `while [ ! -f '${gate}' ]; do sleep 0.05; done; printf 'ok\\nfrom a\\nfrom c\\n' > a.txt`;
    const handed = await mergeIntoParent(first, c, { onRefused: "resolver", resolver: { providerInstanceId: "scripted", instructions: script({ run: resolve }, { say: "resolved" }) } });
    expect(handed).toMatchObject({ outcome: "handed_to_resolver", commit: head });
    await pollUntil(
      () => first.client.ok<{ runs: { status: string }[] }>("t3_thread_read", { threadId: handed.resolver!.threadId, view: "activity" }),
      (read) => read.runs.some((run) => run.status === "running"),
      "the resolver running",
      30_000,
    );

    first.serve.child.kill("SIGKILL");
    await waitForExit(first.serve.child);
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(head);

    const second = await serve();
    const waiting = await queueOf(second.client, parent.threadId);
    expect(waiting.entries.map((entry) => [entry.childThreadId, entry.status, entry.resolverStatus])).toEqual([
      [a, "merged", null],
      [c, "resolving", "running"],
    ]);
    writeFileSync(gate, "");
    const ended = await pollUntil(() => queueOf(second.client, parent.threadId), (q) => q.open === 0, "the resolved entry merged", 60_000);
    expect(ended.entries[1]).toMatchObject({ childThreadId: c, status: "merged", resolverThreadId: handed.resolver!.threadId, resolverStatus: "resolved", check: { exitCode: 0 } });
    expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("ok\nfrom a\nfrom c\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");
  }, 180_000);
});
