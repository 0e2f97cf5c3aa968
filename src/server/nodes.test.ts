import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { NodesReport } from "../api/nodeRoutes.js";
import { NODE_LOST_NOTICE } from "../engine/nodeTakeover.js";
import { resumeNotice } from "../core/run/crashResume.js";
import { childScript } from "../testkit/delegationHarness.js";
import { StoredCredentialRegistry } from "../mcp/storedCredentials.js";
import { PostgresCredentialStore } from "../store/credentials/postgresCredentialStore.js";
import { script } from "../testkit/loomHarness.js";
import { type ServeProcess, spawnServe, waitForExit } from "../testkit/loomProcess.js";
import { LoomMcpClient } from "../testkit/mcpClient.js";
import { pollUntil } from "../testkit/poll.js";
import { usePostgresDatabase } from "../testkit/postgresTestCluster.js";

/**
 * Three real `loom serve --database` processes on one PostgreSQL test
 * cluster (docs/postgres.md): calls spread across the nodes, tokens checked
 * on every node, and a node killed with SIGKILL mid-run whose run ends
 * node_lost within the lease while another node carries on.
 */

/** Long enough that a node starved on a loaded machine is not declared lost by mistake. */
const LEASE_MS = 5_000;
const database = usePostgresDatabase();

interface ReadResult {
  thread: { status: string; activeRunId: string | null };
  runs: { runId: string; status: string; endReason: string | null }[];
  items: { type: string; runId: string | null; text: string }[];
}

interface TaskResult {
  taskId: string;
  childThreadId: string;
  childRunId: string;
  status: string;
  workState: string;
  latestTerminalStatus: string | null;
}

interface Node {
  readonly serve: ServeProcess;
  readonly client: LoomMcpClient;
  readonly token: string;
  readonly stateDir: string;
}

let dir: string;
const nodes: Node[] = [];
let schemaCount = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "loom-nodes-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  for (const node of nodes.splice(0)) {
    await node.client.close().catch(() => undefined);
    if (node.serve.child.exitCode === null && node.serve.child.signalCode === null) node.serve.child.kill("SIGTERM");
    await waitForExit(node.serve.child);
  }
});

/** Three nodes on a fresh schema of the test database. */
async function startNodes(): Promise<{ nodes: Node[]; url: string; schema: string }> {
  schemaCount += 1;
  const schema = `nodes_${process.pid}_${schemaCount}`;
  const url = database().url;
  for (const name of ["a", "b", "c"]) {
    const stateDir = join(dir, `${schema}-${name}`);
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, "config.json"), JSON.stringify({ projects: [{ id: "default", root: dir }], database: { schema }, nodes: { heartbeatMs: 200, leaseMs: LEASE_MS } }));
    // One at a time: the first node migrates the schema and records the shared environment id.
    const serve = await spawnServe(["--port", "0", "--state-dir", stateDir, "--database", url]);
    const token = readFileSync(join(stateDir, "owner-token"), "utf8").trim();
    const client = await LoomMcpClient.connect(`${serve.url}/mcp`, token, `node-${name}`);
    nodes.push({ serve, client, token, stateDir });
  }
  return { nodes, url, schema };
}

function read(node: Node, threadId: string, done: (result: ReadResult) => boolean, timeoutMs?: number): Promise<ReadResult> {
  return pollUntil(() => node.client.ok<ReadResult>("t3_thread_read", { threadId, view: "activity" }), done, `thread ${threadId} on ${node.serve.url}`, timeoutMs);
}

async function nodesReport(node: Node): Promise<NodesReport> {
  const response = await fetch(`${node.serve.url}/api/nodes`, { headers: { authorization: `Bearer ${node.token}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as NodesReport;
}

// Three server processes start per test: minutes on a loaded machine, which a speed test would not tolerate but these do.
describe("three nodes on one database", { timeout: 120_000 }, () => {
  it("serves any thread from any node: launched on A, waited on from B, interrupted from C", async () => {
    const [a, b, c] = (await startNodes()).nodes as [Node, Node, Node];
    const quick = await a.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Quick", message: "hello from A" });
    const waited = await b.client.ok<{ status: string; result: string | null }>("t3_thread_wait", { threadId: quick.threadId, runId: quick.runId, timeoutMs: 10_000 });
    expect(waited).toMatchObject({ status: "completed", result: "Echo: hello from A" });

    const slow = await a.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Slow", message: script({ sleep: 30_000 }, { say: "never" }) });
    await read(b, slow.threadId, (r) => r.runs[0]?.status === "running");
    await c.client.ok("t3_thread_interrupt", { threadId: slow.threadId, runId: slow.runId });
    const ended = await b.client.ok<{ status: string }>("t3_thread_wait", { threadId: slow.threadId, runId: slow.runId, timeoutMs: 10_000 });
    expect(ended.status).toBe("interrupted");
    const onC = await read(c, slow.threadId, (r) => r.thread.activeRunId === null);
    expect(onC.items.some((item) => item.type === "assistant_message" && item.text === "never")).toBe(false);

    // The same thread takes new work from any node, on the one node its session lives on.
    const sent = await c.client.ok<{ runId: string }>("t3_thread_send", { threadId: slow.threadId, message: "again" });
    expect(await a.client.ok("t3_thread_wait", { threadId: slow.threadId, runId: sent.runId, timeoutMs: 10_000 })).toMatchObject({ status: "completed", result: "Echo: again" });

    const report = await nodesReport(b);
    expect(report.nodes.filter((node) => node.status === "live")).toHaveLength(3);
    expect(report.nodes.every((node) => node.heartbeatAgeMs < LEASE_MS)).toBe(true);
  });

  it("runs a delegation across nodes: started on A, waited on from B, cancelled from C", async () => {
    const [a, b, c] = (await startNodes()).nodes as [Node, Node, Node];
    // The parent delegates a child that would speak after 30 s, and answers with the task id.
    const child = script({ sleep: 30_000 }, { say: "never" });
    const parent = await a.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
      title: "Parent",
      message: script({ call: "delegate_task", args: { task: child }, as: "t" }, { say: "{{t.taskId}}" }),
    });
    const delegated = await b.client.ok<{ status: string; result: string }>("t3_thread_wait", { threadId: parent.threadId, runId: parent.runId, timeoutMs: 20_000 });
    expect(delegated.status).toBe("completed");
    const taskId = delegated.result;
    const running = await pollUntil(
      () => b.client.ok<TaskResult>("task_status", { taskId }),
      (task) => task.status === "running" && task.childRunId !== null,
      `task ${taskId} running, seen from B`,
    );
    await read(b, running.childThreadId, (r) => r.runs[0]?.status === "running");

    // B waits on the child's run while C cancels the task.
    const waiting = b.client.ok<{ status: string }>("t3_thread_wait", { threadId: running.childThreadId, runId: running.childRunId, timeoutMs: 20_000 });
    const cancelled = await c.client.ok<TaskResult & { cancelReason: string | null }>("task_cancel", { taskId, reason: "cancelled from C" });
    expect(cancelled).toMatchObject({ taskId, cancelReason: "cancelled from C" });
    expect((await waiting).status).toBe("interrupted");

    // Every node reads the same settled task from the shared log.
    for (const node of [a, b, c]) {
      const settled = await pollUntil(() => node.client.ok<TaskResult>("task_status", { taskId }), (task) => task.workState === "result_available", `task ${taskId} settled on ${node.serve.url}`);
      expect(settled).toMatchObject({ status: "interrupted", childRunId: running.childRunId, latestTerminalStatus: "interrupted" });
    }
    const childThread = await read(a, running.childThreadId, (r) => r.thread.activeRunId === null);
    expect(childThread.runs).toEqual([expect.objectContaining({ runId: running.childRunId, status: "interrupted", endReason: "interrupted_by_user" })]);
    expect(childThread.items.some((item) => item.text === "never")).toBe(false);
    // A cancelled task wakes nobody: the parent ran its one turn only.
    const parentThread = await read(c, parent.threadId, (r) => r.thread.activeRunId === null);
    expect(parentThread.runs.map((run) => [run.runId, run.status])).toEqual([[parent.runId, "completed"]]);
  });

  it("refuses a wrong or revoked token on every node, and accepts a live one on every node", async () => {
    const { nodes: started, url, schema } = await startNodes();
    const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}` });
    try {
      const registry = new StoredCredentialRegistry({ store: new PostgresCredentialStore(pool), environmentId: "env:test", nodeId: "test" });
      const launched = await started[0]!.client.ok<{ threadId: string }>("t3_thread_launch", { title: "Scoped", message: "hi" });
      const issued = await registry.issue({ environmentId: "env:test", threadId: launched.threadId, providerInstanceId: "scripted", providerSessionId: "provider-session:test" });
      for (const node of started) {
        const client = await LoomMcpClient.connect(`${node.serve.url}/mcp`, issued.token, "scoped");
        await client.close();
        await expect(LoomMcpClient.connect(`${node.serve.url}/mcp`, `wrong-${issued.token}`, "wrong")).rejects.toThrow(/401|unknown bearer token/);
      }
      expect(await registry.revoke(issued.credentialId)).toBe(true);
      for (const node of started) {
        await expect(LoomMcpClient.connect(`${node.serve.url}/mcp`, issued.token, "revoked")).rejects.toThrow(/401|revoked/);
      }
      // No raw token is stored: only its hash.
      const stored = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM loom_credentials WHERE token_hash = $1 OR scope::text LIKE $2", [issued.token, `%${issued.token}%`]);
      expect(stored.rows[0]!.n).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it("ends a killed node's runs node_lost within the lease and carries on from another node", async () => {
    const started = (await startNodes()).nodes;
    const launched = await started[0]!.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", { title: "Doomed", message: script({ sleep: 30_000 }, { say: "never" }) });
    await read(started[0]!, launched.threadId, (r) => r.runs[0]?.status === "running");
    // Whichever node claimed the run holds its agent's session.
    const before = await pollUntil(() => nodesReport(started[0]!), (r) => r.nodes.some((n) => n.sessions.some((s) => s.threadId === launched.threadId)), "the run's session");
    const holderId = before.nodes.find((n) => n.sessions.some((s) => s.threadId === launched.threadId))!.nodeId;
    const holder = started.find((node) => holderId.startsWith(`loom:${node.serve.child.pid}:`))!;
    const survivor = started.find((node) => node !== holder)!;

    holder.serve.child.kill("SIGKILL");
    expect((await waitForExit(holder.serve.child)).signal).toBe("SIGKILL");
    const lost = await read(survivor, launched.threadId, (r) => r.runs[0]?.status === "interrupted", LEASE_MS + 10_000);
    expect(lost.runs[0]).toMatchObject({ runId: launched.runId, status: "interrupted", endReason: "node_lost" });
    expect(lost.items.filter((item) => item.type === "system_notice" && item.text === NODE_LOST_NOTICE)).toHaveLength(1);

    const report = await nodesReport(survivor);
    expect(report.nodes.find((n) => n.nodeId === holderId)).toMatchObject({ status: "lost", sessions: [], leases: [] });

    // Another node carries the thread on, once.
    const sent = await survivor.client.ok<{ runId: string }>("t3_thread_send", { threadId: launched.threadId, message: "after the node died" });
    expect(await survivor.client.ok("t3_thread_wait", { threadId: launched.threadId, runId: sent.runId, timeoutMs: 10_000 })).toMatchObject({ status: "completed", result: "Echo: after the node died" });
    const final = await read(survivor, launched.threadId, (r) => r.thread.activeRunId === null);
    expect(final.runs.map((r) => [r.runId, r.status])).toEqual([
      [launched.runId, "interrupted"],
      [sent.runId, "completed"],
    ]);
    expect(final.items.filter((item) => item.type === "system_notice" && item.text === NODE_LOST_NOTICE)).toHaveLength(1);
  });

  it("resumes a killed node's delegated child on a live node, and the task completes once", async () => {
    const started = (await startNodes()).nodes;
    const marker = join(dir, `resume-marker-${schemaCount}`);
    const command = `if [ -f ${marker} ]; then echo second; else touch ${marker}; sleep 60; fi`;
    const parent = await started[0]!.client.ok<{ threadId: string; runId: string }>("t3_thread_launch", {
      title: "Parent",
      message: script({ call: "delegate_task", args: { task: childScript({ run: command }, { say: "done" }) }, as: "t" }, { say: "{{t.taskId}}" }),
    });
    const taskId = (await started[0]!.client.ok<{ result: string }>("t3_thread_wait", { threadId: parent.threadId, runId: parent.runId, timeoutMs: 10_000 })).result;
    const running = await pollUntil(() => started[0]!.client.ok<TaskResult>("task_status", { taskId }), (task) => task.status === "running", "the task to run");
    await pollUntil(() => Promise.resolve(existsSync(marker)), (made) => made, "the child's command to start");
    const before = await pollUntil(() => nodesReport(started[0]!), (r) => r.nodes.some((n) => n.sessions.some((s) => s.threadId === running.childThreadId)), "the child's session");
    const holderId = before.nodes.find((n) => n.sessions.some((s) => s.threadId === running.childThreadId))!.nodeId;
    const holder = started.find((node) => holderId.startsWith(`loom:${node.serve.child.pid}:`))!;
    const survivor = started.find((node) => node !== holder)!;

    holder.serve.child.kill("SIGKILL");
    expect((await waitForExit(holder.serve.child)).signal).toBe("SIGKILL");
    const done = await pollUntil(() => survivor.client.ok<TaskResult>("task_status", { taskId }), (task) => task.status === "completed", "the resumed task to complete", LEASE_MS + 20_000);
    expect(done).toMatchObject({ childRunId: running.childRunId, latestTerminalStatus: "completed" });
    const child = await read(survivor, running.childThreadId, (r) => r.thread.activeRunId === null);
    expect(child.runs).toEqual([expect.objectContaining({ runId: running.childRunId, status: "completed" })]);
    expect(child.items.filter((item) => item.type === "system_notice").map((item) => item.text)).toEqual([resumeNotice("node_lost", 1)]);
    // The resumed attempt ran on a live node: the session that carried it is on one of the survivors.
    const after = await nodesReport(survivor);
    expect(after.nodes.find((n) => n.nodeId === holderId)).toMatchObject({ status: "lost", sessions: [] });
    const parentRead = await read(survivor, parent.threadId, (r) => r.thread.activeRunId === null && r.items.some((item) => item.type === "notification" && item.text.includes(`taskId ${taskId}`)));
    expect(parentRead.items.filter((item) => item.type === "notification" && item.text.includes(`taskId ${taskId}`))).toHaveLength(1);
  });
});
