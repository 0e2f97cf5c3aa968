import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MergeQueueOutput } from "../../contracts/tools/mergeQueueTools.js";
import type { ThreadListOutput } from "../../contracts/tools/threadTools.js";
import { gitSync, initRepo, tempDir } from "../../testkit/gitRepo.js";
import { script } from "../../testkit/loomHarness.js";
import { type ServeProcess, spawnServe, waitForExit } from "../../testkit/loomProcess.js";
import { LoomMcpClient } from "../../testkit/mcpClient.js";
import { pollUntil } from "../../testkit/poll.js";
import { usePostgresDatabase } from "../../testkit/postgresTestCluster.js";

/**
 * One queue owner across PostgreSQL nodes, and a node lost mid-merge: two
 * real `loom serve --database` processes on one schema and one repository.
 * The node whose outbox leased the queue's merge is killed (SIGKILL) while
 * the merge's check runs; once the lease lapses the other node begins the
 * same entry again (attempt 2) and merges it: the entry is neither lost nor
 * merged twice, and the parent moves once.
 */

const database = usePostgresDatabase();
const schema = `merge_queue_nodes_${process.pid}`;

interface Node {
  readonly serve: ServeProcess;
  readonly client: LoomMcpClient;
  readonly token: string;
}

let folder: ReturnType<typeof tempDir>;
let repo: string;
let gate: string;
let started: string;
let pool: pg.Pool;
const nodes: Node[] = [];

beforeAll(async () => {
  folder = tempDir("merge-queue-nodes");
  repo = join(folder.path, "repo");
  initRepo(repo, { "README.md": "hello\n", "base.txt": "ok\n" });
  gate = join(folder.path, "go");
  started = join(folder.path, "started");
  // The check holds until the test lets it go, on whichever node runs it.
  const checkCommand = `touch '${started}'; while [ ! -f '${gate}' ]; do sleep 0.05; done; for f in *.txt; do head -n1 "$f" | grep -qx ok || exit 1; done; echo checked`;
  for (const name of ["a", "b"]) {
    const stateDir = join(folder.path, name);
    mkdirSync(stateDir);
    writeFileSync(
      join(stateDir, "config.json"),
      JSON.stringify({ projects: [{ id: "repo", root: repo, checkCommand }], database: { schema }, nodes: { heartbeatMs: 200, leaseMs: 3_000 } }),
    );
    const serve = await spawnServe(["--port", "0", "--state-dir", stateDir, "--database", database().url]);
    const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
    nodes.push({ serve, token, client: await LoomMcpClient.connect(`${serve.url}/mcp`, token, `owner-${name}`) });
  }
  pool = new pg.Pool({ connectionString: database().url, options: `-c search_path=${schema}` });
}, 120_000);
afterAll(async () => {
  await pool?.end();
  for (const node of nodes.splice(0)) {
    await node.client.close().catch(() => undefined);
    if (node.serve.child.exitCode === null && node.serve.child.signalCode === null) node.serve.child.kill("SIGTERM");
    await waitForExit(node.serve.child);
  }
  folder.remove();
}, 60_000);

describe("the merge queue across PostgreSQL nodes", () => {
  it("is run by one node at a time, and a node lost mid-merge leaves the entry to the other, which merges it once", async () => {
    const [a] = nodes as [Node, Node];
    const parent = await a.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
      projectId: "repo",
      title: "Queue parent",
      message: script(
        { call: "delegate_task", args: { task: script({ write: { path: "x.txt", content: "ok\nfrom x\n" } }, { say: "done" }), isolation: "worktree", clientRequestId: "x" } },
        { say: "delegated" },
      ),
    });
    const listed = await pollUntil(
      () => a.client.ok<ThreadListOutput>("t3_thread_list", { includeSubagents: true, limit: 25 }),
      (list) => list.threads.some((thread) => thread.parentThreadId === parent.threadId && thread.status === "completed"),
      "the worktree child done",
      60_000,
    );
    const child = listed.threads.find((thread) => thread.parentThreadId === parent.threadId)!.threadId;
    // The parent's follow-up run (its child's result) ends before its checkout is merged into.
    await pollUntil(
      () => a.client.ok<{ runs: { status: string }[] }>("t3_thread_read", { threadId: parent.threadId, view: "activity" }),
      (read) => read.runs.length >= 2 && read.runs.every((run) => run.status === "completed"),
      "the parent idle",
      60_000,
    );
    const head = gitSync(repo, "rev-parse", "HEAD");

    // Asked for through node A; whichever node's outbox leases the merge runs it.
    const asked = fetch(`${a.serve.url}/api/orchestration/threads/${encodeURIComponent(child)}/merge-into-parent`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.token}`, "content-type": "application/json" },
      body: "{}",
    }).catch(() => null);
    await pollUntil(() => existsSync(started), Boolean, "the check running", 30_000);
    const leased = await pool.query<{ lease_owner: string }>("SELECT lease_owner FROM outbox WHERE kind = 'merge-queue.merge' AND status = 'leased'");
    expect(leased.rows).toHaveLength(1);
    const owner = leased.rows[0]!.lease_owner;
    const holder = nodes.find((node) => owner.startsWith(`loom:${node.serve.child.pid}:`))!;
    const survivor = nodes.find((node) => node !== holder)!;
    holder.serve.child.kill("SIGKILL");
    await waitForExit(holder.serve.child);

    // The survivor claims the lapsed lease and begins the entry again.
    const queue = () => survivor.client.ok<MergeQueueOutput>("t3_merge_queue", { threadId: parent.threadId });
    const again = await pollUntil(queue, (answer) => answer.entries[0]?.attempts === 2, "the entry begun again on the other node", 30_000);
    expect(again.entries).toHaveLength(1);
    expect(again.entries[0]).toMatchObject({ status: "merging", childThreadId: child });
    expect(again.entries[0]!.log.at(-1)).toContain("merging again (attempt 2)");
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(head);

    writeFileSync(gate, "");
    const ended = await pollUntil(queue, (answer) => answer.open === 0, "the entry merged", 30_000);
    expect(ended.entries).toHaveLength(1);
    expect(ended.entries[0]).toMatchObject({ status: "merged", attempts: 2, outcome: "fast_forward", files: ["x.txt"], check: { exitCode: 0 } });
    // The parent moved once, fast-forward to the child's work: no merge commit of a second merge.
    expect(gitSync(repo, "rev-parse", "HEAD")).toBe(ended.entries[0]!.commit);
    expect(gitSync(repo, "rev-list", "--merges", "--count", `${head}..HEAD`)).toBe("0");
    expect(readFileSync(join(repo, "x.txt"), "utf8")).toBe("ok\nfrom x\n");
    const rows = await pool.query<{ status: string }>("SELECT status FROM outbox WHERE kind = 'merge-queue.merge'");
    expect(rows.rows.map((row) => row.status)).toEqual(["done"]);
    await asked;
  }, 120_000);
});
