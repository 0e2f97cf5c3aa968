import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MergeQueueOutput } from "../../contracts/tools/mergeQueueTools.js";
import type { ThreadListOutput } from "../../contracts/tools/threadTools.js";
import { gitSync, initRepo, tempDir } from "../../testkit/gitRepo.js";
import { script } from "../../testkit/loomHarness.js";
import { processAlive, waitForExit } from "../../testkit/loomProcess.js";
import type { LoomMcpClient } from "../../testkit/mcpClient.js";
import { pollUntil } from "../../testkit/poll.js";
import { type ServedLoom, ServeRig } from "../../testkit/serveRig.js";

/**
 * kill -9 the built `loom serve` (SQLite) while the first of two queued
 * merges runs its check, and restart on the same state dir: the merging
 * entry is begun again (attempt 2) as the server starts, after the check
 * the killed server left running was stopped; the queued one behind it is
 * still there, and both land, in order.
 */

let folder: ReturnType<typeof tempDir>;
let repo: string;
let gate: string;
let started: string;
let pids: string;
let rig: ServeRig;

beforeEach(() => {
  folder = tempDir("merge-queue-restart");
  repo = join(folder.path, "repo");
  initRepo(repo, { "README.md": "hello\n", "base.txt": "ok\n" });
  gate = join(folder.path, "go");
  started = join(folder.path, "started");
  pids = join(folder.path, "check.pids");
  // Only the first merge (the one bringing x.txt first) holds its check until the test lets it go; each such check notes its shell's pid.
  const checkCommand = `if [ -f x.txt ] && [ ! -f y.txt ]; then echo $$ >> '${pids}'; touch '${started}'; while [ ! -f '${gate}' ]; do sleep 0.05; done; fi; echo checked`;
  writeFileSync(join(folder.path, "config.json"), JSON.stringify({ projects: [{ id: "repo", root: repo, checkCommand }] }));
  rig = new ServeRig(join(folder.path, "state"), "merge-queue-restart-test");
});
afterEach(async () => {
  await rig.close();
  folder.remove();
});

function serve(): Promise<ServedLoom> {
  return rig.start({ args: ["--config", join(folder.path, "config.json")] });
}

const checkPids = () => (existsSync(pids) ? readFileSync(pids, "utf8").trim().split("\n").filter(Boolean).map(Number) : []);

const queueOf = (client: LoomMcpClient, threadId: string) => client.ok<MergeQueueOutput>("t3_merge_queue", { threadId });

describe("a restart in the middle of the merge queue", () => {
  it("begins the cut-short merge again and then merges the entry queued behind it", async () => {
    const first = await serve();
    const task = (path: string) => script({ write: { path, content: `ok\nfrom ${path}\n` } }, { say: "done" });
    const parent = await first.client.ok<{ threadId: string }>("t3_thread_launch", {
      projectId: "repo",
      title: "Queue parent",
      message: script(
        { call: "delegate_task", args: { task: task("x.txt"), title: "Child x", isolation: "worktree", clientRequestId: "x" } },
        { call: "delegate_task", args: { task: task("y.txt"), title: "Child y", isolation: "worktree", clientRequestId: "y" } },
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
    const children = listed.threads.filter((thread) => thread.parentThreadId === parent.threadId);
    const order = ["Child x", "Child y"].map((title) => children.find((thread) => thread.title === title)!.threadId);
    const head = gitSync(repo, "rev-parse", "HEAD");
    const ask = (threadId: string) =>
      fetch(`${first.serve.url}/api/orchestration/threads/${encodeURIComponent(threadId)}/merge-into-parent`, {
        method: "POST",
        headers: { authorization: `Bearer ${first.token}`, "content-type": "application/json" },
        body: "{}",
      }).catch(() => null);
    const asked = [ask(order[0]!)];
    await pollUntil(() => queueOf(first.client, parent.threadId), (q) => q.entries.length === 1, "the first entry queued");
    asked.push(ask(order[1]!));
    await pollUntil(() => queueOf(first.client, parent.threadId), (q) => q.entries.length === 2, "the second entry queued");
    await pollUntil(() => existsSync(started), Boolean, "the first check running", 30_000);
    const before = await queueOf(first.client, parent.threadId);
    expect(before.entries.map((entry) => entry.status)).toEqual(["merging", "queued"]);

    const [orphan] = checkPids();
    expect(orphan).toBeDefined();
    first.serve.child.kill("SIGKILL");
    await waitForExit(first.serve.child);
    await Promise.all(asked);
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(head);
    // The check runs in its own process group, so it outlives the killed server.
    expect(processAlive(orphan!)).toBe(true);

    const second = await serve();
    const resumed = await pollUntil(() => queueOf(second.client, parent.threadId), (q) => q.entries[0]?.attempts === 2, "the cut-short merge begun again", 30_000);
    expect(resumed.entries.map((entry) => entry.status)).toEqual(["merging", "queued"]);
    expect(resumed.entries[0]!.log.at(-1)).toContain("merging again (attempt 2)");
    // The check the killed server left running in the scratch worktree was stopped as the server started, before its merge began again.
    expect(second.serve.stderr()).toContain("1 setup or check command(s) stopped");
    await pollUntil(() => processAlive(orphan!), (running) => !running, "the orphaned check to be stopped", 15_000);
    await pollUntil(() => checkPids().length, (count) => count === 2, "the cut-short merge's check running again", 30_000);
    writeFileSync(gate, "");
    const ended = await pollUntil(() => queueOf(second.client, parent.threadId), (q) => q.open === 0, "both merged", 30_000);
    expect(ended.entries.map((entry) => [entry.childThreadId, entry.status, entry.attempts])).toEqual([
      [order[0], "merged", 2],
      [order[1], "merged", 1],
    ]);
    expect(readFileSync(join(repo, "x.txt"), "utf8")).toBe("ok\nfrom x.txt\n");
    expect(readFileSync(join(repo, "y.txt"), "utf8")).toBe("ok\nfrom y.txt\n");
    expect(gitSync(repo, "status", "--porcelain")).toBe("");
  }, 120_000);
});
