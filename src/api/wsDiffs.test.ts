import { afterEach, describe, expect, it } from "vitest";
import type { LoomWsClient } from "../client/loomWsClient.js";
import { WireError } from "../client/wireErrors.js";
import type { ThreadDiffOutput } from "../contracts/workspaceQueries.js";
import { script } from "../testkit/loomHarness.js";
import { wsClient } from "../testkit/wireClients.js";
import { type RepoHarness, ownerApi, startRepoHarness, waitForCheckpoint } from "../testkit/workspaceHarness.js";
import { DIFF_TRUNCATION_MARKER } from "../workspaces/diffs.js";

/**
 * The workspace wire methods (getTurnDiff, getFullThreadDiff,
 * getWorktreeThreadIds) over a real WebSocket to the real server on real git
 * repositories: the scripted agent writes files, Loom checkpoints each turn,
 * and the wire answers what the HTTP API answers, failures included.
 */

let env: RepoHarness | null = null;
let client: LoomWsClient | null = null;
afterEach(async () => {
  await client?.close();
  client = null;
  await env?.close();
  env = null;
});

async function failure(promise: Promise<unknown>): Promise<WireError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof WireError)) throw new Error(`expected a WireError, got ${String(error)}`);
  return error;
}

describe("workspace methods over the WebSocket", () => {
  it("getTurnDiff and getFullThreadDiff: a turn's changes and the whole thread's, bounded, the same as over HTTP", async () => {
    env = await startRepoHarness({ files: { "README.md": "hello\n" } });
    const { h } = env;
    client = await wsClient(h);
    const launched = await h.launch({ projectId: "repo", message: script({ write: { path: "first.txt", content: "one\n" } }) });
    await waitForCheckpoint(h, launched.threadId, launched.runId!, "turn_end");
    const second = await h.owner.ok<{ runId: string }>("t3_thread_send", {
      threadId: launched.threadId,
      message: script({ write: { path: "second.txt", content: "two\n" } }, { write: { path: "README.md", content: "hello\nagain\n" } }),
    });
    await waitForCheckpoint(h, launched.threadId, second.runId, "turn_end");

    const first = await client.request("orchestration.getTurnDiff", { threadId: launched.threadId, runId: launched.runId! });
    expect(first).toMatchObject({ threadId: launched.threadId, runId: launched.runId, truncated: false, omittedFiles: [] });
    expect(first.toCheckpointId).not.toBeNull();
    expect(first.files.map((f) => [f.path, f.kind, f.additions])).toEqual([["first.txt", "added", 1]]);
    expect(first.patch).toContain("+++ b/first.txt\n@@ -0,0 +1 @@\n+one\n");
    // Without a runId: the latest turn.
    const latest = await client.request("orchestration.getTurnDiff", { threadId: launched.threadId });
    expect(latest.runId).toBe(second.runId);
    expect(latest.files.map((f) => f.path)).toEqual(["README.md", "second.txt"]);

    const full = await client.request("orchestration.getFullThreadDiff", { threadId: launched.threadId });
    expect(full).toMatchObject({ runId: null, toCheckpointId: null, toCommit: null });
    expect(full.files.map((f) => [f.path, f.kind])).toEqual([
      ["README.md", "modified"],
      ["first.txt", "added"],
      ["second.txt", "added"],
    ]);
    const overHttp = await ownerApi<ThreadDiffOutput>(h, `/api/orchestration/threads/${encodeURIComponent(launched.threadId)}/full-diff`);
    expect(full).toEqual(overHttp.body);

    const cut = await client.request("orchestration.getFullThreadDiff", { threadId: launched.threadId, maxBytes: 200 });
    expect(cut.truncated).toBe(true);
    expect(cut.patch).toContain(DIFF_TRUNCATION_MARKER);
    expect(cut.omittedFiles.length).toBeGreaterThan(0);
    expect(cut.files).toHaveLength(3);

    // Compacted ids expand back to the same answer.
    const compact = await client.request("orchestration.getTurnDiff", { threadId: launched.threadId, runId: launched.runId! }, { compactIds: true });
    expect(compact).toEqual(first);

    expect((await failure(client.request("orchestration.getTurnDiff", { threadId: launched.threadId, runId: "run:nope" }))).failure).toMatchObject({ code: "run_not_found", retryable: false });
    expect((await failure(client.request("orchestration.getTurnDiff", { threadId: "thread:nope" }))).failure.code).toBe("thread_not_found");
    expect((await failure(client.request("orchestration.getFullThreadDiff", { threadId: "thread:nope" }))).failure.code).toBe("thread_not_found");
    expect((await failure(client.request("orchestration.getFullThreadDiff", { threadId: launched.threadId, maxBytes: 0 }))).failure.code).toBe("invalid_request");
    expect((await failure(client.request("orchestration.getTurnDiff", { threadId: launched.threadId, nope: 1 } as never))).failure.code).toBe("invalid_request");
  });

  it("a thread whose folder is not a git repository answers workspace_unavailable", async () => {
    env = await startRepoHarness({ plain: true });
    const { h } = env;
    client = await wsClient(h);
    const launched = await h.launch({ projectId: "repo", message: script({ write: { path: "note.txt", content: "hi\n" } }) });
    await waitForCheckpoint(h, launched.threadId, launched.runId!, "turn_end");
    const turn = await failure(client.request("orchestration.getTurnDiff", { threadId: launched.threadId }));
    expect(turn.failure.code).toBe("workspace_unavailable");
    const full = await failure(client.request("orchestration.getFullThreadDiff", { threadId: launched.threadId }));
    expect(full.failure.code).toBe("workspace_unavailable");
  });

  it("getWorktreeThreadIds: the threads sharing the project checkout, and a worktree thread alone in its own", async () => {
    env = await startRepoHarness();
    const { h, repo } = env;
    client = await wsClient(h);
    const shared = await h.launch({ projectId: "repo", message: script({ say: "in the checkout" }) });
    await h.waitForEnd(shared.runId!);
    const isolated = await h.owner.ok<{ threadId: string; runId: string; worktreePath: string }>("t3_thread_launch", {
      projectId: "repo",
      workspaceStrategy: "worktree",
      message: script({ write: { path: "made.txt", content: "here\n" } }),
    });
    await h.waitForEnd(isolated.runId);

    const inRepo = await client.request("orchestration.getWorktreeThreadIds", { worktreePath: repo });
    expect(inRepo.threadIds).toEqual([shared.threadId]);
    const inOwn = await client.request("orchestration.getWorktreeThreadIds", { worktreePath: isolated.worktreePath });
    expect(inOwn).toEqual({ worktreePath: isolated.worktreePath, threadIds: [isolated.threadId] });
    const overHttp = await ownerApi(h, `/api/orchestration/worktree-thread-ids?worktreePath=${encodeURIComponent(isolated.worktreePath)}`);
    expect(inOwn).toEqual(overHttp.body);
    const elsewhere = await client.request("orchestration.getWorktreeThreadIds", { worktreePath: `${repo}-nowhere` });
    expect(elsewhere.threadIds).toEqual([]);
    expect((await failure(client.request("orchestration.getWorktreeThreadIds", { worktreePath: "" }))).failure.code).toBe("invalid_request");
  });
});
